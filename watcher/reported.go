package watcher

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/store"
)

// A checkout page that paid from a browser wallet reports the transaction's hash. Nothing in
// the report is believed: it only makes the server read that transaction and its receipt from
// the chain now, instead of when the watcher's scan reaches its block. What the chain says is
// recorded exactly as the scan would record it (the same log and native-transfer readers, the
// same RecordTransfer keyed by chain, tx hash and log index) — only the transfers to the
// reporting payment's own deposit address, and only while the watcher follows that address —
// and the payment is settled by the same reconciler. The transfers are marked reported (the
// receipt's processedBy "frontend"), whether the scan recorded them first or not; the scan's
// later sight of them changes nothing. A reorg of their block is caught by the scan
// (store.OrphanStaleTransfers) or the walk-back, as for any transfer.

// ReportStatus says what the chain holds of a reported transaction.
type ReportStatus string

// Report statuses.
const (
	ReportRecorded    ReportStatus = "recorded"    // mined, successful, with transfers to the address (recorded now or before)
	ReportNoTransfer  ReportStatus = "no_transfer" // mined and successful, but it moved nothing the watcher records to the address
	ReportReverted    ReportStatus = "reverted"    // mined and failed: nothing moved
	ReportPending     ReportStatus = "pending"     // not mined yet, or unknown to the chain's node
	ReportUnavailable ReportStatus = "unavailable" // the chain cannot be read by this process now
)

// Reported is what a reported transaction holds for a deposit address.
type Reported struct {
	Status      ReportStatus
	BlockNumber *int64           // set once mined
	Transfers   []store.Transfer // its transfers to the address as recorded, in log order
}

// Reports records reported transactions through each chain's watcher.
type Reports struct {
	Watchers map[int64]*Watcher
	Readers  Readers       // the same chains' clients, for transactions by hash
	Wait     time.Duration // how long a pending transaction is waited for before answering pending
	Poll     time.Duration // between receipt lookups while waiting
	Log      *slog.Logger
}

// NewReports indexes watchers and their clients by chain.
func NewReports(ws []*Watcher, readers Readers, wait time.Duration, log *slog.Logger) *Reports {
	r := &Reports{Watchers: map[int64]*Watcher{}, Readers: readers, Wait: wait, Poll: 250 * time.Millisecond, Log: log}
	for _, w := range ws {
		r.Watchers[w.Info.ID] = w
	}
	return r
}

// Record reads a transaction reported for a deposit address on a chain and records its transfers
// to that address. A chain this process does not watch, or cannot read now, is unavailable (the
// watcher that does records the transaction when it scans its block); only the context's end is
// an error.
func (r *Reports) Record(ctx context.Context, chainID int64, txHash string, depositAddressID uuid.UUID) (Reported, error) {
	w, rd := r.Watchers[chainID], r.Readers[chainID]
	if w == nil || rd == nil {
		return Reported{Status: ReportUnavailable}, nil
	}
	out, err := r.record(ctx, w, rd, common.HexToHash(txHash), depositAddressID)
	if err != nil {
		if ctx.Err() != nil {
			return Reported{}, ctx.Err()
		}
		r.Log.WarnContext(ctx, "a reported transaction could not be read now; the watcher records it", "chain", chains.CAIP2(chainID),
			"tx", txHash, "err", err)
		return Reported{Status: ReportUnavailable}, nil
	}
	return out, nil
}

func (r *Reports) record(ctx context.Context, w *Watcher, rd TxReader, hash common.Hash, depositAddressID uuid.UUID) (Reported, error) {
	rc, err := r.receipt(ctx, rd, hash)
	if err != nil || rc == nil {
		return Reported{Status: ReportPending}, err
	}
	b, err := rd.Block(ctx, rc.BlockNumber.Uint64(), false)
	if errors.Is(err, chain.ErrBlockNotFound) || (err == nil && b.Hash != rc.BlockHash) {
		return Reported{Status: ReportPending}, nil // its block was replaced meanwhile: it may be mined again
	}
	if err != nil {
		return Reported{}, err
	}
	n := int64(b.Number)
	out := Reported{Status: ReportReverted, BlockNumber: &n}
	if rc.Status != types.ReceiptStatusSuccessful {
		return out, nil
	}
	tx, err := rd.Transaction(ctx, hash)
	if err != nil {
		return Reported{}, err
	}
	now := w.Now()
	found, err := w.reportedTransfers(ctx, rc, tx, b, depositAddressID, now)
	if err != nil {
		return Reported{}, err
	}
	err = w.Store.InTx(ctx, func(st *store.Tx) error {
		for _, t := range found {
			if _, err := st.RecordTransfer(t); err != nil {
				return err
			}
		}
		if err := st.MarkReported(found, now); err != nil { // the watcher may have recorded them first
			return err
		}
		out.Transfers, err = st.TxTransfers(w.Info.ID, hash.Hex(), depositAddressID)
		return err
	})
	if err != nil {
		return Reported{}, err
	}
	out.Status = ReportNoTransfer
	if len(out.Transfers) > 0 {
		out.Status = ReportRecorded
	}
	if len(found) > 0 && found[0].PaymentID != nil {
		// Settled now as the watcher's round would; a failure here is the next round's to retry.
		if _, err := w.Settle.Reconcile(ctx, *found[0].PaymentID); err != nil {
			r.Log.WarnContext(ctx, "settle a payment after a reported transaction", "payment", *found[0].PaymentID, "err", err)
		}
	}
	return out, nil
}

// reportedTransfers reads a mined, successful transaction's transfers to one deposit address,
// while the watcher follows it, as the scan reads them: its ERC-20 Transfer logs and its value.
func (w *Watcher) reportedTransfers(ctx context.Context, rc *types.Receipt, tx *chain.Tx, b *chain.Block, depositAddressID uuid.UUID,
	now time.Time) ([]store.Transfer, error) {
	addr, a, err := w.Store.Read(ctx).WatchedAddressOf(depositAddressID, now, w.Config.Grace)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	watched := map[string]store.WatchedAddress{addr: a}
	var out []store.Transfer
	_, byContract := w.contracts()
	for _, l := range rc.Logs {
		if t, ok := w.logTransfer(*l, b, byContract, watched, now); ok {
			out = append(out, t)
		}
	}
	if t, ok := w.nativeTransfer(*tx, b, w.nativeToken(), watched, now); ok {
		out = append(out, t)
	}
	for i := range out {
		out[i].Reported = true
	}
	return out, nil
}

// receipt reads a transaction's receipt; when the node knows the transaction but it is not mined
// yet, it waits up to Wait for it. Nil without an error: not mined (or unknown).
func (r *Reports) receipt(ctx context.Context, rd TxReader, hash common.Hash) (*types.Receipt, error) {
	deadline := time.Now().Add(r.Wait)
	known := false
	for {
		rc, err := rd.TransactionReceipt(ctx, hash)
		if err == nil {
			return rc, nil
		}
		if !errors.Is(err, chain.ErrNotFound) {
			return nil, err
		}
		if !known {
			// Only a transaction the node holds is waited for: a hash nobody sent answers at once.
			if _, err := rd.Transaction(ctx, hash); errors.Is(err, chain.ErrNotFound) {
				return nil, nil
			} else if err != nil {
				return nil, err
			}
			known = true
		}
		if !time.Now().Add(r.Poll).Before(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(r.Poll):
		}
	}
}
