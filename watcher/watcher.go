// Package watcher follows EVM chains and turns the transfers it sees into payment states
// (settlement on chain). Per chain it keeps a cursor — the last block processed and the hashes of the
// recent blocks — checks every new block's parent hash against it and walks back on a reorg,
// un-counting the transfers of the orphaned blocks. ERC-20 Transfer logs to the watched deposit
// addresses come from eth_getLogs (token contracts × ≤1000 address topics per query, block
// ranges sized adaptively); native transfers from the blocks' transactions. Every transfer is
// recorded once, keyed by (chain, tx hash, log index), in the same transaction as the cursor
// move, so a restart resumes where it stopped and a rescan never counts twice. One watcher per
// chain runs at a time across processes (a lease), and the cursor move is checked against the
// cursor it started from, so a watcher whose lease lapsed cannot commit over another's work.
package watcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// Chain is what the watcher asks of a chain's JSON-RPC (chain.Client).
type Chain interface {
	ChainID() int64
	BlockNumber(ctx context.Context) (uint64, error)
	Block(ctx context.Context, n uint64, withTxs bool) (*chain.Block, error)
	Blocks(ctx context.Context, from, to uint64, withTxs bool) ([]*chain.Block, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

// Config tunes one chain's watcher.
type Config struct {
	Interval     time.Duration // between rounds when caught up
	Lag          uint64        // blocks behind head to stay (providers' log indexes trail their head)
	StartBack    uint64        // on a chain never scanned: start this many blocks behind head
	Grace        time.Duration // follow a payment's address this long after its expiry
	InitialRange uint64        // blocks per eth_getLogs range at start
	MaxRange     uint64        // ranges grow after successes up to this
	Batch        int           // payments settled per round (each kind)
}

// DefaultConfig is the production tuning.
func DefaultConfig() Config {
	return Config{Interval: time.Second, Lag: 1, StartBack: 128, Grace: 7 * 24 * time.Hour, InitialRange: 500, MaxRange: 2000, Batch: 500}
}

// Watcher follows one chain.
type Watcher struct {
	Chain   Chain
	Info    domain.Chain   // the catalogue's chain: confirmations
	Tokens  []domain.Token // the chain's tokens: every transfer of one of them to a watched address is recorded
	Store   *store.Store
	Settle  *payments.OnChain
	Config  Config
	Log     *slog.Logger
	Now     func() time.Time
	Observe func(RoundResult, error) // metrics, when set

	rangeSize      uint64
	rangeCeiling   uint64 // the largest log range the provider has not refused (0: none refused)
	genesisChecked bool
}

// RoundResult says what one round did.
type RoundResult struct {
	Skipped   bool  // another process holds this chain's lease (the round did not run)
	Scanned   bool  // the scan succeeded: an error after it is some payments' own
	From, To  int64 // blocks scanned (To < From: none)
	Head      int64
	Transfers int // recorded (new or revived)
	Reorged   int // blocks walked back
	Settled   int // payments changed
	Credited  int // transfers credited on their own
}

// LeaseName is the lease the watcher's loop holds: one process watches a chain at a time.
func (w *Watcher) LeaseName() string { return "watch:" + chains.CAIP2(w.Info.ID) }

// Loop is the watcher as a background loop (internal/worker, which holds its lease): a round,
// then the next at once while behind, or after Interval.
func (w *Watcher) Loop() worker.Loop {
	w.Log = w.Log.With("chain", chains.CAIP2(w.Info.ID))
	return worker.Loop{Name: w.LeaseName(), Lease: w.LeaseName(), Interval: w.Config.Interval,
		Round: func(ctx context.Context) (bool, error) {
			res, err := w.Round(ctx)
			if w.Observe != nil && ctx.Err() == nil {
				w.Observe(res, err)
			}
			if err != nil && res.Scanned {
				err = worker.Partial(err) // payments that could not be settled now: the scan goes on
			}
			// A round that scanned is caught up to its range even when some payments failed: the
			// next range goes on at once while behind (one stuck payment must not slow a chain's
			// catch-up after an outage to a range per interval).
			behind := (err == nil || res.Scanned) && res.To >= res.From && res.To < res.Head-int64(w.Config.Lag)
			return behind, err
		},
		Skipped: func() {
			if w.Observe != nil {
				w.Observe(RoundResult{Skipped: true, From: 1}, nil)
			}
		}}
}

// Rewind moves the cursor back to block n (which must be canonical): the blocks above are
// scanned again. Transfers already recorded are not recorded twice.
func (w *Watcher) Rewind(ctx context.Context, n uint64) error {
	cur, err := w.Store.Read(ctx).Cursor(w.Info.ID)
	if err != nil {
		return err
	}
	b, err := w.Chain.Block(ctx, n, false)
	if err != nil {
		return err
	}
	w.rangeSize = 0
	return w.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.RewindCursor(store.Cursor{ChainID: w.Info.ID, GenesisHash: cur.GenesisHash, Number: int64(b.Number),
			Hash: b.Hash.Hex(), Time: time.Unix(int64(b.Time), 0).UTC()}, w.Now())
	})
}

// Round scans the next range (or walks back a reorg), and settles. The caller holds the chain's
// lease (LeaseName): the loop's runtime, or a test.
func (w *Watcher) Round(ctx context.Context) (RoundResult, error) {
	res := RoundResult{From: 1, To: 0}
	if err := w.scan(ctx, &res); err != nil {
		return res, err
	}
	res.Scanned = true
	return res, w.settle(ctx, &res)
}

// settle attributes customers' transfers, moves the open payments with transfers here to
// where they belong, and credits what their settlements did not count.
func (w *Watcher) settle(ctx context.Context, res *RoundResult) error {
	// Each step goes on past an item that fails (logged by it), so one payment that cannot be
	// settled now — no receipt from a flaky RPC, no price — never holds up the others.
	var errs []error
	if err := w.Settle.AssignCustomerTransfers(ctx, w.Info.ID, w.Config.Batch); err != nil {
		errs = append(errs, fmt.Errorf("attribute customer transfers: %w", err))
	}
	ids, err := w.Store.Read(ctx).OpenPaymentsWithTransfers(w.Info.ID, w.Config.Batch)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range ids {
		changed, err := w.Settle.Reconcile(ctx, id)
		if err != nil {
			w.Log.Error("settle a payment", "payment", id, "err", err)
			errs = append(errs, fmt.Errorf("settle payment %s: %w", id, err))
			continue
		}
		if changed {
			res.Settled++
		}
	}
	n, err := w.Settle.CreditUncounted(ctx, w.Info.ID, w.Config.Batch)
	res.Credited = n
	return errors.Join(append(errs, err)...)
}
