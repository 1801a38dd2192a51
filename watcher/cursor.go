package watcher

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/store"
)

// cursor reads the chain's cursor, starting one on a chain never scanned and starting over on
// a chain whose genesis changed (a development chain restarted).
func (w *Watcher) cursor(ctx context.Context, head uint64) (*store.Cursor, error) {
	cur, err := w.Store.Read(ctx).Cursor(w.Info.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	fresh := errors.Is(err, store.ErrNotFound)
	if !fresh && w.genesisChecked && head >= uint64(cur.Number) {
		return &cur, nil
	}
	genesis, err := w.Chain.Block(ctx, 0, false)
	if err != nil {
		return nil, err
	}
	w.genesisChecked = true
	if !fresh && cur.GenesisHash == genesis.Hash.Hex() {
		return &cur, nil
	}
	start := uint64(0)
	if head > w.Config.StartBack {
		start = head - w.Config.StartBack
	}
	b, err := w.Chain.Block(ctx, start, false)
	if err != nil {
		return nil, err
	}
	next := store.Cursor{ChainID: w.Info.ID, GenesisHash: genesis.Hash.Hex(), Number: int64(b.Number), Hash: b.Hash.Hex(),
		Time: time.Unix(int64(b.Time), 0).UTC()}
	now := w.Now()
	err = w.Store.InTx(ctx, func(tx *store.Tx) error {
		if fresh {
			if err := tx.MoveCursor(nil, next, now); err != nil {
				return err
			}
		} else {
			orphaned, err := tx.ResetChain(w.Info.ID, now)
			if err != nil {
				return err
			}
			w.Log.Warn("the chain's genesis changed (a development chain restarted?): starting over on the new chain",
				"old_genesis", cur.GenesisHash, "new_genesis", next.GenesisHash, "unconfirmed_transfers_orphaned", len(orphaned))
			if err := tx.MoveCursor(&cur, next, now); err != nil {
				return err
			}
		}
		return tx.PutBlocks(w.Info.ID, []store.BlockRef{{Number: next.Number, Hash: next.Hash, ParentHash: b.ParentHash.Hex()}})
	})
	if err != nil {
		return nil, err
	}
	w.Log.Info("watching from block", "block", next.Number, "head", head)
	return &next, nil
}
