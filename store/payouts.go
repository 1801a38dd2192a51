package store

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
)

// The transaction manager's storage: nonces per (chain, sender), logical outgoing
// transactions, and every signed attempt of each.

// ErrGenesisChanged: the chain's node serves another genesis than the one the stored nonces and
// transactions were made for.
var ErrGenesisChanged = errors.New("the node serves a chain with another genesis than the one this sender's transactions were signed for")

// OutgoingStatus is where a logical outgoing transaction is.
type OutgoingStatus string

// Outgoing transaction states: signed (attempts stored, maybe broadcast), mined (a receipt seen,
// confirmations pending), confirmed, failed (mined with status 0), conflict (its nonce was used
// by a transaction that is none of its attempts: an operator must look).
const (
	OutgoingSigned    OutgoingStatus = "signed"
	OutgoingMined     OutgoingStatus = "mined"
	OutgoingConfirmed OutgoingStatus = "confirmed"
	OutgoingFailed    OutgoingStatus = "failed"
	OutgoingConflict  OutgoingStatus = "conflict"
)

// TxKind is what an outgoing transaction is for.
type TxKind string

// The kinds of outgoing transactions.
const (
	TxPayout   TxKind = "payout"    // a withdrawal's or a refund's transfer
	TxSweep    TxKind = "sweep"     // a deposit address's funds to the hot wallet
	TxGasTopup TxKind = "gas_topup" // native gas sent to a deposit address before its ERC-20 sweep
)

// OutgoingTx is one logical transaction: a nonce of a sender, and what it pays.
type OutgoingTx struct {
	ID           uuid.UUID
	ChainID      int64
	Sender       string
	Nonce        int64
	Kind         TxKind
	KeyIndex     *int64 // the deposit key's child index when the sender is a deposit address (a sweep)
	GenesisHash  string // the chain's genesis it was signed for ("" from before it was recorded)
	WithdrawalID *uuid.UUID
	RefundID     *uuid.UUID // a refund's payout (kind payout, no withdrawal)
	TokenID      string
	Recipient    string
	AmountAsset  decimal.Decimal
	RateUSD      string
	TxTo         string
	TxValue      decimal.Decimal
	TxData       string
	// AuthList is the EIP-7702 authorizations (JSON) of a SetCode transaction; "" for a plain
	// dynamic-fee one.
	AuthList       string
	GasLimit       int64
	Status         OutgoingStatus
	MinedHash      *string
	MinedBlock     *int64
	MinedBlockHash *string
	Error          *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Attempts       []TxAttempt // oldest first
}

// TxAttempt is one signed transaction for a logical one's nonce.
type TxAttempt struct {
	ID           uuid.UUID
	OutgoingTxID uuid.UUID
	Hash         string
	Raw          string // hex
	TipCap       decimal.Decimal
	FeeCap       decimal.Decimal
	CreatedAt    time.Time
	BroadcastAt  *time.Time
	LastError    *string
}

type txNonceRow struct {
	ChainID     int64  `gorm:"primaryKey;autoIncrement:false"`
	Sender      string `gorm:"primaryKey"`
	NextNonce   int64
	GenesisHash *string
}

func (txNonceRow) TableName() string { return "tx_nonces" }

type outgoingTxRow struct {
	ID             uuid.UUID `gorm:"primaryKey"`
	ChainID        int64
	Sender         string
	Nonce          int64
	Kind           TxKind
	KeyIndex       *int64
	GenesisHash    *string
	WithdrawalID   *uuid.UUID
	RefundID       *uuid.UUID
	TokenID        string
	Recipient      string
	AmountAsset    decimal.Decimal
	RateUSD        string `gorm:"column:rate_usd"`
	TxTo           string
	TxValue        decimal.Decimal
	TxData         string
	AuthList       *string
	GasLimit       int64
	Status         OutgoingStatus
	MinedHash      *string
	MinedBlock     *int64
	MinedBlockHash *string
	Error          *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (outgoingTxRow) TableName() string { return "outgoing_txs" }

type txAttemptRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	OutgoingTxID uuid.UUID
	Hash         string
	Raw          string
	TipCap       decimal.Decimal
	FeeCap       decimal.Decimal
	CreatedAt    time.Time
	BroadcastAt  *time.Time
	LastError    *string
}

func (txAttemptRow) TableName() string { return "tx_attempts" }

// PendingWithdrawals lists up to limit pending withdrawals on a chain that have no payout
// transaction yet, oldest first — leaving out those waiting for an approval (issue 23): the
// payout manager never sends one before a second person approved it.
func (t *Tx) PendingWithdrawals(chainID int64, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&withdrawalRow{}).
		Where("status = ? AND chain_id = ? AND NOT "+awaitingApprovalSQL+" AND NOT EXISTS (SELECT 1 FROM outgoing_txs o WHERE o.withdrawal_id = withdrawals.id)",
			domain.WithdrawalPending, chainID).
		Order("created_at, id").Limit(limit).Pluck("id", &ids).Error
	return ids, translate(err)
}

// UnminedOutflow sums what a sender's signed, not yet mined transactions on a chain will take of
// a token (the chain's balance does not show them yet).
func (t *Tx) UnminedOutflow(chainID int64, sender, tokenID string) (decimal.Decimal, error) {
	var rows []outgoingTxRow
	if err := t.db.Select("amount_asset").Where("chain_id = ? AND sender = ? AND token_id = ? AND status = ?", chainID,
		strings.ToLower(sender), tokenID, OutgoingSigned).Find(&rows).Error; err != nil {
		return decimal.Zero, translate(err)
	}
	sum := decimal.Zero
	for _, r := range rows {
		sum = sum.Add(r.AmountAsset)
	}
	return sum, nil
}

// CountPendingWithdrawals counts pending withdrawals per chain (the reason they wait is logged).
func (t *Tx) CountPendingWithdrawals(chainID int64) (int64, error) {
	var n int64
	err := t.db.Model(&withdrawalRow{}).Where("status = ? AND chain_id = ?", domain.WithdrawalPending, chainID).Count(&n).Error
	return n, translate(err)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
