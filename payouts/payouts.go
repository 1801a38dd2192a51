// Package payouts pays withdrawals on chain with a transaction manager that never pays twice
// (DESIGN §11). Per (chain, sender) the nonce lives in the database. A withdrawal's transaction
// is signed in the database transaction that takes its nonce, stores the signed bytes and moves
// the withdrawal to processing — and is broadcast only after that commits, so a crash at any
// point leaves either nothing (the withdrawal still pending) or the stored bytes, which are
// broadcast again, never re-signed under a new nonce. A transaction not mined in time gets a new
// attempt at the same nonce with higher fees; every attempt is kept, since any of them can be
// the one mined. A receipt decides: status 1 at the chain's confirmation depth completes the
// withdrawal with a receipt from the chain; status 0 fails it (the lifecycle core books the
// reversal); a receipt that a reorg removed sends the stored bytes again.
package payouts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
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
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// Chain is what the manager asks of a chain's JSON-RPC (chain.Client).
type Chain interface {
	BlockNumber(ctx context.Context) (uint64, error)
	Block(ctx context.Context, n uint64, withTxs bool) (*chain.Block, error)
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	SendRawTransaction(ctx context.Context, raw []byte) (common.Hash, error)
	NonceAt(ctx context.Context, addr common.Address, block *big.Int) (uint64, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	HeaderBaseFee(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	BalanceAt(ctx context.Context, addr common.Address, block *big.Int) (*big.Int, error)
	CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error)
}

// Config tunes a chain's manager.
type Config struct {
	Interval    time.Duration // between rounds
	BumpAfter   time.Duration // an attempt not mined this long gets a successor with higher fees
	ResendAfter time.Duration // an attempt is broadcast again this often while not mined
	Batch       int           // withdrawals signed per round
	// SweepMinUSD is the value of a deposit address's unswept transfers of a token from which it
	// is swept; SweepEvery is how often addresses are looked at (0: only when an operator asks).
	SweepMinUSD decimal.Decimal
	SweepEvery  time.Duration
	// SweepGiveUp: a sweep transaction not mined this long after it was signed is given up (the
	// next sweep signs again at the same nonce, the chain's count, with today's fees; at most one
	// of them can be mined). Sweeps are never fee-bumped: the deposit address's gas is fixed.
	SweepGiveUp time.Duration
	// PauseAfterSign, for fault tests only, waits between the commit of a signed transaction
	// and its broadcast (logged), so a test can kill the process exactly there.
	PauseAfterSign time.Duration
}

// DefaultConfig is the production tuning.
func DefaultConfig() Config {
	return Config{Interval: time.Second, BumpAfter: 3 * time.Minute, ResendAfter: 30 * time.Second, Batch: 50,
		SweepMinUSD: decimal.NewFromInt(100), SweepEvery: time.Minute, SweepGiveUp: 15 * time.Minute}
}

// Manager pays one chain's withdrawals from the hot wallet.
type Manager struct {
	Chain  Chain
	Info   domain.Chain
	Wallet *hotwallet.Wallet // nil: no key for this chain; withdrawals wait (Blocked says why)
	// Deposits signs sweeps of deposit addresses; nil: this process does not sweep.
	Deposits DepositKeys
	Store    *store.Store
	Core     *lifecycle.Core
	Catalog  domain.Catalog
	Prices   pricing.Source
	Config   Config
	Log      *slog.Logger
	Now      func() time.Time
	Observe  func(RoundResult, error)

	lastBlockedLog time.Time
	lastSweep      time.Time
	genesis        string // the chain's genesis hash, read at the first round and when the head goes back
	lastHead       uint64
}

// RoundResult says what one round did.
type RoundResult struct {
	Skipped   bool
	Signed    int    // withdrawals signed (moved to processing)
	Completed int    // withdrawals completed
	Failed    int    // withdrawals failed on chain
	Waiting   int    // pending withdrawals left waiting (no key, or the hot wallet short)
	Blocked   string // why they wait, when they do

	SweepsStarted   int // sweeps (or their gas top-ups) signed
	SweepsConfirmed int // sweeps done
}

// ErrNoHotWallet is why withdrawals wait on a chain without a signing key.
var ErrNoHotWallet = errors.New("no hot wallet key for this chain (PAYMENTS_HOT_WALLET_KEY or PAYMENTS_HOT_WALLET_KEYSTORE)")

// LeaseName is the lease the manager's loop holds: one process signs a chain's payouts and
// sweeps at a time. Sweeps share it (no lease of their own): they and their gas top-ups are
// signed by the same hot wallet, whose nonces two signers would race for.
func (m *Manager) LeaseName() string { return "payout:" + chains.CAIP2(m.Info.ID) }

// Loop is the manager as a background loop (internal/worker, which holds its lease): a round
// every Interval.
func (m *Manager) Loop() worker.Loop {
	return worker.Loop{Name: m.LeaseName(), Lease: m.LeaseName(), Interval: m.Config.Interval,
		Round: func(ctx context.Context) (bool, error) {
			res, err := m.Round(ctx)
			if m.Observe != nil && ctx.Err() == nil {
				m.Observe(res, err)
			}
			return false, err
		},
		Skipped: func() {
			if m.Observe != nil {
				m.Observe(RoundResult{Skipped: true}, nil)
			}
		}}
}

// Round follows every transaction in flight, then signs and sends what is pending, then sweeps.
// The caller holds the chain's lease (LeaseName): the loop's runtime, or a test.
func (m *Manager) Round(ctx context.Context) (RoundResult, error) {
	var res RoundResult
	if m.Wallet == nil {
		if err := m.refuseSweepRequests(ctx, "not swept: no hot wallet key for this chain to sweep into"); err != nil {
			return res, err
		}
		n, err := m.Store.Read(ctx).CountPendingWithdrawals(m.Info.ID)
		res.Waiting, res.Blocked = int(n), ErrNoHotWallet.Error()
		if n > 0 && m.Now().Sub(m.lastBlockedLog) > time.Minute {
			m.lastBlockedLog = m.Now()
			m.Log.Warn("withdrawals wait", "chain", chains.CAIP2(m.Info.ID), "pending", n, "reason", res.Blocked)
		}
		return res, err
	}
	if err := m.checkGenesis(ctx); err != nil {
		return res, err
	}
	var errs []error
	if err := m.follow(ctx, &res); errors.Is(err, store.ErrGenesisChanged) {
		return res, err
	} else if err != nil {
		errs = append(errs, err)
	}
	if err := m.sendPending(ctx, &res); err != nil {
		errs = append(errs, err)
	}
	if m.Deposits == nil {
		if err := m.refuseSweepRequests(ctx, "not swept: the worker holds no deposit private key "+
			"(PAYMENTS_DEPOSIT_XPRV or PAYMENTS_DEPOSIT_MNEMONIC_FILE; the embedded development key keeps its own)"); err != nil {
			errs = append(errs, err)
		}
	} else if err := m.sweepRound(ctx, &res); err != nil {
		errs = append(errs, err)
	}
	// Each step went on past the transactions and withdrawals that failed: the loop keeps its pace.
	return res, worker.Partial(errors.Join(errs...))
}

// follow moves every transaction in flight — payouts, sweeps, gas top-ups: receipts,
// confirmations, reorgs, resends, bumps.
func (m *Manager) follow(ctx context.Context, res *RoundResult) error {
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
				return fmt.Errorf("%s: %w (nonce %d of %s): check PAYMENTS_RPC_URLS", chains.CAIP2(m.Info.ID),
					store.ErrGenesisChanged, o.Nonce, o.Sender)
			}
			if err := m.abandon(ctx, o, res); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := m.followOne(ctx, o, int64(head), res); err != nil {
			m.Log.Error("follow a payout transaction", "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkGenesis reads the chain's genesis at the first round and again whenever the head went
// back (a development chain restarted from a new genesis starts again at block 0).
func (m *Manager) checkGenesis(ctx context.Context) error {
	head, err := m.Chain.BlockNumber(ctx)
	if err != nil {
		return err
	}
	if m.genesis == "" || head < m.lastHead {
		g, err := m.Chain.Block(ctx, 0, false)
		if err != nil {
			return err
		}
		if m.genesis != "" && !strings.EqualFold(m.genesis, g.Hash.Hex()) {
			m.Log.Warn("the chain's genesis changed (a development chain restarted?): nonces start over, transactions in flight "+
				"on the old chain are given up", "chain", chains.CAIP2(m.Info.ID))
		}
		m.genesis = strings.ToLower(g.Hash.Hex())
	}
	m.lastHead = head
	return nil
}

// devChain reports whether the chain is a development chain, one whose genesis changes when it
// restarts: there, and only there, what was signed for the old chain is given up.
func (m *Manager) devChain() bool { return chains.IsDevnet(m.Info.ID) }

// abandon gives up a transaction signed for a chain that no longer exists (its genesis is not
// the chain's now): it can never be mined here. Its withdrawal fails with the amount restored;
// its sweep fails, and the transfers it covered were orphaned with their chain.
func (m *Manager) abandon(ctx context.Context, o store.OutgoingTx, res *RoundResult) error {
	now := m.Now()
	msg := fmt.Sprintf("the chain was reset (a new genesis: a development chain restarted); the transaction signed for the "+
		"old chain (nonce %d) can never be mined on this one", o.Nonce)
	m.Log.Warn("transaction of a chain that no longer exists given up", "chain", chains.CAIP2(m.Info.ID), "kind", o.Kind,
		"sender", o.Sender, "nonce", o.Nonce, "withdrawal", o.WithdrawalID)
	err := m.Store.InTx(ctx, func(tx *store.Tx) error {
		if o.WithdrawalID != nil {
			if _, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
				w.ErrorMessage = &msg
				return w.TransitionTo(domain.WithdrawalFailed)
			}); err != nil {
				return err
			}
		}
		return tx.SetOutgoing(o.ID, store.OutgoingFailed, o.MinedHash, o.MinedBlock, o.MinedBlockHash, &msg, now)
	})
	if err == nil && o.WithdrawalID != nil {
		res.Failed++
	}
	return err
}

// followOne looks for a receipt of any attempt of one logical transaction and moves it on:
// mined, confirmed at depth, dropped by a reorg, or still waiting (resent or bumped).
func (m *Manager) followOne(ctx context.Context, o store.OutgoingTx, head int64, res *RoundResult) error {
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
			m.Log.Warn("payout receipt dropped by a reorg: sending the stored transaction again", "chain", chains.CAIP2(m.Info.ID),
				"nonce", o.Nonce, "tx", *o.MinedHash)
			if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetOutgoing(o.ID, store.OutgoingSigned, nil, nil, nil, nil, now)
			}); err != nil {
				return err
			}
			for _, a := range o.Attempts {
				if strings.EqualFold(a.Hash, *o.MinedHash) {
					return m.broadcast(ctx, o, a)
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
	return m.settle(ctx, o, mined, rc, b, res)
}

// settle finishes a logical transaction whose receipt reached the chain's depth.
func (m *Manager) settle(ctx context.Context, o store.OutgoingTx, a *store.TxAttempt, rc *types.Receipt, b *chain.Block, res *RoundResult) error {
	now := m.Now()
	hash := strings.ToLower(a.Hash)
	block, blockHash := rc.BlockNumber.Int64(), strings.ToLower(rc.BlockHash.Hex())
	if o.WithdrawalID == nil { // a sweep or a gas top-up: its sweep moves on by this status
		status := store.OutgoingConfirmed
		if rc.Status != types.ReceiptStatusSuccessful {
			status = store.OutgoingFailed
		}
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetOutgoing(o.ID, status, &hash, &block, &blockHash, nil, now)
		})
	}
	tok, ok := m.Catalog.Tokens[o.TokenID]
	if !ok {
		return fmt.Errorf("payout %s: token %s is not in the catalogue", o.ID, o.TokenID)
	}
	cost := money.GasCost(rc.GasUsed, rc.EffectiveGasPrice)
	costUSD := int64(0)
	if p, err := m.nativePrice(ctx); err == nil {
		if f, err := money.GasCostUSDFractions(cost, m.Info.NativeDecimals, p); err == nil {
			costUSD = f
		}
	}
	err := m.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := m.Core.UpdateWithdrawalTx(tx, *o.WithdrawalID, func(w *domain.Withdrawal) error {
			if rc.Status != types.ReceiptStatusSuccessful {
				msg := fmt.Sprintf("the payout transaction %s reverted on chain (block %d, status 0); the amount is back in the balance", hash, block)
				w.ErrorMessage = &msg
				return w.TransitionTo(domain.WithdrawalFailed)
			}
			w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: tok, SettledAmountAsset: o.AmountAsset,
				SettledAmountUSD: decimal.New(w.AmountInCents, -2), TxHash: hash, TxBlockNumber: block,
				TxTimestamp: time.Unix(int64(b.Time), 0).UTC(), TxSenderAddress: strings.ToLower(o.Sender), TxGasUsed: int64(rc.GasUsed),
				TxTotalCost: cost, TxTotalCostUSDFractions: costUSD, TxIsSponsored: false, ProcessedBy: domain.ProcessedByCron, CreatedAt: now}
			return w.TransitionTo(domain.WithdrawalCompleted)
		})
		if err != nil {
			return err
		}
		status := store.OutgoingConfirmed
		if rc.Status != types.ReceiptStatusSuccessful {
			status = store.OutgoingFailed
		}
		return tx.SetOutgoing(o.ID, status, &hash, &block, &blockHash, nil, now)
	})
	if err != nil {
		return err
	}
	if rc.Status == types.ReceiptStatusSuccessful {
		res.Completed++
		m.Log.Info("withdrawal paid", "withdrawal", *o.WithdrawalID, "chain", chains.CAIP2(m.Info.ID), "tx", hash, "block", block)
	} else {
		res.Failed++
		m.Log.Error("withdrawal failed on chain (status 0)", "withdrawal", *o.WithdrawalID, "tx", hash, "block", block)
	}
	return nil
}

