// Package txmgr is the chain-facing transaction manager that payouts and sweeps share: it
// never pays twice. Per (chain, sender) the nonce lives in the database. A logical
// transaction is signed in the database transaction that takes its nonce and stores the signed
// bytes together with its owner's change (a withdrawal moving to processing, a sweep recorded),
// and it is broadcast only after that commits: a crash at any point leaves either nothing or the
// stored bytes, which are broadcast again, never re-signed under a new nonce. A transaction not
// mined in time gets a new attempt at the same nonce with higher fees (fees.go); every attempt is
// kept, since any of them can be the one mined. A receipt decides, at the chain's confirmation
// depth; a receipt a reorg removed sends the stored bytes again.
//
// What a transaction is for stays with its owner (package payouts): the owner builds the
// logical transaction (recipient, value, call data, gas) and is called back when it ends
// (Hooks). The manager knows no withdrawal and no sweep.
package txmgr

import (
	"context"
	"log/slog"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/hotwallet"
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
	BalanceAt(ctx context.Context, addr common.Address, block *big.Int) (*big.Int, error)
}

// Config tunes the manager.
type Config struct {
	BumpAfter   time.Duration // an attempt not mined this long gets a successor with higher fees
	ResendAfter time.Duration // an attempt is broadcast again this often while not mined
	// GiveUpAfter: a transaction of a deposit address (fixed gas, never bumped) not mined this
	// long after it was signed is given up; the next one signs again at the same nonce.
	GiveUpAfter time.Duration
	// PauseAfterSign, for fault tests only, waits between the commit of a signed transaction
	// and its broadcast (logged), so a test can kill the process exactly there.
	PauseAfterSign time.Duration
}

// Manager sends and follows one chain's outgoing transactions. Its owner refreshes Chain and
// Config before each round (tests swap them between rounds); the genesis it read is kept.
type Manager struct {
	Chain  Chain
	Info   domain.Chain
	Wallet *hotwallet.Wallet // the hot wallet: signs payouts and gas top-ups
	// Deposits signs for deposit addresses (sweeps); nil: this process does not sweep.
	Deposits DepositKeys
	Store    *store.Store
	Config   Config
	Log      *slog.Logger
	Now      func() time.Time

	genesis  string // the chain's genesis hash, read at the first round and when the head goes back
	lastHead uint64
}

// Final is a logical transaction's receipt at the chain's confirmation depth, in a block that is
// still canonical.
type Final struct {
	Hash      string // the attempt mined (lowercase)
	Receipt   *types.Receipt
	Block     *chain.Block
	Succeeded bool // receipt status 1
}

// Record commits a logical transaction's outcome together with its owner's change (along; nil
// for none) in one database transaction.
type Record func(along func(tx *store.Tx) error) error

// Hooks are the owner's callbacks when a logical transaction ends. Each must call record
// exactly once (or return an error): the outcome and the owner's change commit together. A nil
// hook records the outcome alone.
type Hooks struct {
	// Final: the receipt reached the chain's depth (succeeded or reverted).
	Final func(ctx context.Context, o store.OutgoingTx, f Final, record Record) error
	// Abandoned: signed for a development chain that restarted from a new genesis; it can never
	// be mined. reason says so.
	Abandoned func(ctx context.Context, o store.OutgoingTx, reason string, record Record) error
}

func (m *Manager) caip() string { return chains.CAIP2(m.Info.ID) }
