package store

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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
	TxPayout   TxKind = "payout"    // a withdrawal's transfer
	TxSweep    TxKind = "sweep"     // a deposit address's funds to the hot wallet
	TxGasTopup TxKind = "gas_topup" // native gas sent to a deposit address before its ERC-20 sweep
)

// OutgoingTx is one logical transaction: a nonce of a sender, and what it pays.
type OutgoingTx struct {
	ID             uuid.UUID
	ChainID        int64
	Sender         string
	Nonce          int64
	Kind           TxKind
	KeyIndex       *int64 // the deposit key's child index when the sender is a deposit address (a sweep)
	GenesisHash    string // the chain's genesis it was signed for ("" from before it was recorded)
	WithdrawalID   *uuid.UUID
	TokenID        string
	Recipient      string
	AmountAsset    decimal.Decimal
	RateUSD        string
	TxTo           string
	TxValue        decimal.Decimal
	TxData         string
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
	TokenID        string
	Recipient      string
	AmountAsset    decimal.Decimal
	RateUSD        string `gorm:"column:rate_usd"`
	TxTo           string
	TxValue        decimal.Decimal
	TxData         string
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

// TakeNonce takes the sender's next nonce on a chain under a row lock and advances it. The
// stored value is the source of truth; atLeast (the chain's count of the sender's mined
// transactions) only moves it forward — a nonce below it can never be mined again. On a chain
// whose genesis is not the one the stored nonce was counted on, the count starts over from
// atLeast when restart allows it (a development chain restarted); otherwise it is
// ErrGenesisChanged: a node serving another chain under the same id must not be paid from.
func (t *Tx) TakeNonce(chainID int64, sender string, atLeast int64, genesis string, restart bool) (int64, error) {
	sender = strings.ToLower(sender)
	var row txNonceRow
	err := t.forUpdate().Take(&row, "chain_id = ? AND sender = ?", chainID, sender).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if err := t.db.Create(&txNonceRow{ChainID: chainID, Sender: sender, NextNonce: atLeast + 1, GenesisHash: &genesis}).Error; err != nil {
			return 0, translate(err)
		}
		return atLeast, nil
	}
	if err != nil {
		return 0, translate(err)
	}
	n := max(row.NextNonce, atLeast)
	if row.GenesisHash == nil {
		// Rows from before genesis hashes were kept: this sender's transactions were for the chain
		// as it is now. Saying so keeps their nonces unique against the ones taken from now on.
		if err := t.db.Model(&outgoingTxRow{}).Where("chain_id = ? AND sender = ? AND genesis_hash IS NULL", chainID, sender).
			Update("genesis_hash", genesis).Error; err != nil {
			return 0, translate(err)
		}
	} else if *row.GenesisHash != genesis {
		if !restart {
			return 0, ErrGenesisChanged
		}
		n = atLeast
	}
	if err := t.db.Model(&txNonceRow{}).Where("chain_id = ? AND sender = ?", chainID, sender).
		Updates(map[string]any{"next_nonce": n + 1, "genesis_hash": genesis}).Error; err != nil {
		return 0, translate(err)
	}
	return n, nil
}

// TakeChainNonce takes the chain's own count as a sender's next nonce (and stores the one after
// it). It is for a deposit address being swept, with nothing of ours in flight from it
// (HasOpenOutgoing): then the chain's count is the truth, whatever was given up before.
func (t *Tx) TakeChainNonce(chainID int64, sender string, chainNonce int64, genesis string) (int64, error) {
	row := txNonceRow{ChainID: chainID, Sender: strings.ToLower(sender), NextNonce: chainNonce + 1, GenesisHash: &genesis}
	err := t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "chain_id"}, {Name: "sender"}},
		DoUpdates: clause.AssignmentColumns([]string{"next_nonce", "genesis_hash"})}).Create(&row).Error
	return chainNonce, translate(err)
}

// HasOpenOutgoing reports whether a sender has a transaction in flight on a chain (signed, mined
// but not confirmed, or in conflict).
func (t *Tx) HasOpenOutgoing(chainID int64, sender string) (bool, error) {
	var n int64
	err := t.db.Model(&outgoingTxRow{}).Where("chain_id = ? AND sender = ? AND status IN ?", chainID, strings.ToLower(sender),
		[]OutgoingStatus{OutgoingSigned, OutgoingMined, OutgoingConflict}).Limit(1).Count(&n).Error
	return n > 0, translate(err)
}

// InsertOutgoingTx stores a logical transaction and its first attempt.
func (t *Tx) InsertOutgoingTx(o OutgoingTx) error {
	row := outgoingTxRow{ID: o.ID, ChainID: o.ChainID, Sender: strings.ToLower(o.Sender), Nonce: o.Nonce, Kind: o.Kind,
		KeyIndex: o.KeyIndex, GenesisHash: nonEmpty(o.GenesisHash), WithdrawalID: o.WithdrawalID, TokenID: o.TokenID, Recipient: strings.ToLower(o.Recipient), AmountAsset: o.AmountAsset,
		RateUSD: o.RateUSD, TxTo: strings.ToLower(o.TxTo), TxValue: o.TxValue, TxData: o.TxData, GasLimit: o.GasLimit,
		Status: OutgoingSigned, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt}
	if err := t.db.Create(&row).Error; err != nil {
		return translate(err)
	}
	for _, a := range o.Attempts {
		if err := t.InsertAttempt(a); err != nil {
			return err
		}
	}
	return nil
}