// resendOrBump broadcasts the newest attempt again when it is due, or signs a successor at the
// same nonce with higher fees when the newest has waited too long.
func (m *Manager) resendOrBump(ctx context.Context, o store.OutgoingTx) error {
	now := m.Now()
	last := o.Attempts[len(o.Attempts)-1]
	if o.KeyIndex != nil { // a sweep from a deposit address: resent, never bumped; given up in time
		if o.Status == store.OutgoingSigned && now.Sub(o.CreatedAt) >= m.Config.SweepGiveUp {
			msg := fmt.Sprintf("not mined within %s of signing: given up; the next sweep signs again at the chain's nonce %d", m.Config.SweepGiveUp, o.Nonce)
			m.Log.Warn("sweep transaction given up", "chain", chains.CAIP2(m.Info.ID), "sender", o.Sender, "nonce", o.Nonce, "tx", last.Hash)
			return m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetOutgoing(o.ID, store.OutgoingFailed, nil, nil, nil, &msg, now)
			})
		}
		if m.resendDue(last, now) {
			return m.broadcast(ctx, o, last)
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
		return m.broadcast(ctx, o, last)
	}
	return nil
}

// resendDue: an attempt no node has accepted yet, or one accepted ResendAfter ago and still not
// mined, goes out again (the same bytes).
func (m *Manager) resendDue(a store.TxAttempt, now time.Time) bool {
	return a.BroadcastAt == nil || a.LastError != nil || now.Sub(*a.BroadcastAt) >= m.Config.ResendAfter
}

