// Package payouts is the payout and sweep policy of a chain: which withdrawals and refunds
// are paid and when (the hot wallet funds them), which deposit addresses are swept into the
// hot wallet, and what their transactions' outcomes do to withdrawals and sweeps. Nonces,
// signing before broadcasting, following receipts to confirmation, resends and fee bumps are the
// transaction manager's (package txmgr), which this package drives each round and which calls
// it back (txmgr.Hooks) when a transaction ends: a withdrawal is completed with a receipt from
// the chain, or failed (the lifecycle core books the reversal), in the database transaction
// that records its transaction's outcome.
package payouts

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

// Chain is what the manager asks of a chain's JSON-RPC (chain.Client): the transaction
// manager's needs, and gas estimates and token balances for building transactions.
type Chain interface {
	txmgr.Chain
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error)
	CodeAt(ctx context.Context, addr common.Address, block *big.Int) ([]byte, error)
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
	// Sweeping without gas top-ups (sweep_batch.go): the chain's SweepBatch and SweepDelegate
	// contracts, both paying the hot wallet ("" SweepBatch: none; every token is topped up);
	// whether the chain accepts EIP-7702 transactions; the methods in order of preference (nil:
	// DefaultSweepMethods); the most pulls in one batch.
	SweepBatch, SweepDelegate string
	SweepEIP7702              bool
	SweepMethods              []SweepMethod
	SweepBatchMax             int
	// PauseAfterSign, for fault tests only, waits between the commit of a signed transaction
	// and its broadcast (logged), so a test can kill the process exactly there.
	PauseAfterSign time.Duration
}

// DefaultConfig is the production tuning.
func DefaultConfig() Config {
	return Config{Interval: time.Second, BumpAfter: 3 * time.Minute, ResendAfter: 30 * time.Second, Batch: 50,
		SweepMinUSD: decimal.NewFromInt(100), SweepEvery: time.Minute, SweepGiveUp: 15 * time.Minute,
		SweepBatchMax: DefaultSweepBatchMax}
}

// DepositKeys derives the signing key of a deposit address (wallet.Keys). Only a process that
// sweeps holds it.
type DepositKeys = txmgr.DepositKeys

// Manager pays one chain's withdrawals from the hot wallet and sweeps its deposit addresses.
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
	contractsWhy   string // why the sweep contracts were last found unusable, logged when it changes
	// tx is the chain's transaction manager, kept by value: it keeps the genesis it read, and a
	// copy of the Manager (a second manager in a test) gets its own.
	tx txmgr.Manager
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

// Round follows every transaction in flight, then relays customers' signed transfers (relay.go),
// signs and sends what is pending, then sweeps.
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
	m.refreshTx()
	if err := m.tx.CheckGenesis(ctx); err != nil {
		return res, err
	}
	var errs []error
	if err := m.tx.Follow(ctx, m.hooks(&res)); errors.Is(err, store.ErrGenesisChanged) {
		return res, err
	} else if err != nil {
		errs = append(errs, err)
	}
	// Customers' signed transfers first: each waits on a deadline, withdrawals do not.
	if err := m.relayGaslessPayments(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := m.sendPending(ctx, &res); err != nil {
		errs = append(errs, err)
	}
	if err := m.sendRefunds(ctx, &res); err != nil {
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

// refreshTx hands the transaction manager this round's chain, keys and tuning (the fields are
// the manager's public knobs, which tests turn between rounds); the genesis it read survives
// the rounds.
func (m *Manager) refreshTx() {
	t := &m.tx
	t.Chain, t.Info, t.Wallet, t.Deposits, t.Store, t.Log, t.Now = m.Chain, m.Info, m.Wallet, m.Deposits, m.Store, m.Log, m.Now
	t.Config = txmgr.Config{BumpAfter: m.Config.BumpAfter, ResendAfter: m.Config.ResendAfter, GiveUpAfter: m.Config.SweepGiveUp,
		PauseAfterSign: m.Config.PauseAfterSign}
}
