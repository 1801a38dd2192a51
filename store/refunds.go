package store

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// Refunds: rows, reads and the queries the refunds service, the payout manager and the claim
// expiry need. Writes of a refund's state are the lifecycle core's (SaveRefundChange).

// Ledger entry kinds of refunds.
const (
	LedgerRefundDebit    = "refund_debit"
	LedgerRefundReversal = "refund_reversal"
)

type refundRow struct {
	ID                 uuid.UUID `gorm:"primaryKey"`
	MerchantID         uuid.UUID
	PaymentID          uuid.UUID
	Livemode           bool
	ChainID            int64
	TokenID            string
	AmountInCents      int64
	AmountAsset        decimal.Decimal
	SubtractNetworkFee bool
	NetworkFeeAsset    decimal.NullDecimal
	RecipientAddress   *string
	RecipientSource    *domain.RecipientSource
	Reason             *string
	Overpayment        bool
	ClaimExpiresAt     *time.Time
	Status             domain.RefundStatus
	ApprovalRequired   bool
	ApprovedBy         *uuid.UUID
	ApprovedByEmail    *string
	ApprovedAt         *time.Time
	CreatedBy          *uuid.UUID
	ErrorMessage       *string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Version            int64
}

func (refundRow) TableName() string { return "refunds" }

type refundReceiptRow struct {
	RefundID                uuid.UUID `gorm:"primaryKey"`
	TokenID                 string
	ChainID                 int64
	SettledAmountAsset      decimal.Decimal
	TxHash                  string
	TxBlockNumber           int64
	TxTimestamp             time.Time
	TxSenderAddress         string
	TxGasUsed               int64
	TxTotalCost             decimal.Decimal
	TxTotalCostUSDFractions int64 `gorm:"column:tx_total_cost_usd_fractions"`
	CreatedAt               time.Time
}

func (refundReceiptRow) TableName() string { return "refund_receipts" }

// InsertRefund stores a new refund.
func (t *Tx) InsertRefund(r domain.Refund) error {
	return translate(t.db.Create(&refundRow{ID: r.ID, MerchantID: r.MerchantID, PaymentID: r.PaymentID, Livemode: r.Mode.Live(),
		ChainID: r.Chain.ID, TokenID: r.Token.ID, AmountInCents: r.AmountInCents, AmountAsset: r.AmountAsset,
		SubtractNetworkFee: r.SubtractNetworkFee, NetworkFeeAsset: nullDecimal(r.NetworkFeeAsset), RecipientAddress: r.RecipientAddress,
		RecipientSource: r.RecipientSource, Reason: r.Reason, Overpayment: r.Overpayment, ClaimExpiresAt: utcPtr(r.ClaimExpiresAt),
		Status: r.Status, ApprovalRequired: r.Approval.Required, ApprovedBy: r.Approval.ApprovedBy, ApprovedByEmail: r.Approval.ApprovedByEmail,
		ApprovedAt: utcPtr(r.Approval.ApprovedAt), CreatedBy: r.Approval.CreatedBy, ErrorMessage: r.ErrorMessage,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version}).Error)
}

// AppendRefundLedger books a refund's debit (negative) or reversal; a second entry of the same
// kind for the refund is ErrConflict.
func (t *Tx) AppendRefundLedger(merchantID uuid.UUID, mode domain.Mode, kind string, cents int64, refundID uuid.UUID, at time.Time) error {
	return translate(t.db.Create(&ledgerEntryRow{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Livemode: mode.Live(), Kind: kind,
		AmountCents: cents, RefundID: &refundID, CreatedAt: at}).Error)
}

// SaveRefundChange writes what a change may alter on a refund — status, error message, the
// recipient once, the approval once, the network fee once, a new receipt — and bumps its
// version (checked, as for payments).
func (t *Tx) SaveRefundChange(before, after domain.Refund) error {
	res := t.db.Model(&refundRow{}).Where("id = ? AND version = ?", before.ID, before.Version).
		Updates(map[string]any{"status": after.Status, "error_message": after.ErrorMessage,
			"recipient_address": after.RecipientAddress, "recipient_source": after.RecipientSource,
			"approval_required": after.Approval.Required, "approved_by": after.Approval.ApprovedBy,
			"approved_by_email": after.Approval.ApprovedByEmail, "approved_at": utcPtr(after.Approval.ApprovedAt),
			"network_fee_asset": nullDecimal(after.NetworkFeeAsset), "updated_at": after.UpdatedAt, "version": after.Version})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: refund %s changed since it was read (version %d)", ErrConflict, before.ID, before.Version)
	}
	if before.Receipt == nil && after.Receipt != nil {
		r := after.Receipt
		return translate(t.db.Create(&refundReceiptRow{RefundID: after.ID, TokenID: r.Token.ID, ChainID: r.Token.Chain.ID,
			SettledAmountAsset: r.SettledAmountAsset, TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp.UTC(),
			TxSenderAddress: r.TxSenderAddress, TxGasUsed: r.TxGasUsed, TxTotalCost: r.TxTotalCost,
			TxTotalCostUSDFractions: r.TxTotalCostUSDFractions, CreatedAt: r.CreatedAt}).Error)
	}
	return nil
}