// bump signs a new attempt: same nonce, recipient, value and data; tip and fee cap each raised
// by at least 12.5 % (geth refuses a replacement under +10 %), and never below today's fees.
// It is stored before it is sent.
func (m *Manager) bump(ctx context.Context, o store.OutgoingTx, last store.TxAttempt) error {
	tip, feeCap, err := m.fees(ctx)
	if err != nil {
		return err
	}
	raise := func(old decimal.Decimal, now *big.Int) *big.Int {
		up := old.Mul(decimal.NewFromInt(1125)).Div(decimal.NewFromInt(1000)).Ceil().Add(decimal.NewFromInt(1)).BigInt()
		if now.Cmp(up) > 0 {
			return now
		}
		return up
	}
	tip, feeCap = raise(last.TipCap, tip), raise(last.FeeCap, feeCap)
	if feeCap.Cmp(tip) < 0 {
		feeCap = new(big.Int).Set(tip)
	}
	a, err := m.sign(o, tip, feeCap)
	if err != nil {
		return err
	}
	if err := m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertAttempt(a) }); err != nil {
		return err
	}
	m.Log.Warn("payout not mined in time: fees bumped", "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce,
		"previous", last.Hash, "tx", a.Hash, "tip", tip.String(), "fee_cap", feeCap.String())
	return m.broadcast(ctx, o, a)
}

