package watcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/store"
)

// keep is how many recent block hashes are kept for reorg checks: well past the
// confirmation depth.
func (w *Watcher) keep() int64 { return int64(max(2*w.Info.RequiredConfirmations, 64)) }

// walkBack finds the newest stored block still canonical and moves the cursor there, orphaning
// the transfers above it. It reports how many blocks it walked back.
func (w *Watcher) walkBack(ctx context.Context, cur *store.Cursor) (int, error) {
	stored, err := w.Store.Read(ctx).BlockHashes(w.Info.ID, cur.Number-w.keep(), cur.Number)
	if err != nil {
		return 0, err
	}
	n := cur.Number
	var ancestor *chain.Block
	for ; n >= 0; n-- {
		b, err := w.Chain.Block(ctx, uint64(n), false)
		if errors.Is(err, chain.ErrBlockNotFound) {
			continue // the new chain is shorter
		}
		if err != nil {
			return 0, err
		}
		h, ok := stored[n]
		if !ok || h == b.Hash.Hex() {
			if !ok {
				w.Log.Error("reorg deeper than the blocks kept: resuming from an unverified block", "block", n, "kept", w.keep())
			}
			ancestor = b
			break
		}
	}
	if ancestor == nil {
		return 0, fmt.Errorf("reorg: no common ancestor down to block 0")
	}
	walked := int(cur.Number - n)
	next := store.Cursor{ChainID: w.Info.ID, GenesisHash: cur.GenesisHash, Number: n, Hash: ancestor.Hash.Hex(),
		Time: time.Unix(int64(ancestor.Time), 0).UTC()}
	now := w.Now()
	err = w.Store.InTx(ctx, func(tx *store.Tx) error {
		seen, confirmed, err := tx.OrphanTransfers(w.Info.ID, n, now)
		if err != nil {
			return err
		}
		for _, t := range confirmed {
			// Past the confirmation depth nothing is undone: the payment is final. Say so loudly.
			w.Log.Error("reorg removed a CONFIRMED transfer: raise the chain's confirmations", "tx", t.TxHash,
				"block", t.BlockNumber, "payment", t.PaymentID, "amount", t.Amount.String())
		}
		if err := tx.ForgetBlocks(w.Info.ID, n, n-w.keep()); err != nil {
			return err
		}
		w.Log.Warn("reorg: walked back", "from", cur.Number, "to", n, "transfers_uncounted", len(seen))
		return tx.MoveCursor(cur, next, now)
	})
	return walked, err
}
