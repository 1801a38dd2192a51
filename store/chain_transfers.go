package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// TransferStatus says whether a transfer counts.
type TransferStatus string

// Transfer states: seen in the canonical chain, confirmed at the chain's depth, or orphaned by
// a reorg (no longer counted; revived if it reappears).
const (
	TransferSeen      TransferStatus = "seen"
	TransferConfirmed TransferStatus = "confirmed"
	TransferOrphaned  TransferStatus = "orphaned"
)

// Transfer is one movement of a token to a watched deposit address.
type Transfer struct {
	ID               uuid.UUID
	ChainID          int64
	TxHash           string
	LogIndex         int64 // -1 for a native transfer
	BlockNumber      int64
	BlockHash        string
	BlockTime        time.Time
	TokenID          string
	From             string
	To               string
	Amount           decimal.Decimal
	DepositAddressID uuid.UUID
	PaymentID        *uuid.UUID
	Status           TransferStatus
	Credited         bool
	// Reported: a checkout page reported its transaction and the server read it from the chain
	// on that report, before or after the watcher's scan (the receipt's processedBy "frontend").
	Reported  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

type transferRow struct {
	ID               uuid.UUID `gorm:"primaryKey"`
	ChainID          int64
	TxHash           string
	LogIndex         int64
	BlockNumber      int64
	BlockHash        string
	BlockTime        time.Time
	TokenID          string
	FromAddress      string
	ToAddress        string
	Amount           decimal.Decimal
	DepositAddressID uuid.UUID
	PaymentID        *uuid.UUID
	Status           TransferStatus
	Credited         bool
	Reported         bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (transferRow) TableName() string { return "transfers" }

func (r transferRow) domain() Transfer {
	return Transfer{ID: r.ID, ChainID: r.ChainID, TxHash: r.TxHash, LogIndex: r.LogIndex, BlockNumber: r.BlockNumber,
		BlockHash: r.BlockHash, BlockTime: r.BlockTime.UTC(), TokenID: r.TokenID, From: r.FromAddress, To: r.ToAddress,
		Amount: r.Amount, DepositAddressID: r.DepositAddressID, PaymentID: r.PaymentID, Status: r.Status,
		Credited: r.Credited, Reported: r.Reported, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// RecordTransfer stores a transfer seen in the canonical chain. One already recorded is left
// as it is — unless a reorg orphaned it and it reappeared, in which case it counts again in its
// new block. The gateway's own gas top-ups to deposit addresses are not customers' transfers
// and are not recorded: a top-up's attempt is stored before it is broadcast, so it is always
// known by the time it is mined. It reports whether anything was written.
func (t *Tx) RecordTransfer(tr Transfer) (bool, error) {
	if ours, err := t.IsGasTopup(tr.TxHash); err != nil || ours {
		return false, err
	}
	row := transferRow{ID: tr.ID, ChainID: tr.ChainID, TxHash: strings.ToLower(tr.TxHash), LogIndex: tr.LogIndex,
		BlockNumber: tr.BlockNumber, BlockHash: tr.BlockHash, BlockTime: tr.BlockTime.UTC(), TokenID: tr.TokenID,
		FromAddress: strings.ToLower(tr.From), ToAddress: strings.ToLower(tr.To), Amount: tr.Amount,
		DepositAddressID: tr.DepositAddressID, PaymentID: tr.PaymentID, Status: TransferSeen, Reported: tr.Reported, CreatedAt: tr.CreatedAt.UTC(),
		UpdatedAt: tr.CreatedAt.UTC()}
	res := t.db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "chain_id"}, {Name: "tx_hash"}, {Name: "log_index"}},
		DoUpdates: clause.Assignments(map[string]any{"block_number": row.BlockNumber, "block_hash": row.BlockHash,
			"block_time": row.BlockTime, "status": TransferSeen, "updated_at": row.UpdatedAt}),
		Where: clause.Where{Exprs: []clause.Expression{
			clause.Eq{Column: clause.Column{Table: "transfers", Name: "status"}, Value: TransferOrphaned}}},
	}).Create(&row)
	if res.Error != nil {
		return false, translate(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// OrphanTransfers un-counts a chain's transfers in blocks above number (a reorg replaced
// them) and returns the payments they belonged to. Confirmed ones are returned too: the caller
// reports a reorg deeper than the confirmation depth, which nothing can undo.
func (t *Tx) OrphanTransfers(chainID, above int64, now time.Time) (seen []Transfer, confirmed []Transfer, err error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND block_number > ? AND status <> ?", chainID, above, TransferOrphaned).Find(&rows).Error; err != nil {
		return nil, nil, translate(err)
	}
	for _, r := range rows {
		if r.Status == TransferConfirmed {
			confirmed = append(confirmed, r.domain())
			continue
		}
		seen = append(seen, r.domain())
	}
	if len(seen) == 0 {
		return seen, confirmed, nil
	}
	err = t.db.Model(&transferRow{}).Where("chain_id = ? AND block_number > ? AND status = ?", chainID, above, TransferSeen).
		Updates(map[string]any{"status": TransferOrphaned, "updated_at": now.UTC()}).Error
	return seen, confirmed, translate(err)
}

// ConfirmTransfers marks a chain's seen transfers in blocks up to number confirmed and returns
// them.
func (t *Tx) ConfirmTransfers(chainID, upTo int64, now time.Time) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND status = ? AND block_number <= ?", chainID, TransferSeen, upTo).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if err := t.db.Model(&transferRow{}).Where("chain_id = ? AND status = ? AND block_number <= ?", chainID, TransferSeen, upTo).
		Updates(map[string]any{"status": TransferConfirmed, "updated_at": now.UTC()}).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		r.Status = TransferConfirmed
		out[i] = r.domain()
	}
	return out, nil
}

