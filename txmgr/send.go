package txmgr

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/store"
)

// PauseAfterSign is the fault tests' window between a signed transaction's commit and its
// broadcast (Config.PauseAfterSign; nothing in production). It reports false when ctx ended
// meanwhile: the stored bytes go out at the next round.
func (m *Manager) PauseAfterSign(ctx context.Context, a store.TxAttempt) bool {
	p := m.Config.PauseAfterSign
	if p <= 0 {
		return true
	}
	m.Log.Warn("fault test: pausing between storing a signed payout and broadcasting it", "tx", a.Hash, "pause", p.String())
	select {
	case <-ctx.Done():
		return false
	case <-time.After(p):
		return true
	}
}

// Broadcast sends an attempt's stored bytes. "Already known" is success. An ambiguous failure
// leaves the attempt to be sent again (the same bytes, never re-signed). "Nonce too low" with
// no receipt for any attempt means another transaction took the nonce: an operator must look.
func (m *Manager) Broadcast(ctx context.Context, o store.OutgoingTx, a store.TxAttempt) error {
	raw, err := hex.DecodeString(strings.TrimPrefix(a.Raw, "0x"))
	if err != nil {
		return fmt.Errorf("attempt %s: stored bytes: %w", a.Hash, err)
	}
	_, sendErr := m.Chain.SendRawTransaction(ctx, raw)
	now := m.Now()
	switch {
	case sendErr == nil:
		return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkBroadcast(a.ID, now, "") })
	case errors.Is(sendErr, chain.ErrNonceTooLow):
		// Mined already? Only a definite "no receipt" for every attempt counts as a stranger's
		// transaction having taken the nonce; any doubt (a timeout, a lagging replica) waits for
		// the next round.
		for _, at := range o.Attempts {
			_, err := m.Chain.TransactionReceipt(ctx, common.HexToHash(at.Hash))
			if err == nil {
				return nil // ours: the next round settles it
			}
			if !errors.Is(err, chain.ErrNotFound) {
				return err
			}
		}
		msg := fmt.Sprintf("nonce %d of %s is used on chain, and the node has no receipt for any of this payout's %d attempts: "+
			"another transaction may have taken the nonce. Check the chain before paying by hand; a receipt of one of the "+
			"attempts, if it appears, still completes the withdrawal. Nothing is re-signed automatically.", o.Nonce, o.Sender, len(o.Attempts))
		m.Log.Error("PAYOUT NONCE CONFLICT: an operator must look", "chain", m.caip(), "nonce", o.Nonce, "withdrawal", o.WithdrawalID)
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.MarkBroadcast(a.ID, now, sendErr.Error()); err != nil {
				return err
			}
			return tx.SetOutgoing(o.ID, store.OutgoingConflict, nil, nil, nil, &msg, now)
		})
	default:
		m.Log.Warn("payout broadcast failed; the same bytes go out again", "chain", m.caip(), "nonce", o.Nonce,
			"tx", a.Hash, "err", sendErr)
		return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkBroadcast(a.ID, now, sendErr.Error()) })
	}
}
