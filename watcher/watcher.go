// Package watcher follows EVM chains and turns the transfers it sees into payment states
// (DESIGN §10). Per chain it keeps a cursor — the last block processed and the hashes of the
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
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

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

// transferTopic is keccak256("Transfer(address,address,uint256)").
var transferTopic = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")

// maxAddressesPerQuery is geth's default --rpc.logquerylimit on topic alternatives.
const maxAddressesPerQuery = 1000

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
			behind := err == nil && res.To >= res.From && res.To < res.Head-int64(w.Config.Lag)
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

// keep is how many recent block hashes are kept for reorg checks: well past the
// confirmation depth.
func (w *Watcher) keep() int64 { return int64(max(2*w.Info.RequiredConfirmations, 64)) }

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

// errMoved says a log's block is not the block read for its number: the chain reorganised
// during the scan.
var errMoved = errors.New("watcher: the chain changed during the scan")

// transfers reads the blocks' transfers to watched addresses.
func (w *Watcher) transfers(ctx context.Context, blocks []*chain.Block, watched map[string]store.WatchedAddress) ([]store.Transfer, error) {
	if len(watched) == 0 {
		return nil, nil
	}
	byNumber := make(map[uint64]*chain.Block, len(blocks))
	for _, b := range blocks {
		byNumber[b.Number] = b
	}
	from, to := blocks[0].Number, blocks[len(blocks)-1].Number
	var out []store.Transfer
	now := w.Now()
	record := func(b *chain.Block, txHash common.Hash, logIndex int64, tok domain.Token, sender, recipient common.Address, amount *big.Int) {
		a := watched[strings.ToLower(recipient.Hex())]
		out = append(out, store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: w.Info.ID, TxHash: strings.ToLower(txHash.Hex()),
			LogIndex: logIndex, BlockNumber: int64(b.Number), BlockHash: b.Hash.Hex(), BlockTime: time.Unix(int64(b.Time), 0).UTC(),
			TokenID: tok.ID, From: strings.ToLower(sender.Hex()), To: strings.ToLower(recipient.Hex()),
			Amount: decimal.NewFromBigInt(amount, 0), DepositAddressID: a.DepositAddressID, PaymentID: a.PaymentID, CreatedAt: now})
	}
	contracts, byContract := w.contracts()
	if len(contracts) > 0 {
		addrs := make([]string, 0, len(watched))
		for a := range watched {
			addrs = append(addrs, a)
		}
		sort.Strings(addrs)
		for i := 0; i < len(addrs); i += maxAddressesPerQuery {
			chunk := addrs[i:min(i+maxAddressesPerQuery, len(addrs))]
			topics := make([]common.Hash, len(chunk))
			for j, a := range chunk {
				topics[j] = common.BytesToHash(common.HexToAddress(a).Bytes())
			}
			logs, err := w.Chain.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from),
				ToBlock: new(big.Int).SetUint64(to), Addresses: contracts, Topics: [][]common.Hash{{transferTopic}, nil, topics}})
			if err != nil {
				return nil, err
			}
			for _, l := range logs {
				if l.Removed || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 {
					continue // not an ERC-20 Transfer (an ERC-721 one has 4 topics), or retracted
				}
				b := byNumber[l.BlockNumber]
				if b == nil || b.Hash != l.BlockHash {
					return nil, errMoved
				}
				amount := new(big.Int).SetBytes(l.Data)
				recipient := common.BytesToAddress(l.Topics[2].Bytes())
				if amount.Sign() <= 0 {
					continue
				}
				if _, ok := watched[strings.ToLower(recipient.Hex())]; !ok {
					continue
				}
				record(b, l.TxHash, int64(l.Index), byContract[l.Address], common.BytesToAddress(l.Topics[1].Bytes()), recipient, amount)
			}
		}
	}
	if native := w.nativeToken(); native != nil {
		for _, b := range blocks {
			for _, tx := range b.Txs {
				if tx.To == nil || tx.Value == nil || tx.Value.Sign() <= 0 {
					continue
				}
				if _, ok := watched[strings.ToLower(tx.To.Hex())]; !ok {
					continue
				}
				// A reverted transaction moved nothing: only a successful receipt counts.
				r, err := w.Chain.TransactionReceipt(ctx, tx.Hash)
				if err != nil {
					return nil, err
				}
				if r.BlockHash != b.Hash {
					return nil, errMoved
				}
				if r.Status != types.ReceiptStatusSuccessful {
					continue
				}
				record(b, tx.Hash, -1, *native, tx.From, *tx.To, tx.Value)
			}
		}
	}
	return out, nil
}

func (w *Watcher) contracts() ([]common.Address, map[common.Address]domain.Token) {
	var out []common.Address
	by := map[common.Address]domain.Token{}
	for _, t := range w.Tokens {
		if t.AssetType == domain.ERC20 {
			a := common.HexToAddress(t.ContractAddress)
			out = append(out, a)
			by[a] = t
		}
	}
	return out, by
}

func (w *Watcher) nativeToken() *domain.Token {
	for i, t := range w.Tokens {
		if t.AssetType == domain.Native {
			return &w.Tokens[i]
		}
	}
	return nil
}
