package tokensig_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/tokensig"
)

var domain = tokensig.Domain{Name: "USD Coin", Version: "2", ChainID: 1, Contract: common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")}

// typedData is the message as go-ethereum's signer (a separate EIP-712 implementation, the one
// behind eth_signTypedData_v4) sees it.
func typedData(primary string, fields []apitypes.Type, msg apitypes.TypedDataMessage) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"},
				{Name: "verifyingContract", Type: "address"}},
			primary: fields,
		},
		PrimaryType: primary,
		Domain: apitypes.TypedDataDomain{Name: domain.Name, Version: domain.Version,
			ChainId: math.NewHexOrDecimal256(domain.ChainID), VerifyingContract: domain.Contract.Hex()},
		Message: msg,
	}
}

var authFields = []apitypes.Type{{Name: "from", Type: "address"}, {Name: "to", Type: "address"}, {Name: "value", Type: "uint256"},
	{Name: "validAfter", Type: "uint256"}, {Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}}

func TestDigestsMatchAnIndependentEIP712Implementation(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	a := tokensig.Authorization{From: common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"),
		To: common.HexToAddress("0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"), Value: big.NewInt(18_500_000),
		ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(1_900_000_000), Nonce: crypto.Keccak256Hash([]byte("a nonce"))}
	authMsg := func(a tokensig.Authorization) apitypes.TypedDataMessage {
		return apitypes.TypedDataMessage{"from": a.From.Hex(), "to": a.To.Hex(), "value": a.Value.String(),
			"validAfter": a.ValidAfter.String(), "validBefore": a.ValidBefore.String(), "nonce": a.Nonce.Hex()}
	}
	extreme := a
	extreme.Value, extreme.ValidBefore = max, max
	cancel := tokensig.Cancellation{Authorizer: a.From, Nonce: a.Nonce}
	permit := tokensig.Permit{Owner: a.From, Spender: a.To, Value: big.NewInt(7), Nonce: big.NewInt(3), Deadline: big.NewInt(1_900_000_000)}
	receive := a
	receive.Receive = true

	cases := []struct {
		name string
		msg  tokensig.Message
		td   apitypes.TypedData
	}{
		{"transfer", a, typedData("TransferWithAuthorization", authFields, authMsg(a))},
		{"transfer, uint256 max", extreme, typedData("TransferWithAuthorization", authFields, authMsg(extreme))},
		{"receive", receive, typedData("ReceiveWithAuthorization", authFields, authMsg(a))},
		{"cancel", cancel, typedData("CancelAuthorization", []apitypes.Type{{Name: "authorizer", Type: "address"}, {Name: "nonce", Type: "bytes32"}},
			apitypes.TypedDataMessage{"authorizer": cancel.Authorizer.Hex(), "nonce": cancel.Nonce.Hex()})},
		{"permit", permit, typedData("Permit", []apitypes.Type{{Name: "owner", Type: "address"}, {Name: "spender", Type: "address"},
			{Name: "value", Type: "uint256"}, {Name: "nonce", Type: "uint256"}, {Name: "deadline", Type: "uint256"}},
			apitypes.TypedDataMessage{"owner": permit.Owner.Hex(), "spender": permit.Spender.Hex(), "value": "7", "nonce": "3",
				"deadline": "1900000000"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, _, err := apitypes.TypedDataAndHash(c.td)
			require.NoError(t, err)
			assert.Equal(t, common.BytesToHash(want), tokensig.Digest(domain, c.msg))
			sep, err := c.td.HashStruct("EIP712Domain", c.td.Domain.Map())
			require.NoError(t, err)
			assert.Equal(t, common.BytesToHash(sep), domain.Separator())
		})
	}
}

// The well-known mainnet USDC separator (FiatToken v2 on Ethereum, read from the contract's
// DOMAIN_SEPARATOR()): name "USD Coin", version "2", chain 1, at its proxy address.
func TestMainnetUSDCSeparator(t *testing.T) {
	assert.Equal(t, "0x06c37168a7db5138defc7866392bb87a741f9b3d104deb5094588ce041cae335", domain.Separator().Hex())
}

func TestSignAndRecover(t *testing.T) {
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	from := crypto.PubkeyToAddress(key.PublicKey)
	a := tokensig.Authorization{From: from, To: common.Address{1}, Value: big.NewInt(1), ValidAfter: big.NewInt(0),
		ValidBefore: big.NewInt(2), Nonce: common.Hash{2}}
	sig, err := tokensig.Sign(key, domain, a)
	require.NoError(t, err)
	assert.Contains(t, []uint8{27, 28}, sig.V)
	got, err := tokensig.Recover(domain, a, sig)
	require.NoError(t, err)
	assert.Equal(t, from, got)

	// Another domain (chain), another message: another signer recovered, never from.
	other := domain
	other.ChainID = 8453
	got, err = tokensig.Recover(other, a, sig)
	require.NoError(t, err)
	assert.NotEqual(t, from, got)

	// The malleable twin (n - s, v flipped) is refused, as the token refuses it.
	n := crypto.S256().Params().N
	twin := sig
	twin.S = common.BigToHash(new(big.Int).Sub(n, sig.S.Big()))
	twin.V = 55 - sig.V
	_, err = tokensig.Recover(domain, a, twin)
	assert.ErrorIs(t, err, tokensig.ErrBadSignature)
	bad := sig
	bad.V = 1
	_, err = tokensig.Recover(domain, a, bad)
	assert.ErrorIs(t, err, tokensig.ErrBadSignature)
}
