package watcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// scan advances the cursor by one range, or walks it back over a reorg.
func (w *Watcher) scan(ctx context.Context, res *RoundResult) error {
	head, err := w.Chain.BlockNumber(ctx)
	if err != nil {
		return err
	}
	res.Head = int64(head)
	cur, err := w.cursor(ctx, head)
	if err != nil {
		return err
	}
	if head < w.Config.Lag {
		return nil
	}
	target := int64(head - w.Config.Lag)
	from := cur.Number + 1
	if from > target {
		// Nothing new. The block under the cursor must still be canonical: a reorg onto a
		// shorter branch shows here first (and un-counts at once what it dropped).
		b, err := w.Chain.Block(ctx, uint64(cur.Number), false)
		if errors.Is(err, chain.ErrBlockNotFound) || (err == nil && b.Hash.Hex() != cur.Hash) {
			n, err := w.walkBack(ctx, cur)
			res.Reorged = n
			return err
		}
		if err != nil {
			return err
		}
		return w.confirm(ctx, cur) // confirmations may still be due (a restart)
	}
	if w.rangeSize == 0 {
		w.rangeSize = max(w.Config.InitialRange, 1)
	}
	to := min(target, from+int64(w.rangeSize)-1)
	res.From, res.To = from, to
	blocks, err := w.Chain.Blocks(ctx, uint64(from), uint64(to), w.nativeToken() != nil)
	if err != nil {
		return err
	}
	if len(blocks) == 0 || blocks[0].ParentHash.Hex() != cur.Hash {
		res.From, res.To = 1, 0
		n, err := w.walkBack(ctx, cur)
		res.Reorged = n
		return err
	}
	for i := 1; i < len(blocks); i++ {
		if blocks[i].ParentHash != blocks[i-1].Hash {
			res.From, res.To = 1, 0
			return nil // the chain moved under the batch: read it again next round
		}
	}
	watched, err := w.Store.Read(ctx).WatchedAddresses(w.Now(), w.Config.Grace)
	if err != nil {
		return err
	}
	var found []store.Transfer
	for {
		found, err = w.transfers(ctx, blocks, watched)
		if !errors.Is(err, chain.ErrRangeTooLarge) || len(blocks) == 1 {
			break
		}
		// The provider refused the range: halve it, keep what was read of the blocks, and never
		// ask that much again.
		w.rangeCeiling = uint64(len(blocks) - 1)
		blocks = blocks[:len(blocks)/2]
		w.rangeSize = uint64(len(blocks))
		w.Log.Debug("log range too large: halved", "blocks", len(blocks))
	}
	if errors.Is(err, errMoved) {
		res.From, res.To = 1, 0
		return nil
	}
	if err != nil {
		return err
	}
	if len(blocks) == int(w.rangeSize) {
		grown := min(w.rangeSize*2, w.Config.MaxRange)
		if w.rangeCeiling > 0 {
			grown = min(grown, w.rangeCeiling)
		}
		w.rangeSize = max(grown, w.rangeSize)
	}
	last := blocks[len(blocks)-1]
	res.To = int64(last.Number)
	next := store.Cursor{ChainID: w.Info.ID, GenesisHash: cur.GenesisHash, Number: int64(last.Number), Hash: last.Hash.Hex(),
		Time: time.Unix(int64(last.Time), 0).UTC()}
	refs := make([]store.BlockRef, len(blocks))
	for i, b := range blocks {
		refs[i] = store.BlockRef{Number: int64(b.Number), Hash: b.Hash.Hex(), ParentHash: b.ParentHash.Hex()}
	}
	now := w.Now()
	err = w.Store.InTx(ctx, func(tx *store.Tx) error {
		// A transfer recorded from a report ahead of the scan, in a block these are not, is gone
		// with its block (recorded again just below when its transaction is in these ones).
		if _, err := tx.OrphanStaleTransfers(w.Info.ID, refs, now); err != nil {
			return err
		}
		for _, t := range found {
			wrote, err := tx.RecordTransfer(t)
			if err != nil {
				return err
			}
			if wrote {
				res.Transfers++
			}
		}
		if err := tx.PutBlocks(w.Info.ID, refs); err != nil {
			return err
		}
		if err := tx.ForgetBlocks(w.Info.ID, next.Number, next.Number-w.keep()); err != nil {
			return err
		}
		if _, err := tx.ConfirmTransfers(w.Info.ID, w.confirmedUpTo(next.Number), now); err != nil {
			return err
		}
		return tx.MoveCursor(cur, next, now)
	})
	if err != nil {
		res.Transfers = 0
		return err
	}
	if res.Transfers > 0 {
		w.Log.Info("transfers seen", "blocks", fmt.Sprintf("%d-%d", from, res.To), "transfers", res.Transfers)
	}
	return nil
}

// confirm marks transfers confirmed that reached their depth without a new block scanned.
func (w *Watcher) confirm(ctx context.Context, cur *store.Cursor) error {
	return w.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.ConfirmTransfers(w.Info.ID, w.confirmedUpTo(cur.Number), w.Now())
		return err
	})
}

// confirmedUpTo is the highest block whose transfers have the chain's confirmations when the
// cursor is at number: a transfer in block b has number-b+1 of them.
func (w *Watcher) confirmedUpTo(number int64) int64 {
	return w.Info.FinalUpTo(domain.Head{Number: number})
}