// broadcast sends an attempt's stored bytes. "Already known" is success. An ambiguous failure
// leaves the attempt to be sent again (the same bytes, never re-signed). "Nonce too low" with
// no receipt for any attempt means another transaction took the nonce: an operator must look.
func (m *Manager) broadcast(ctx context.Context, o store.OutgoingTx, a store.TxAttempt) error {
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
		m.Log.Error("PAYOUT NONCE CONFLICT: an operator must look", "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce, "withdrawal", o.WithdrawalID)
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.MarkBroadcast(a.ID, now, sendErr.Error()); err != nil {
				return err
			}
			return tx.SetOutgoing(o.ID, store.OutgoingConflict, nil, nil, nil, &msg, now)
		})
	default:
		m.Log.Warn("payout broadcast failed; the same bytes go out again", "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce,
			"tx", a.Hash, "err", sendErr)
		return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkBroadcast(a.ID, now, sendErr.Error()) })
	}
}

// sendPending signs and sends pending withdrawals the hot wallet can fund, oldest first.
func (m *Manager) sendPending(ctx context.Context, res *RoundResult) error {
	// Every pending withdrawal is looked at (ids only, up to a bound), so the ones that wait —
	// a token the wallet lacks, a recipient a token refuses — never hold up the others.
	ids, err := m.Store.Read(ctx).PendingWithdrawals(m.Info.ID, 1000)
	if err != nil || len(ids) == 0 {
		return err
	}
	var errs []error
	for _, id := range ids {
		if res.Signed >= m.Config.Batch {
			break
		}
		signed, reason, err := m.sendOne(ctx, id)
		switch {
		case err != nil:
			m.Log.Error("sign a payout", "withdrawal", id, "err", err)
			errs = append(errs, err)
			res.Waiting++
			res.Blocked = err.Error()
		case signed:
			res.Signed++
		default:
			res.Waiting++
			res.Blocked = reason
		}
	}
	if res.Waiting > 0 && m.Now().Sub(m.lastBlockedLog) > time.Minute {
		m.lastBlockedLog = m.Now()
		m.Log.Warn("withdrawals wait", "chain", chains.CAIP2(m.Info.ID), "pending", res.Waiting, "reason", res.Blocked)
	}
	return errors.Join(errs...)
}

