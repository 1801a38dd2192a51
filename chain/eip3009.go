package chain

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/tokensig"
)

// What the service reads of and sends to a token that takes signatures instead of its holders'
// gas (EIP-3009, EIP-2612): its EIP-712 domain as the contract states it, whether an
// authorization's nonce is spent, and transferWithAuthorization's calldata.

var eip3009ABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
 {"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"version","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"DOMAIN_SEPARATOR","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"bytes32"}]},
 {"type":"function","name":"authorizationState","stateMutability":"view","inputs":[{"name":"authorizer","type":"address"},{"name":"nonce","type":"bytes32"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"transferWithAuthorization","stateMutability":"nonpayable","inputs":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"},{"name":"validAfter","type":"uint256"},{"name":"validBefore","type":"uint256"},{"name":"nonce","type":"bytes32"},{"name":"v","type":"uint8"},{"name":"r","type":"bytes32"},{"name":"s","type":"bytes32"}],"outputs":[]}
]`))
	if err != nil {
		panic(err)
	}
	return a
}()

func call3009(ctx context.Context, c ethereum.ContractCaller, token common.Address, method string, args ...any) ([]any, error) {
	data, err := eip3009ABI.Pack(method, args...)
	if err != nil {
		return nil, err
	}
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
	if err != nil {
		return nil, err
	}
	return eip3009ABI.Unpack(method, out)
}

// TokenDomain is a token's EIP-712 domain as its contract states it: name() and version()
// (FiatToken v2; "1" when a token has no version(), as OpenZeppelin's ERC20Permit), checked
// against its own DOMAIN_SEPARATOR() — a signature in any other domain would only fail on chain.
func TokenDomain(ctx context.Context, c ethereum.ContractCaller, chainID int64, token common.Address) (tokensig.Domain, error) {
	d := tokensig.Domain{Version: "1", ChainID: chainID, Contract: token}
	name, err := call3009(ctx, c, token, "name")
	if err != nil {
		return d, fmt.Errorf("name() of %s: %w", strings.ToLower(token.Hex()), err)
	}
	d.Name = name[0].(string)
	if v, err := call3009(ctx, c, token, "version"); err == nil {
		d.Version = v[0].(string)
	}
	sep, err := call3009(ctx, c, token, "DOMAIN_SEPARATOR")
	if err != nil {
		return d, fmt.Errorf("DOMAIN_SEPARATOR() of %s: %w", strings.ToLower(token.Hex()), err)
	}
	want := sep[0].([32]byte)
	if got := d.Separator(); !bytes.Equal(got[:], want[:]) {
		return d, fmt.Errorf("the EIP-712 domain {%q, %q, %d, %s} does not hash to the token's DOMAIN_SEPARATOR()",
			d.Name, d.Version, d.ChainID, strings.ToLower(token.Hex()))
	}
	return d, nil
}

// AuthorizationUsed reads authorizationState(authorizer, nonce): true once the nonce was used
// or cancelled (EIP-3009).
func AuthorizationUsed(ctx context.Context, c ethereum.ContractCaller, token, authorizer common.Address, nonce common.Hash) (bool, error) {
	out, err := call3009(ctx, c, token, "authorizationState", authorizer, [32]byte(nonce))
	if err != nil {
		return false, fmt.Errorf("authorizationState(%s, %s): %w", strings.ToLower(authorizer.Hex()), nonce.Hex(), err)
	}
	return out[0].(bool), nil
}

// TransferWithAuthorizationCalldata encodes transferWithAuthorization(from, to, value,
// validAfter, validBefore, nonce, v, r, s).
func TransferWithAuthorizationCalldata(a tokensig.Authorization, sig tokensig.Signature) ([]byte, error) {
	zero := func(v *big.Int) *big.Int {
		if v == nil {
			return new(big.Int)
		}
		return v
	}
	return eip3009ABI.Pack("transferWithAuthorization", a.From, a.To, zero(a.Value), zero(a.ValidAfter), zero(a.ValidBefore),
		[32]byte(a.Nonce), sig.V, [32]byte(sig.R), [32]byte(sig.S))
}