// InsertAttempt stores a signed attempt (before it is broadcast).
func (t *Tx) InsertAttempt(a TxAttempt) error {
	return translate(t.db.Create(&txAttemptRow{ID: a.ID, OutgoingTxID: a.OutgoingTxID, Hash: strings.ToLower(a.Hash), Raw: a.Raw,
		TipCap: a.TipCap, FeeCap: a.FeeCap, CreatedAt: a.CreatedAt}).Error)
}

// MarkBroadcast records an attempt's broadcast: at, or the error the node answered.
func (t *Tx) MarkBroadcast(attemptID uuid.UUID, at time.Time, failure string) error {
	updates := map[string]any{"broadcast_at": at.UTC(), "last_error": nil}
	if failure != "" {
		updates = map[string]any{"last_error": failure}
	}
	return translate(t.db.Model(&txAttemptRow{}).Where("id = ?", attemptID).Updates(updates).Error)
}

// SetOutgoing moves a logical transaction: status, the mined attempt (nil clears it: a reorg
// dropped the receipt), an error.
func (t *Tx) SetOutgoing(id uuid.UUID, status OutgoingStatus, minedHash *string, minedBlock *int64, minedBlockHash *string, failure *string, now time.Time) error {
	return translate(t.db.Model(&outgoingTxRow{}).Where("id = ?", id).Updates(map[string]any{
		"status": status, "mined_hash": minedHash, "mined_block": minedBlock, "mined_block_hash": minedBlockHash,
		"error": failure, "updated_at": now.UTC()}).Error)
}

// OpenOutgoingTxs lists a chain's logical transactions still in flight (signed, mined, or in
// conflict — a receipt may still appear), of one sender ("" for every sender: the hot wallet and
// the deposit addresses being swept), by sender and nonce, with their attempts.
func (t *Tx) OpenOutgoingTxs(chainID int64, sender string) ([]OutgoingTx, error) {
	var rows []outgoingTxRow
	q := t.db.Where("chain_id = ? AND status IN ?", chainID, []OutgoingStatus{OutgoingSigned, OutgoingMined, OutgoingConflict})
	if sender != "" {
		q = q.Where("sender = ?", strings.ToLower(sender))
	}
	if err := q.Order("sender, nonce").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return t.withAttempts(rows)
}

// OutgoingTxsByID reads logical transactions with their attempts.
func (t *Tx) OutgoingTxsByID(ids []uuid.UUID) ([]OutgoingTx, error) {
	var rows []outgoingTxRow
	if err := t.db.Where("id IN ?", ids).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return t.withAttempts(rows)
}

// OutgoingForWithdrawal reads the payout transaction of a withdrawal (ErrNotFound: none yet).
func (t *Tx) OutgoingForWithdrawal(withdrawalID uuid.UUID) (OutgoingTx, error) {
	var row outgoingTxRow
	if err := t.db.Take(&row, "withdrawal_id = ?", withdrawalID).Error; err != nil {
		return OutgoingTx{}, translate(err)
	}
	out, err := t.withAttempts([]outgoingTxRow{row})
	if err != nil {
		return OutgoingTx{}, err
	}
	return out[0], nil
}

func (t *Tx) withAttempts(rows []outgoingTxRow) ([]OutgoingTx, error) {
	out := make([]OutgoingTx, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var atts []txAttemptRow
	if err := t.db.Where("outgoing_tx_id IN ?", ids).Order("created_at, id").Find(&atts).Error; err != nil {
		return nil, translate(err)
	}
	by := map[uuid.UUID][]TxAttempt{}
	for _, a := range atts {
		by[a.OutgoingTxID] = append(by[a.OutgoingTxID], TxAttempt{ID: a.ID, OutgoingTxID: a.OutgoingTxID, Hash: a.Hash, Raw: a.Raw,
			TipCap: a.TipCap, FeeCap: a.FeeCap, CreatedAt: a.CreatedAt.UTC(), BroadcastAt: a.BroadcastAt, LastError: a.LastError})
	}
	for i, r := range rows {
		out[i] = OutgoingTx{ID: r.ID, ChainID: r.ChainID, Sender: r.Sender, Nonce: r.Nonce, Kind: r.Kind, KeyIndex: r.KeyIndex,
			GenesisHash:  deref(r.GenesisHash),
			WithdrawalID: r.WithdrawalID,
			TokenID:      r.TokenID, Recipient: r.Recipient, AmountAsset: r.AmountAsset, RateUSD: r.RateUSD, TxTo: r.TxTo, TxValue: r.TxValue,
			TxData: r.TxData, GasLimit: r.GasLimit, Status: r.Status, MinedHash: r.MinedHash, MinedBlock: r.MinedBlock,
			MinedBlockHash: r.MinedBlockHash, Error: r.Error, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
			Attempts: by[r.ID]}
	}
	return out, nil
}

// PendingWithdrawals lists up to limit pending withdrawals on a chain that have no payout
// transaction yet, oldest first.
func (t *Tx) PendingWithdrawals(chainID int64, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&withdrawalRow{}).
		Where("status = ? AND chain_id = ? AND NOT EXISTS (SELECT 1 FROM outgoing_txs o WHERE o.withdrawal_id = withdrawals.id)",
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
