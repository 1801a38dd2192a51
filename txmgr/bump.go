package txmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/store"
)

// resendOrBump broadcasts the newest attempt again when it is due, or signs a successor at the
// same nonce with higher fees when the newest has waited too long.
func (m *Manager) resendOrBump(ctx context.Context, o store.OutgoingTx) error {
	now := m.Now()
	last := o.Attempts[len(o.Attempts)-1]
	if o.KeyIndex != nil { // a deposit address's (a sweep): resent, never bumped (its gas is fixed); given up in time
		if o.Status == store.OutgoingSigned && now.Sub(o.CreatedAt) >= m.Config.GiveUpAfter {
			msg := fmt.Sprintf("not mined within %s of signing: given up; the next sweep signs again at the chain's nonce %d", m.Config.GiveUpAfter, o.Nonce)
			m.Log.Warn("sweep transaction given up", "chain", m.caip(), "sender", o.Sender, "nonce", o.Nonce, "tx", last.Hash)
			return m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetOutgoing(o.ID, store.OutgoingFailed, nil, nil, nil, &msg, now)
			})
		}
		if m.resendDue(last, now) {
			return m.Broadcast(ctx, o, last)
		}
		return nil
	}
	// Fees are raised only for an attempt a node accepted and that has waited its time, at the
	// sender's lowest unmined nonce (a later nonce waits for that one, not for its fees).
	// An attempt no node took (the RPC down, funds short) is sent again as it is: raising fees
	// for it would only ratchet them up while nothing is competing.
	if last.BroadcastAt != nil && last.LastError == nil && now.Sub(*last.BroadcastAt) >= m.Config.BumpAfter {
		mined, err := m.Chain.NonceAt(ctx, common.HexToAddress(o.Sender), nil)
		if err != nil {
			return err
		}
		if int64(mined) == o.Nonce {
			return m.bump(ctx, o, last)
		}
	}
	if m.resendDue(last, now) {
		return m.Broadcast(ctx, o, last)
	}
	return nil
}

// resendDue: an attempt no node has accepted yet, or one accepted ResendAfter ago and still not
// mined, goes out again (the same bytes).
func (m *Manager) resendDue(a store.TxAttempt, now time.Time) bool {
	return a.BroadcastAt == nil || a.LastError != nil || now.Sub(*a.BroadcastAt) >= m.Config.ResendAfter
}

// bump signs a new attempt: same nonce, recipient, value and data, with the fees of Bump. It is
// stored before it is sent.
func (m *Manager) bump(ctx context.Context, o store.OutgoingTx, last store.TxAttempt) error {
	tip, feeCap, err := m.Fees(ctx)
	if err != nil {
		return err
	}
	tip, feeCap = Bump(last.TipCap.BigInt(), last.FeeCap.BigInt(), tip, feeCap)
	a, err := m.sign(o, tip, feeCap)
	if err != nil {
		return err
	}
	if err := m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertAttempt(a) }); err != nil {
		return err
	}
	m.Log.Warn("payout not mined in time: fees bumped", "chain", m.caip(), "nonce", o.Nonce,
		"previous", last.Hash, "tx", a.Hash, "tip", tip.String(), "fee_cap", feeCap.String())
	return m.Broadcast(ctx, o, a)
}
