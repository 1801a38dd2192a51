package txmgr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Follow moves every transaction in flight — payouts, sweeps, gas top-ups: receipts,
// confirmations, reorgs, resends, bumps — and calls hooks when one ends. It goes on past the
// transactions that fail and returns their errors joined, except store.ErrGenesisChanged on a
// real chain: then nothing moves until the node serves our chain again.
func (m *Manager) Follow(ctx context.Context, hooks Hooks) error {
	open, err := m.Store.Read(ctx).OpenOutgoingTxs(m.Info.ID, "")
	if err != nil || len(open) == 0 {
		return err
	}
	head, err := m.Chain.BlockNumber(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range open {
		if o.GenesisHash != "" && o.GenesisHash != m.genesis {
			if !m.devChain() {
				// A real chain's genesis never changes: the node serves another chain under the
				// same id. Nothing is given up and nothing is signed until it serves ours again.
				return fmt.Errorf("%s: %w (nonce %d of %s): check PAYMENTS_RPC_URLS", m.caip(),
					store.ErrGenesisChanged, o.Nonce, o.Sender)
			}
			if err := m.abandon(ctx, o, hooks); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := m.followOne(ctx, o, int64(head), hooks); err != nil {
			m.Log.Error("follow a payout transaction", "chain", m.caip(), "nonce", o.Nonce, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// abandon gives up a transaction signed for a chain that no longer exists (its genesis is not
// the chain's now): it can never be mined here. Its owner is told in the same database
// transaction.
func (m *Manager) abandon(ctx context.Context, o store.OutgoingTx, hooks Hooks) error {
	now := m.Now()
	msg := fmt.Sprintf("the chain was reset (a new genesis: a development chain restarted); the transaction signed for the "+
		"old chain (nonce %d) can never be mined on this one", o.Nonce)
	m.Log.Warn("transaction of a chain that no longer exists given up", "chain", m.caip(), "kind", o.Kind,
		"sender", o.Sender, "nonce", o.Nonce, "withdrawal", o.WithdrawalID)
	record := m.recorder(ctx, func(tx *store.Tx) error {
		return tx.SetOutgoing(o.ID, store.OutgoingFailed, o.MinedHash, o.MinedBlock, o.MinedBlockHash, &msg, now)
	})
	if hooks.Abandoned == nil {
		return record(nil)
	}
	return hooks.Abandoned(ctx, o, msg, record)
}

// recorder is the Record that commits the owner's change, then the transaction's own.
func (m *Manager) recorder(ctx context.Context, own func(tx *store.Tx) error) Record {
	return func(along func(tx *store.Tx) error) error {
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			if along != nil {
				if err := along(tx); err != nil {
					return err
				}
			}
			return own(tx)
		})
	}
}

// followOne looks for a receipt of any attempt of one logical transaction and moves it on:
// mined, confirmed at depth, dropped by a reorg, or still waiting (resent or bumped).
func (m *Manager) followOne(ctx context.Context, o store.OutgoingTx, head int64, hooks Hooks) error {
	now := m.Now()
	// Any attempt may be the one mined: look for a receipt of each, newest first.
	var rc *types.Receipt
	var mined *store.TxAttempt
	for i := len(o.Attempts) - 1; i >= 0; i-- {
		r, err := m.Chain.TransactionReceipt(ctx, common.HexToHash(o.Attempts[i].Hash))
		if errors.Is(err, chain.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		rc, mined = r, &o.Attempts[i]
		break
	}
	if rc == nil {
		switch o.Status {
		case store.OutgoingConflict:
			return nil // an operator looks; a receipt of one of its attempts would still settle it
		case store.OutgoingMined:
			// The receipt is gone: a reorg took the block. Back to signed; the mined attempt's
			// stored bytes go out again (not a bump: they were good enough to be mined).
			m.Log.Warn("payout receipt dropped by a reorg: sending the stored transaction again", "chain", m.caip(),
				"nonce", o.Nonce, "tx", *o.MinedHash)
			if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetOutgoing(o.ID, store.OutgoingSigned, nil, nil, nil, nil, now)
			}); err != nil {
				return err
			}
			for _, a := range o.Attempts {
				if strings.EqualFold(a.Hash, *o.MinedHash) {
					return m.Broadcast(ctx, o, a)
				}
			}
		}
		return m.resendOrBump(ctx, o)
	}
	hash, block, blockHash := strings.ToLower(mined.Hash), rc.BlockNumber.Int64(), strings.ToLower(rc.BlockHash.Hex())
	if o.Status == store.OutgoingSigned || o.MinedHash == nil || *o.MinedHash != hash || *o.MinedBlockHash != blockHash {
		if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetOutgoing(o.ID, store.OutgoingMined, &hash, &block, &blockHash, nil, now)
		}); err != nil {
			return err
		}
	}
	if !m.Info.IsFinal(domain.Head{Number: head}, block) {
		return nil // confirming
	}
	// At depth: the receipt's block must still be the canonical one.
	b, err := m.Chain.Block(ctx, uint64(block), false)
	if err != nil {
		return err
	}
	if !strings.EqualFold(b.Hash.Hex(), blockHash) {
		return nil // a reorg in progress: the next round reads the receipt again
	}
	return m.settle(ctx, o, Final{Hash: hash, Receipt: rc, Block: b, Succeeded: rc.Status == types.ReceiptStatusSuccessful}, hooks)
}

// settle finishes a logical transaction whose receipt reached the chain's depth: confirmed, or
// failed when it reverted; its owner's change commits with it.
func (m *Manager) settle(ctx context.Context, o store.OutgoingTx, f Final, hooks Hooks) error {
	now := m.Now()
	block, blockHash := f.Receipt.BlockNumber.Int64(), strings.ToLower(f.Receipt.BlockHash.Hex())
	status := store.OutgoingConfirmed
	if !f.Succeeded {
		status = store.OutgoingFailed
	}
	record := m.recorder(ctx, func(tx *store.Tx) error {
		return tx.SetOutgoing(o.ID, status, &f.Hash, &block, &blockHash, nil, now)
	})
	if hooks.Final == nil {
		return record(nil)
	}
	return hooks.Final(ctx, o, f, record)
}