// sendOne signs one withdrawal's payout, or says why it waits.
func (m *Manager) sendOne(ctx context.Context, id uuid.UUID) (signed bool, reason string, err error) {
	w, err := m.Store.Read(ctx).WithdrawalByID(id, m.Catalog)
	if err != nil {
		return false, "", err
	}
	if w.Status != domain.WithdrawalPending {
		return false, "", nil
	}
	amount, rate, err := m.amount(ctx, w)
	if err != nil {
		return false, "", err
	}
	// The token first: a node cannot estimate the gas of a transfer the wallet cannot make.
	if short, err := m.tokenShort(ctx, w.Token, amount); err != nil || short != "" {
		return false, short, err
	}
	o, err := m.payout(ctx, w, amount, rate)
	if err != nil {
		return false, "", err
	}
	tip, feeCap, err := m.fees(ctx)
	if err != nil {
		return false, "", err
	}
	if short, err := m.gasShort(ctx, o, feeCap); err != nil || short != "" {
		return false, short, err
	}
	first, err := m.signNew(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := m.Core.UpdateWithdrawalTx(tx, w.ID, func(w *domain.Withdrawal) error {
			return w.TransitionTo(domain.WithdrawalProcessing)
		})
		return err
	})
	var te *domain.TransitionError
	if errors.As(err, &te) {
		return false, "", nil // cancelled meanwhile: nothing signed survives the rollback
	}
	if err != nil {
		return false, "", err
	}
	m.Log.Info("payout signed and stored", "withdrawal", w.ID, "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce, "tx", first.Hash,
		"amount", o.AmountAsset.String(), "token", w.Token.ID)
	if p := m.Config.PauseAfterSign; p > 0 {
		m.Log.Warn("fault test: pausing between storing a signed payout and broadcasting it", "tx", first.Hash, "pause", p.String())
		select {
		case <-ctx.Done():
			return true, "", nil
		case <-time.After(p):
		}
	}
	return true, "", m.broadcast(ctx, o, first)
}

