package store

import (
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// Ledger entry kinds.
const (
	LedgerPaymentCredit      = "payment_credit"
	LedgerWithdrawalDebit    = "withdrawal_debit"
	LedgerWithdrawalReversal = "withdrawal_reversal"
	LedgerTransferCredit     = "transfer_credit" // a transfer its payment's settlement did not count
)

// AvailableBalance sums a merchant's ledger of one mode: settled payment credits less
// withdrawal and refund debits (reversed when a withdrawal or refund fails or is cancelled).
func (t *Tx) AvailableBalance(merchantID uuid.UUID, mode domain.Mode) (int64, error) {
	var sum int64
	err := t.db.Model(&ledgerEntryRow{}).Where("merchant_id = ? AND livemode = ?", merchantID, mode.Live()).
		Select("COALESCE(SUM(amount_cents), 0)").Scan(&sum).Error
	return sum, translate(err)
}

// AppendLedger books one signed amount in a mode (the mode of the chain the money moved on); a
// second entry of the same kind for the same payment or withdrawal is ErrConflict (the unique
// indexes make double-booking impossible).
func (t *Tx) AppendLedger(merchantID uuid.UUID, mode domain.Mode, kind string, cents int64, paymentID, withdrawalID *uuid.UUID, at time.Time) error {
	return translate(t.db.Create(&ledgerEntryRow{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Livemode: mode.Live(), Kind: kind,
		AmountCents: cents, PaymentID: paymentID, WithdrawalID: withdrawalID, CreatedAt: at}).Error)
}

// AppendTransferCredit books the credit of one transfer in its chain's mode; a second one for the
// same transfer is ErrConflict.
func (t *Tx) AppendTransferCredit(merchantID uuid.UUID, mode domain.Mode, transferID uuid.UUID, cents int64, at time.Time) error {
	return translate(t.db.Create(&ledgerEntryRow{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Livemode: mode.Live(), Kind: LedgerTransferCredit,
		AmountCents: cents, TransferID: &transferID, CreatedAt: at}).Error)
}

// InsertWithdrawal stores a new withdrawal.
func (t *Tx) InsertWithdrawal(w domain.Withdrawal) error {
	return translate(t.db.Create(&withdrawalRow{ID: w.ID, MerchantID: w.MerchantID, Livemode: w.Mode.Live(), AmountInCents: w.AmountInCents,
		ChainID: w.Chain.ID, TokenID: w.Token.ID, RecipientAddress: w.RecipientAddress, Status: w.Status,
		Currency: w.Currency, OrderID: w.OrderID, CustomMetadata: w.CustomMetadata, ErrorMessage: w.ErrorMessage,
		ApprovalRequired: w.Approval.Required, ApprovedBy: w.Approval.ApprovedBy, ApprovedByEmail: w.Approval.ApprovedByEmail,
		ApprovedAt: utcPtr(w.Approval.ApprovedAt), CreatedBy: w.Approval.CreatedBy,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Version: w.Version}).Error)
}

// WithdrawalFilter selects a page of a merchant's withdrawals.
type WithdrawalFilter struct {
	MerchantID uuid.UUID
	Mode       domain.Mode
	Status     domain.WithdrawalStatus
	// AwaitingApproval: only pending withdrawals whose approval is required and not given yet.
	AwaitingApproval bool
	Limit            int32
	Offset           int32
}

// ListWithdrawals returns one page, newest first, and the count of all matches.
func (t *Tx) ListWithdrawals(f WithdrawalFilter, cat domain.Catalog) ([]domain.Withdrawal, int64, error) {
	q := t.db.Model(&withdrawalRow{}).Where("merchant_id = ? AND livemode = ?", f.MerchantID, f.Mode.Live())
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.AwaitingApproval {
		q = q.Where("status = ? AND "+awaitingApprovalSQL, domain.WithdrawalPending)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, translate(err)
	}
	var rows []withdrawalRow
	if err := q.Order("created_at DESC, id DESC").Limit(int(f.Limit)).Offset(int(f.Offset)).Find(&rows).Error; err != nil {
		return nil, 0, translate(err)
	}
	out, err := t.hydrateWithdrawals(rows, cat)
	return out, total, err
}

// GetWithdrawal reads one merchant's withdrawal of a mode; another merchant's id, or another
// mode's, is ErrNotFound.
func (t *Tx) GetWithdrawal(merchantID uuid.UUID, mode domain.Mode, id uuid.UUID, cat domain.Catalog) (domain.Withdrawal, error) {
	var row withdrawalRow
	if err := t.db.Take(&row, "id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, mode.Live()).Error; err != nil {
		return domain.Withdrawal{}, translate(err)
	}
	out, err := t.hydrateWithdrawals([]withdrawalRow{row}, cat)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	return out[0], nil
}

func (t *Tx) hydrateWithdrawals(rows []withdrawalRow, cat domain.Catalog) ([]domain.Withdrawal, error) {
	out := make([]domain.Withdrawal, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var receipts []withdrawalReceiptRow
	if err := t.db.Where("withdrawal_id IN ?", ids).Find(&receipts).Error; err != nil {
		return nil, translate(err)
	}
	byID := map[uuid.UUID]*domain.WithdrawalReceipt{}
	for _, r := range receipts {
		byID[r.WithdrawalID] = &domain.WithdrawalReceipt{WithdrawalID: r.WithdrawalID, Token: cat.Tokens[r.TokenID],
			SettledAmountAsset: r.SettledAmountAsset, SettledAmountUSD: r.SettledAmountUSD, TxHash: r.TxHash,
			TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress,
			TxGasUsed: r.TxGasUsed, TxTotalCost: r.TxTotalCost, TxTotalCostUSDFractions: r.TxTotalCostUSDFractions,
			TxIsSponsored: r.TxIsSponsored, ProcessedBy: r.ProcessedBy, CreatedAt: r.CreatedAt}
	}
	for i, r := range rows {
		tok := cat.Tokens[r.TokenID]
		out[i] = domain.Withdrawal{ID: r.ID, MerchantID: r.MerchantID, Mode: domain.ModeOf(r.Livemode), AmountInCents: r.AmountInCents, Chain: tok.Chain,
			Token: tok, RecipientAddress: r.RecipientAddress, Status: r.Status, Currency: r.Currency, OrderID: r.OrderID,
			CustomMetadata: r.CustomMetadata, ErrorMessage: r.ErrorMessage, Receipt: byID[r.ID],
			Approval: domain.Approval{Required: r.ApprovalRequired, ApprovedBy: r.ApprovedBy, ApprovedByEmail: r.ApprovedByEmail,
				ApprovedAt: r.ApprovedAt, CreatedBy: r.CreatedBy},
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version}
	}
	return out, nil
}

// awaitingApprovalSQL selects the rows whose approval is required and not given: the payout
// manager never sends them.
const awaitingApprovalSQL = "(approval_required AND approved_at IS NULL)"

// WithdrawalMerchant reads which merchant owns a withdrawal.
func (t *Tx) WithdrawalMerchant(id uuid.UUID) (uuid.UUID, error) {
	var row withdrawalRow
	if err := t.db.Select("merchant_id").Take(&row, "id = ?", id).Error; err != nil {
		return uuid.Nil, translate(err)
	}
	return row.MerchantID, nil
}