// PaymentTransfers lists the transfers attributed to a payment, in chain order.
func (t *Tx) PaymentTransfers(paymentID uuid.UUID) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("payment_id = ?", paymentID).Order("block_number, log_index").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// SettlementSenders lists, oldest first, the lowercase senders of a payment's transfers of tokenID
// that its settlement counted: still in the chain and credited with the payment — not a transfer
// credited on its own later (a late one: its transfer_credit in the ledger), nor one no credit
// holds yet. Anyone may send a unit to a deposit address; only these senders paid.
func (t *Tx) SettlementSenders(paymentID uuid.UUID, tokenID string) ([]string, error) {
	var from []string
	err := t.db.Model(&transferRow{}).
		Where("payment_id = ? AND token_id = ? AND status <> ? AND credited", paymentID, tokenID, TransferOrphaned).
		Where("NOT EXISTS (SELECT 1 FROM ledger_entries l WHERE l.transfer_id = transfers.id)").
		Order("block_number, log_index").Pluck("from_address", &from).Error
	return from, translate(err)
}

// UnassignedTransfers lists up to limit transfers of a chain to customers' reusable addresses
// not yet attributed to a payment.
func (t *Tx) UnassignedTransfers(chainID int64, limit int) ([]Transfer, error) {
	var rows []transferRow
	if err := t.db.Where("chain_id = ? AND payment_id IS NULL AND status <> ?", chainID, TransferOrphaned).
		Order("block_number, log_index").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// AssignTransfer attributes an unattributed transfer to a payment.
func (t *Tx) AssignTransfer(id, paymentID uuid.UUID) error {
	res := t.db.Model(&transferRow{}).Where("id = ? AND payment_id IS NULL", id).Update("payment_id", paymentID)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: transfer %s is already attributed", ErrConflict, id)
	}
	return nil
}

// MarkCredited records that the merchant's balance holds these transfers.
func (t *Tx) MarkCredited(ids []uuid.UUID, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(t.db.Model(&transferRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"credited": true, "updated_at": now.UTC()}).Error)
}

// UncreditedTransfers lists up to limit confirmed transfers of a chain that no credit holds yet,
// attributed to a payment that is final (its settlement did not count them).
func (t *Tx) UncreditedTransfers(chainID int64, limit int) ([]Transfer, error) {
	var rows []transferRow
	err := t.db.Model(&transferRow{}).Select("transfers.*").Joins("JOIN payments ON payments.id = transfers.payment_id").
		Where("transfers.chain_id = ? AND transfers.status = ? AND NOT transfers.credited AND payments.status IN ?", chainID,
			TransferConfirmed, []domain.PaymentStatus{domain.PaymentCompleted, domain.PaymentExpired, domain.PaymentFailed, domain.PaymentCancelled}).
		Order("transfers.block_number, transfers.log_index").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Transfer, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// OpenPaymentsWithTransfers lists up to limit open payments that have a transfer on a chain,
// for the watcher to settle.
func (t *Tx) OpenPaymentsWithTransfers(chainID int64, limit int) ([]uuid.UUID, error) {
	// From the open payments (their partial index, by expiry: the most urgent first), never from
	// the chain's transfers, which only grow.
	var ids []uuid.UUID
	err := t.db.Model(&paymentRow{}).
		Where("payments.status IN ? AND EXISTS (SELECT 1 FROM transfers WHERE transfers.payment_id = payments.id AND transfers.chain_id = ?)",
			[]domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}, chainID).
		Order("payments.expires_at").Limit(limit).Pluck("payments.id", &ids).Error
	return ids, translate(err)
}