// amount converts a withdrawal's cents to the token's smallest unit at the current price
// (stablecoins pegged at 1.00), rounded down: never pay out more than the balance debited.
func (m *Manager) amount(ctx context.Context, w domain.Withdrawal) (decimal.Decimal, decimal.Decimal, error) {
	t := w.Token
	rate, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID, Stablecoin: t.Type == domain.Stablecoin})
	if err != nil {
		return decimal.Zero, decimal.Zero, err
	}
	if !rate.IsPositive() {
		return decimal.Zero, decimal.Zero, fmt.Errorf("price of %s is %s", t.Symbol, rate)
	}
	units, err := money.UnitsToSend(w.AmountInCents, rate, t.Decimals)
	if err != nil {
		return decimal.Zero, decimal.Zero, err
	}
	if !units.IsPositive() {
		return decimal.Zero, decimal.Zero, fmt.Errorf("withdrawal %s: %d cents is less than one unit of %s", w.ID, w.AmountInCents, t.Symbol)
	}
	return units, rate, nil
}

// payout builds the logical transaction of a withdrawal (nonce and attempts come later).
func (m *Manager) payout(ctx context.Context, w domain.Withdrawal, amount, rate decimal.Decimal) (store.OutgoingTx, error) {
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(m.Wallet.Address().Hex()),
		Kind: store.TxPayout, WithdrawalID: &w.ID, TokenID: w.Token.ID, Recipient: w.RecipientAddress, AmountAsset: amount,
		RateUSD: rate.String(), CreatedAt: m.Now()}
	recipient := common.HexToAddress(w.RecipientAddress)
	if w.Token.AssetType == domain.Native {
		// 21,000 to a plain account; a contract wallet (a Safe, an ERC-4337 account) needs more.
		gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: m.Wallet.Address(), To: &recipient, Value: amount.BigInt()})
		if err != nil {
			return o, fmt.Errorf("estimate the payout's gas: %w", err)
		}
		if gas > 21_000 {
			gas = gas * 5 / 4
		}
		o.TxTo, o.TxValue, o.TxData, o.GasLimit = strings.ToLower(recipient.Hex()), amount, "", int64(max(gas, 21_000))
		return o, nil
	}
	token := common.HexToAddress(w.Token.ContractAddress)
	data := chain.ERC20TransferCalldata(recipient, amount.BigInt())
	// The token's own estimate, with a margin: a transfer's cost varies with the recipient's
	// storage (first receipt costs more).
	gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: m.Wallet.Address(), To: &token, Data: data})
	if err != nil {
		return o, fmt.Errorf("estimate the payout's gas: %w", err)
	}
	o.TxTo, o.TxValue, o.TxData, o.GasLimit = strings.ToLower(token.Hex()), decimal.Zero, hex.EncodeToString(data), int64(gas*5/4)
	return o, nil
}

// tokenShort says why the hot wallet cannot fund a payout's ERC-20 amount now ("" when it
// can), counting what signed transactions not yet mined will take.
func (m *Manager) tokenShort(ctx context.Context, tok domain.Token, amount decimal.Decimal) (string, error) {
	if tok.AssetType != domain.ERC20 {
		return "", nil
	}
	addr := m.Wallet.Address()
	bal, err := chain.ERC20Balance(ctx, m.Chain, common.HexToAddress(tok.ContractAddress), addr)
	if err != nil {
		return "", err
	}
	pending, err := m.Store.Read(ctx).UnminedOutflow(m.Info.ID, addr.Hex(), tok.ID)
	if err != nil {
		return "", err
	}
	have, need := decimal.NewFromBigInt(bal, 0), amount.Add(pending)
	if have.LessThan(need) {
		return fmt.Sprintf("the hot wallet %s holds %s %s (smallest unit); the payouts signed and this one need %s",
			strings.ToLower(addr.Hex()), have, tok.Symbol, need), nil
	}
	return "", nil
}

