package payouts

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/holiman/uint256"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/tokensig"
)

// Pull is one deposit address's part of a batch: its key signs for Amount of the batch's token.
type Pull struct {
	SweepID uuid.UUID
	Key     *ecdsa.PrivateKey
	Amount  *big.Int
}

func (p Pull) from() common.Address { return crypto.PubkeyToAddress(p.Key.PublicKey) }

// BatchCall is a batch transaction's content: SweepBatch calldata, and for EIP-7702 the deposit
// accounts' authorizations (none for an account already delegated).
type BatchCall struct {
	Data  []byte
	Auths []types.SetCodeAuthorization
}

// The ABI tuples of SweepBatch's pull functions (Solidity's field names, capitalised).
type authTuple struct {
	From        common.Address
	Value       *big.Int
	ValidBefore *big.Int
	Nonce       [32]byte
	V           uint8
	R           [32]byte
	S           [32]byte
}

type permitTuple struct {
	Owner    common.Address
	Value    *big.Int
	Deadline *big.Int
	V        uint8
	R        [32]byte
	S        [32]byte
}

// AuthorizationNonce is the EIP-3009 nonce of a sweep's authorization: derived from the sweep's
// id, so the authorization names the sweep row that stored it, and a new sweep never reuses it.
func AuthorizationNonce(sweepID uuid.UUID) common.Hash {
	return crypto.Keccak256Hash([]byte("paymentsd sweep "), sweepID[:])
}

// Build3009 signs each pull's transferWithAuthorization(from, collector, amount, 0, validBefore,
// nonce) in domain d and encodes SweepBatch.transferWithAuthorizations.
func Build3009(d tokensig.Domain, collector common.Address, validBefore *big.Int, pulls []Pull) (BatchCall, error) {
	items := make([]authTuple, len(pulls))
	for i, p := range pulls {
		a := tokensig.Authorization{From: p.from(), To: collector, Value: p.Amount, ValidAfter: new(big.Int),
			ValidBefore: validBefore, Nonce: AuthorizationNonce(p.SweepID)}
		sig, err := tokensig.Sign(p.Key, d, a)
		if err != nil {
			return BatchCall{}, err
		}
		items[i] = authTuple{From: a.From, Value: a.Value, ValidBefore: validBefore, Nonce: a.Nonce, V: sig.V, R: sig.R, S: sig.S}
	}
	data, err := batchABI.Pack("transferWithAuthorizations", d.Contract, items)
	return BatchCall{Data: data}, err
}

// Build2612 signs each pull's permit(owner, batch, amount, nonces[i], deadline) in domain d and
// encodes SweepBatch.permitsAndPulls. nonces are the owners' EIP-2612 nonces, in pull order.
func Build2612(d tokensig.Domain, batch common.Address, deadline *big.Int, nonces []*big.Int, pulls []Pull) (BatchCall, error) {
	if len(nonces) != len(pulls) {
		return BatchCall{}, fmt.Errorf("build permits: %d nonces for %d pulls", len(nonces), len(pulls))
	}
	items := make([]permitTuple, len(pulls))
	for i, p := range pulls {
		pm := tokensig.Permit{Owner: p.from(), Spender: batch, Value: p.Amount, Nonce: nonces[i], Deadline: deadline}
		sig, err := tokensig.Sign(p.Key, d, pm)
		if err != nil {
			return BatchCall{}, err
		}
		items[i] = permitTuple{Owner: pm.Owner, Value: pm.Value, Deadline: deadline, V: sig.V, R: sig.R, S: sig.S}
	}
	data, err := batchABI.Pack("permitsAndPulls", d.Contract, items)
	return BatchCall{Data: data}, err
}

// Delegation is what an EIP-7702 pull needs to know of its deposit account: whether it already
// delegates to the sweep delegate (no authorization then), else its nonce for the authorization.
type Delegation struct {
	Delegated bool
	Nonce     uint64
}