// LockRefund reads a refund by id under a row lock on PostgreSQL.
func (t *Tx) LockRefund(id uuid.UUID, cat domain.Catalog) (domain.Refund, error) {
	return t.refundWhere(t.forUpdate(), cat, "id = ?", id)
}

// RefundByID reads a refund by id alone (worker and claim paths), without a lock.
func (t *Tx) RefundByID(id uuid.UUID, cat domain.Catalog) (domain.Refund, error) {
	return t.refundWhere(t.db, cat, "id = ?", id)
}

// GetRefund reads one merchant's refund of a mode; another merchant's or mode's is ErrNotFound.
func (t *Tx) GetRefund(merchantID uuid.UUID, mode domain.Mode, id uuid.UUID, cat domain.Catalog) (domain.Refund, error) {
	return t.refundWhere(t.db, cat, "id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, mode.Live())
}

// RefundFilter selects a page of a merchant's refunds.
type RefundFilter struct {
	MerchantID       uuid.UUID
	Mode             domain.Mode
	PaymentID        *uuid.UUID
	Status           domain.RefundStatus
	AwaitingApproval *bool // true: pending refunds whose approval is required and not given; false: the others
	Limit, Offset    int32
}

// refundAwaitingApprovalSQL selects refunds waiting for a person's approval (domain.Approval.Waiting on
// a pending refund: its address is known).
const refundAwaitingApprovalSQL = "status = 'pending' AND approval_required AND approved_at IS NULL"

// ListRefunds returns one page, newest first, and the count of all matches.
func (t *Tx) ListRefunds(f RefundFilter, cat domain.Catalog) ([]domain.Refund, int64, error) {
	q := t.db.Model(&refundRow{}).Where("merchant_id = ? AND livemode = ?", f.MerchantID, f.Mode.Live())
	if f.PaymentID != nil {
		q = q.Where("payment_id = ?", *f.PaymentID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.AwaitingApproval != nil {
		if *f.AwaitingApproval {
			q = q.Where(refundAwaitingApprovalSQL)
		} else {
			q = q.Where("NOT (" + refundAwaitingApprovalSQL + ")")
		}
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, translate(err)
	}
	var rows []refundRow
	if err := q.Order("created_at DESC, id DESC").Limit(int(f.Limit)).Offset(int(f.Offset)).Find(&rows).Error; err != nil {
		return nil, 0, translate(err)
	}
	out, err := t.hydrateRefunds(rows, cat)
	return out, total, err
}

// PaymentRefunds lists a payment's refunds, oldest first.
func (t *Tx) PaymentRefunds(paymentID uuid.UUID, cat domain.Catalog) ([]domain.Refund, error) {
	var rows []refundRow
	if err := t.db.Where("payment_id = ?", paymentID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return t.hydrateRefunds(rows, cat)
}

// RefundedAsset sums the token amounts of a payment's refunds that are not failed or cancelled
// (summed here, not in SQL: SQLite's SUM of a text column goes through floating point).
func (t *Tx) RefundedAsset(paymentID uuid.UUID) (decimal.Decimal, error) {
	var amounts []decimal.Decimal
	if err := t.db.Model(&refundRow{}).Where("payment_id = ? AND status NOT IN ?", paymentID, undebited).
		Pluck("amount_asset", &amounts).Error; err != nil {
		return decimal.Zero, translate(err)
	}
	sum := decimal.Zero
	for _, a := range amounts {
		sum = sum.Add(a)
	}
	return sum, nil
}

var undebited = []domain.RefundStatus{domain.RefundFailed, domain.RefundCancelled}

// refundedCents sums, per payment, the cents of its refunds that are not failed or cancelled.
func (t *Tx) refundedCents(paymentIDs []uuid.UUID) (map[uuid.UUID]int64, error) {
	var sums []struct {
		PaymentID uuid.UUID
		Cents     int64
	}
	if err := t.db.Model(&refundRow{}).Select("payment_id, SUM(amount_in_cents) AS cents").
		Where("payment_id IN ? AND status NOT IN ?", paymentIDs, undebited).Group("payment_id").Scan(&sums).Error; err != nil {
		return nil, translate(err)
	}
	out := make(map[uuid.UUID]int64, len(sums))
	for _, s := range sums {
		out[s.PaymentID] = s.Cents
	}
	return out, nil
}

// LiveOverpaymentRefund finds the refund, not failed or cancelled, that gives back a payment's
// excess: its overpayment refund, else one of exactly the excess units (the merchant's
// "Refund the overpaid amount", which the dashboard hides in turn once either exists).
// ErrNotFound: none. The amounts are compared here, not in SQL (SQLite keeps them as text).
func (t *Tx) LiveOverpaymentRefund(paymentID uuid.UUID, excess decimal.Decimal) (uuid.UUID, error) {
	var rows []struct {
		ID          uuid.UUID
		Overpayment bool
		AmountAsset decimal.Decimal
	}
	if err := t.db.Model(&refundRow{}).Select("id, overpayment, amount_asset").Where("payment_id = ? AND status NOT IN ?", paymentID, undebited).
		Order("created_at, id").Scan(&rows).Error; err != nil {
		return uuid.Nil, translate(err)
	}
	for _, r := range rows {
		if r.Overpayment {
			return r.ID, nil
		}
	}
	for _, r := range rows {
		if r.AmountAsset.Equal(excess) {
			return r.ID, nil
		}
	}
	return uuid.Nil, ErrNotFound
}

// PendingRefunds lists up to limit refunds on a chain the payout manager may sign — pending,
// with a recipient, no approval waiting, no payout transaction yet — oldest first.
func (t *Tx) PendingRefunds(chainID int64, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&refundRow{}).
		Where("status = ? AND chain_id = ? AND recipient_address IS NOT NULL AND NOT (approval_required AND approved_at IS NULL)", domain.RefundPending, chainID).
		Where("NOT EXISTS (SELECT 1 FROM outgoing_txs o WHERE o.refund_id = refunds.id)").
		Order("created_at, id").Limit(limit).Pluck("id", &ids).Error
	return ids, translate(err)
}

// DueRefundClaims lists up to limit refunds still awaiting their address past the claim's expiry.
func (t *Tx) DueRefundClaims(now time.Time, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&refundRow{}).Where("status = ? AND claim_expires_at <= ?", domain.RefundAwaitingAddress, now.UTC()).
		Order("claim_expires_at, id").Limit(limit).Pluck("id", &ids).Error
	return ids, translate(err)
}

// RefundMerchant reads which merchant owns a refund.
func (t *Tx) RefundMerchant(id uuid.UUID) (uuid.UUID, error) {
	var row refundRow
	if err := t.db.Select("merchant_id").Take(&row, "id = ?", id).Error; err != nil {
		return uuid.Nil, translate(err)
	}
	return row.MerchantID, nil
}

func (t *Tx) refundWhere(q *gorm.DB, cat domain.Catalog, cond string, args ...any) (domain.Refund, error) {
	var row refundRow
	if err := q.Take(&row, append([]any{cond}, args...)...).Error; err != nil {
		return domain.Refund{}, translate(err)
	}
	out, err := t.hydrateRefunds([]refundRow{row}, cat)
	if err != nil {
		return domain.Refund{}, err
	}
	return out[0], nil
}

func (t *Tx) hydrateRefunds(rows []refundRow, cat domain.Catalog) ([]domain.Refund, error) {
	out := make([]domain.Refund, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	var done []uuid.UUID
	for _, r := range rows {
		if r.Status == domain.RefundCompleted {
			done = append(done, r.ID)
		}
	}
	byID := map[uuid.UUID]*domain.RefundReceipt{}
	if len(done) > 0 {
		var receipts []refundReceiptRow
		if err := t.db.Where("refund_id IN ?", done).Find(&receipts).Error; err != nil {
			return nil, translate(err)
		}
		for _, r := range receipts {
			byID[r.RefundID] = &domain.RefundReceipt{RefundID: r.RefundID, Token: cat.Tokens[r.TokenID], SettledAmountAsset: r.SettledAmountAsset,
				TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp.UTC(), TxSenderAddress: r.TxSenderAddress,
				TxGasUsed: r.TxGasUsed, TxTotalCost: r.TxTotalCost, TxTotalCostUSDFractions: r.TxTotalCostUSDFractions, CreatedAt: r.CreatedAt.UTC()}
		}
	}
	for i, r := range rows {
		tok := cat.Tokens[r.TokenID]
		out[i] = domain.Refund{ID: r.ID, MerchantID: r.MerchantID, PaymentID: r.PaymentID, Mode: domain.ModeOf(r.Livemode),
			Chain: tok.Chain, Token: tok, AmountInCents: r.AmountInCents, AmountAsset: r.AmountAsset, SubtractNetworkFee: r.SubtractNetworkFee,
			NetworkFeeAsset: decimalPtr(r.NetworkFeeAsset), RecipientAddress: r.RecipientAddress, RecipientSource: r.RecipientSource,
			Reason: r.Reason, Overpayment: r.Overpayment, ClaimExpiresAt: utcPtr(r.ClaimExpiresAt), Status: r.Status,
			Approval: domain.Approval{Required: r.ApprovalRequired, ApprovedBy: r.ApprovedBy, ApprovedByEmail: r.ApprovedByEmail,
				ApprovedAt: utcPtr(r.ApprovedAt), CreatedBy: r.CreatedBy},
			ErrorMessage: r.ErrorMessage, Receipt: byID[r.ID], CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version}
	}
	return out, nil
}