// gasShort says why the hot wallet cannot pay a payout's native value and gas at feeCap now
// ("" when it can), counting what signed transactions not yet mined will take.
func (m *Manager) gasShort(ctx context.Context, o store.OutgoingTx, feeCap *big.Int) (string, error) {
	addr := m.Wallet.Address()
	eth, err := m.Chain.BalanceAt(ctx, addr, nil)
	if err != nil {
		return "", err
	}
	// What the signed, not yet mined transactions will take: their value and their gas at their
	// newest fee cap.
	open, err := m.Store.Read(ctx).OpenOutgoingTxs(m.Info.ID, addr.Hex())
	if err != nil {
		return "", err
	}
	pending := decimal.Zero
	for _, x := range open {
		if x.Status != store.OutgoingSigned || len(x.Attempts) == 0 {
			continue
		}
		cap := x.Attempts[len(x.Attempts)-1].FeeCap
		pending = pending.Add(x.TxValue).Add(cap.Mul(decimal.NewFromInt(x.GasLimit)))
	}
	need := decimal.NewFromBigInt(new(big.Int).Mul(feeCap, big.NewInt(o.GasLimit)), 0).Add(o.TxValue).Add(pending)
	have := decimal.NewFromBigInt(eth, 0)
	if have.LessThan(need) {
		return fmt.Sprintf("the hot wallet %s holds %s wei of the native token; the payouts signed and this one need %s with gas",
			strings.ToLower(addr.Hex()), have, need), nil
	}
	return "", nil
}

// fees are today's tip and a fee cap of twice the base fee plus the tip.
func (m *Manager) fees(ctx context.Context) (tip, feeCap *big.Int, err error) {
	if tip, err = m.Chain.SuggestGasTipCap(ctx); err != nil {
		return nil, nil, err
	}
	base, err := m.Chain.HeaderBaseFee(ctx)
	if err != nil {
		return nil, nil, err
	}
	return tip, new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip), nil
}

// signNew takes the sender's next nonce, signs the logical transaction's first attempt and
// stores both with what along (the withdrawal's or the sweep's own change) in one database
// transaction. Only then may the caller broadcast it.
func (m *Manager) signNew(ctx context.Context, o *store.OutgoingTx, tip, feeCap *big.Int, along func(tx *store.Tx) error) (store.TxAttempt, error) {
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

// takeNonce takes a sender's next nonce. A deposit address signs one transaction at a time, at
// the chain's own count: its sweeps share its gas, and one given up leaves no gap. The hot wallet
// keeps its count in the database (TakeNonce).
func (m *Manager) takeNonce(tx *store.Tx, sender string, deposit bool, chainNonce int64) (int64, error) {
	if !deposit {
		return tx.TakeNonce(m.Info.ID, sender, chainNonce, m.genesis, m.devChain())
	}
	busy, err := tx.HasOpenOutgoing(m.Info.ID, sender)
	if err != nil {
		return 0, err
	}
	if busy {
		return 0, fmt.Errorf("%s has a transaction in flight: %w", sender, store.ErrConflict)
	}
	return tx.TakeChainNonce(m.Info.ID, sender, chainNonce, m.genesis)
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
	signed, raw, err := signer.Sign(&types.DynamicFeeTx{Nonce: uint64(o.Nonce), GasTipCap: tip, GasFeeCap: feeCap,
		Gas: uint64(o.GasLimit), To: &to, Value: o.TxValue.BigInt(), Data: data}, m.Info.ID)
	if err != nil {
		return store.TxAttempt{}, err
	}
	return store.TxAttempt{ID: uuid.Must(uuid.NewV7()), OutgoingTxID: o.ID, Hash: strings.ToLower(signed.Hash().Hex()),
		Raw: hex.EncodeToString(raw), TipCap: decimal.NewFromBigInt(tip, 0), FeeCap: decimal.NewFromBigInt(feeCap, 0),
		CreatedAt: m.Now()}, nil
}

func (m *Manager) nativePrice(ctx context.Context) (decimal.Decimal, error) {
	t, ok := m.Catalog.NativeToken(m.Info.ID)
	if !ok {
		return decimal.Zero, fmt.Errorf("no native token for %s", chains.CAIP2(m.Info.ID))
	}
	return m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID})
}