// Build7702 signs, for each pull whose account is not yet delegated, an EIP-7702 authorization
// to delegate (on chainID, at that account's nonce), and encodes SweepBatch.sweepDelegated.
func Build7702(chainID int64, token, delegate common.Address, dels []Delegation, pulls []Pull) (BatchCall, error) {
	if len(dels) != len(pulls) {
		return BatchCall{}, fmt.Errorf("build delegated sweeps: %d delegations for %d pulls", len(dels), len(pulls))
	}
	var out BatchCall
	deposits := make([]common.Address, len(pulls))
	values := make([]*big.Int, len(pulls))
	for i, p := range pulls {
		deposits[i], values[i] = p.from(), p.Amount
		if dels[i].Delegated {
			continue
		}
		a, err := types.SignSetCode(p.Key, types.SetCodeAuthorization{ChainID: *uint256.NewInt(uint64(chainID)), Address: delegate,
			Nonce: dels[i].Nonce})
		if err != nil {
			return BatchCall{}, err
		}
		out.Auths = append(out.Auths, a)
	}
	var err error
	out.Data, err = batchABI.Pack("sweepDelegated", token, deposits, values)
	return out, err
}

// buildBatch reads what method needs of the chain (the token's domain, permit nonces, the
// accounts' delegations) and builds the batch for pulls of tok.
func (m *Manager) buildBatch(ctx context.Context, method SweepMethod, tok domain.Token, pulls []Pull) (BatchCall, error) {
	// Signatures stay valid an hour: far past any bump, short enough that an authorization
	// copied from a stuck transaction is soon worthless (it could only pay the hot wallet).
	until := big.NewInt(m.Now().Add(validFor).Unix())
	switch method {
	case SweepEIP3009, SweepEIP2612:
		d, err := m.tokenDomain(ctx, tok)
		if err != nil {
			return BatchCall{}, err
		}
		if method == SweepEIP3009 {
			return Build3009(d, m.Wallet.Address(), until, pulls)
		}
		nonces := make([]*big.Int, len(pulls))
		for i, p := range pulls {
			if nonces[i], err = m.permitNonce(ctx, d.Contract, p.from()); err != nil {
				return BatchCall{}, err
			}
		}
		return Build2612(d, common.HexToAddress(m.Config.SweepBatch), until, nonces, pulls)
	case SweepEIP7702:
		delegate := common.HexToAddress(m.Config.SweepDelegate)
		designator := types.AddressToDelegation(delegate)
		dels := make([]Delegation, len(pulls))
		for i, p := range pulls {
			code, err := m.Chain.CodeAt(ctx, p.from(), nil)
			if err != nil {
				return BatchCall{}, err
			}
			if dels[i].Delegated = bytes.Equal(code, designator); dels[i].Delegated {
				continue
			}
			// The latest count: a deposit account sends nothing itself on this path. Were it to
			// move meanwhile, the chain skips the authorization and the pull fails alone.
			if dels[i].Nonce, err = m.Chain.NonceAt(ctx, p.from(), nil); err != nil {
				return BatchCall{}, err
			}
		}
		return Build7702(m.Info.ID, common.HexToAddress(tok.ContractAddress), delegate, dels, pulls)
	}
	return BatchCall{}, fmt.Errorf("sweep method %q is not a batch", method)
}

// validFor is how long a sweep's signatures stay valid (EIP-3009's validBefore, a permit's
// deadline).
const validFor = time.Hour

func (m *Manager) permitNonce(ctx context.Context, token, owner common.Address) (*big.Int, error) {
	data, err := tokenViewsABI.Pack("nonces", owner)
	if err != nil {
		return nil, err
	}
	out, err := m.Chain.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
	if err != nil {
		return nil, fmt.Errorf("nonces(%s): %w", owner.Hex(), err)
	}
	v, err := tokenViewsABI.Unpack("nonces", out)
	if err != nil {
		return nil, err
	}
	return v[0].(*big.Int), nil
}
