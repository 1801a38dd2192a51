package txmgr

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/uuid"
	"github.com/holiman/uint256"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/store"
)

// DepositKeys derives the signing key of a deposit address (wallet.Keys). Only a process that
// sweeps holds it.
type DepositKeys interface {
	Key(index uint32) (*ecdsa.PrivateKey, error)
}

// SignAndStore takes the sender's next nonce, signs the logical transaction's first attempt and
// stores both with along (the owner's own change: a withdrawal to processing, a sweep recorded)
// in one database transaction. Only then may the caller broadcast it (Broadcast): a crash in
// between leaves the stored bytes, which the next round sends.
func (m *Manager) SignAndStore(ctx context.Context, o *store.OutgoingTx, tip, feeCap *big.Int, along func(tx *store.Tx) error) (store.TxAttempt, error) {
	chainNonce, err := m.Chain.NonceAt(ctx, common.HexToAddress(o.Sender), nil)
	if err != nil {
		return store.TxAttempt{}, err
	}
	var first store.TxAttempt
	err = m.Store.InTx(ctx, func(tx *store.Tx) error {
		n, err := m.takeNonce(tx, o.Sender, o.KeyIndex != nil, int64(chainNonce))
		if err != nil {
			return err
		}
		o.Nonce, o.GenesisHash = n, m.genesis
		if first, err = m.sign(*o, tip, feeCap); err != nil {
			return err
		}
		o.Attempts = []store.TxAttempt{first}
		if err := tx.InsertOutgoingTx(*o); err != nil {
			return err
		}
		return along(tx)
	})
	return first, err
}

// sign makes an attempt of a logical transaction with the given fees, by its sender's key.
func (m *Manager) sign(o store.OutgoingTx, tip, feeCap *big.Int) (store.TxAttempt, error) {
	to := common.HexToAddress(o.TxTo)
	data, err := hex.DecodeString(o.TxData)
	if err != nil {
		return store.TxAttempt{}, err
	}
	signer, err := m.signerOf(o)
	if err != nil {
		return store.TxAttempt{}, err
	}
	var signed *types.Transaction
	var raw []byte
	if o.AuthList == "" {
		signed, raw, err = signer.Sign(&types.DynamicFeeTx{Nonce: uint64(o.Nonce), GasTipCap: tip, GasFeeCap: feeCap,
			Gas: uint64(o.GasLimit), To: &to, Value: o.TxValue.BigInt(), Data: data}, m.Info.ID)
	} else {
		signed, raw, err = signSetCode(signer, o, tip, feeCap, to, data, m.Info.ID)
	}
	if err != nil {
		return store.TxAttempt{}, err
	}
	return store.TxAttempt{ID: uuid.Must(uuid.NewV7()), OutgoingTxID: o.ID, Hash: strings.ToLower(signed.Hash().Hex()),
		Raw: hex.EncodeToString(raw), TipCap: decimal.NewFromBigInt(tip, 0), FeeCap: decimal.NewFromBigInt(feeCap, 0),
		CreatedAt: m.Now()}, nil
}

// signSetCode signs an EIP-7702 transaction: the stored authorizations (signed by the delegating
// accounts, never re-signed here) ride in every attempt, so a bump replaces the fees only.
func signSetCode(w *hotwallet.Wallet, o store.OutgoingTx, tip, feeCap *big.Int, to common.Address, data []byte, chainID int64) (*types.Transaction, []byte, error) {
	var auths []types.SetCodeAuthorization
	if err := json.Unmarshal([]byte(o.AuthList), &auths); err != nil {
		return nil, nil, fmt.Errorf("transaction %s: stored EIP-7702 authorizations: %w", o.ID, err)
	}
	tipU, overflow := uint256.FromBig(tip)
	capU, overflow2 := uint256.FromBig(feeCap)
	value, overflow3 := uint256.FromBig(o.TxValue.BigInt())
	if overflow || overflow2 || overflow3 {
		return nil, nil, fmt.Errorf("transaction %s: a fee or value wider than 256 bits", o.ID)
	}
	return w.SignSetCode(&types.SetCodeTx{Nonce: uint64(o.Nonce), GasTipCap: tipU, GasFeeCap: capU, Gas: uint64(o.GasLimit),
		To: to, Value: value, Data: data, AuthList: auths}, chainID)
}

// signerOf is the key that signs for a logical transaction's sender: the hot wallet, or the
// deposit address's own key for a sweep.
func (m *Manager) signerOf(o store.OutgoingTx) (*hotwallet.Wallet, error) {
	if strings.EqualFold(o.Sender, m.Wallet.Address().Hex()) {
		return m.Wallet, nil
	}
	if o.KeyIndex == nil || m.Deposits == nil {
		return nil, fmt.Errorf("no key for sender %s on %s (a sweep needs PAYMENTS_DEPOSIT_XPRV or PAYMENTS_DEPOSIT_MNEMONIC_FILE)",
			o.Sender, m.caip())
	}
	k, err := m.Deposits.Key(uint32(*o.KeyIndex))
	if err != nil {
		return nil, err
	}
	w := hotwallet.FromKey(k)
	if !strings.EqualFold(w.Address().Hex(), o.Sender) {
		return nil, fmt.Errorf("the deposit key's index %d is not %s: the deposit key does not match the addresses", *o.KeyIndex, o.Sender)
	}
	return w, nil
}
