package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// The writes of the lifecycle core (package lifecycle). Nothing else writes a status column or
// an event: lifecycle/arch_test.go checks that these methods are called from that package only.

// SavePaymentChange writes what a change may alter on a payment — status, final amounts and
// fees, the quotes' statuses, a new receipt — and bumps its version. The version check makes a
// lost update impossible even where no row lock was taken.
func (t *Tx) SavePaymentChange(before, after domain.Payment) error {
	res := t.db.Model(&paymentRow{}).Where("id = ? AND version = ?", before.ID, before.Version).
		Updates(map[string]any{
			"status": after.Status, "amount_in_cents": after.AmountInCents, "amount_due_cents": after.AmountDueCents,
			"convenience_fee_cents": after.ConvenienceFeeCents, "merchant_fee_cents": after.MerchantFeeCents,
			"swap_fee_cents": after.SwapFeeCents, "amount_merchant_net_cents": after.AmountMerchantNetCents,
			"updated_at": after.UpdatedAt, "version": after.Version,
			"settling_quote_id": settlingQuote(after.Received), "received_amount_asset": receivedAmount(after.Received, false),
			"confirmed_amount_asset": receivedAmount(after.Received, true),
		})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: payment %s changed since it was read (version %d)", ErrConflict, before.ID, before.Version)
	}
	old := make(map[uuid.UUID]domain.QuoteStatus, len(before.Quotes))
	for _, q := range before.Quotes {
		old[q.ID] = q.Status
	}
	for _, q := range after.Quotes {
		if old[q.ID] == q.Status {
			continue
		}
		if err := t.db.Model(&quoteRow{}).Where("id = ? AND payment_id = ?", q.ID, after.ID).
			Update("status", q.Status).Error; err != nil {
			return translate(err)
		}
	}
	if before.Receipt == nil && after.Receipt != nil {
		return t.insertPaymentReceipt(after.ID, *after.Receipt)
	}
	return nil
}

func (t *Tx) insertPaymentReceipt(paymentID uuid.UUID, r domain.PaymentReceipt) error {
	return translate(t.db.Create(&paymentReceiptRow{PaymentID: paymentID, QuoteID: r.QuoteID, TokenID: r.Token.ID,
		ChainID: r.Token.Chain.ID, SettledAmountAsset: r.SettledAmountAsset, SettledAmountUSD: r.SettledAmountUSD,
		TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress,
		TxGasUsed: r.TxGasUsed, TxTotalCost: nullDecimal(r.TxTotalCost), TxTotalCostUSDFractions: r.TxTotalCostUSDFractions,
		TxIsSponsored: r.TxIsSponsored, ProcessedBy: r.ProcessedBy, TxRiskScore: r.TxRiskScore, TxRiskSeverity: r.TxRiskSeverity,
		TxRiskProvider: r.TxRiskProvider, Confirmations: r.Confirmations, RequiredConfirmations: r.RequiredConfirmations,
		CreatedAt: r.CreatedAt}).Error)
}

// LockWithdrawal reads a withdrawal by id alone under a row lock on PostgreSQL (on SQLite the
// single connection already serialises transactions).
func (t *Tx) LockWithdrawal(id uuid.UUID, cat domain.Catalog) (domain.Withdrawal, error) {
	return t.withdrawalByID(t.forUpdate(), id, cat)
}

// WithdrawalByID reads a withdrawal by id alone (worker paths), without a lock.
func (t *Tx) WithdrawalByID(id uuid.UUID, cat domain.Catalog) (domain.Withdrawal, error) {
	return t.withdrawalByID(t.db, id, cat)
}

func (t *Tx) withdrawalByID(q *gorm.DB, id uuid.UUID, cat domain.Catalog) (domain.Withdrawal, error) {
	var row withdrawalRow
	if err := q.Take(&row, "id = ?", id).Error; err != nil {
		return domain.Withdrawal{}, translate(err)
	}
	out, err := t.hydrateWithdrawals([]withdrawalRow{row}, cat)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	return out[0], nil
}

// SaveWithdrawalChange writes a withdrawal's status, error message and new receipt, and bumps
// its version (checked, as for payments).
func (t *Tx) SaveWithdrawalChange(before, after domain.Withdrawal) error {
	res := t.db.Model(&withdrawalRow{}).Where("id = ? AND version = ?", before.ID, before.Version).
		Updates(map[string]any{"status": after.Status, "error_message": after.ErrorMessage,
			"approved_by": after.Approval.ApprovedBy, "approved_by_email": after.Approval.ApprovedByEmail,
			"approved_at": utcPtr(after.Approval.ApprovedAt), "updated_at": after.UpdatedAt, "version": after.Version})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: withdrawal %s changed since it was read (version %d)", ErrConflict, before.ID, before.Version)
	}
	if before.Receipt == nil && after.Receipt != nil {
		r := after.Receipt
		return translate(t.db.Create(&withdrawalReceiptRow{WithdrawalID: after.ID, TokenID: r.Token.ID,
			ChainID: r.Token.Chain.ID, SettledAmountAsset: r.SettledAmountAsset, SettledAmountUSD: r.SettledAmountUSD,
			TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress,
			TxGasUsed: r.TxGasUsed, TxTotalCost: r.TxTotalCost, TxTotalCostUSDFractions: r.TxTotalCostUSDFractions,
			TxIsSponsored: r.TxIsSponsored, ProcessedBy: r.ProcessedBy, CreatedAt: r.CreatedAt}).Error)
	}
	return nil
}

// TouchPayment bumps a payment's version without changing it otherwise: something happened to it
// (a transfer credited on its own) that its event announces under the new version.
func (t *Tx) TouchPayment(id uuid.UUID, version int64, at time.Time) error {
	res := t.db.Model(&paymentRow{}).Where("id = ? AND version = ?", id, version).
		Updates(map[string]any{"version": version + 1, "updated_at": at})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: payment %s changed since it was read (version %d)", ErrConflict, id, version)
	}
	return nil
}

// InsertEvent appends an event to the outbox, with object (the webhook body) when someone is to
// receive it. A second event with the same entity and sequence is ErrConflict. Who receives an
// event is the webhooks package's decision (webhooks.Fanout), made in the same transaction.
func (t *Tx) InsertEvent(e domain.Event, object []byte) error {
	row := eventRow{ID: e.ID, Type: string(e.Type), Entity: string(e.Entity), EntityID: e.EntityID,
		MerchantID: e.MerchantID, Livemode: e.Mode.Live(), Sequence: e.Sequence, Payload: string(e.Payload), CreatedAt: e.CreatedAt}
	if object != nil {
		text := string(object)
		row.Object = &text
	}
	return translate(t.db.Create(&row).Error)
}

// EntityEvents lists an entity's events in order.
func (t *Tx) EntityEvents(entityID uuid.UUID) ([]domain.Event, error) {
	var rows []eventRow
	if err := t.db.Where("entity_id = ?", entityID).Order("sequence").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Event, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// DuePayments lists up to limit pending payments whose expiry has passed, oldest first, leaving
// out those quoted on a chain of behind (chain id → the block time it is scanned to) that is not
// scanned up to their expiry.
func (t *Tx) DuePayments(now time.Time, behind map[int64]time.Time, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	q := t.db.Model(&paymentRow{}).Where("status = ? AND expires_at <= ?", domain.PaymentPending, now.UTC()).
		Where("NOT EXISTS (" + timelyTransferSQL + ")")
	for chainID, scanned := range behind {
		// Quoted on a chain not scanned up to its expiry: not due yet (and not in the way of
		// the payments that are, which a batch of held-back ones would otherwise starve).
		q = q.Where("NOT (payments.expires_at > ? AND EXISTS (SELECT 1 FROM quotes hq WHERE hq.payment_id = payments.id AND hq.chain_id = ?))",
			scanned.UTC(), chainID)
	}
	err := q.Order("expires_at").Limit(limit).Pluck("id", &ids).Error
	return ids, translate(err)
}

// timelyTransferSQL finds, for the payments row in scope, a transfer in the canonical chain
// mined by its expiry — recorded for it, or to its (customer's) address and not attributed yet.
// Such a payment is the chain watcher's to settle, never the expiry sweep's.
const timelyTransferSQL = `SELECT 1 FROM transfers tt WHERE tt.status <> 'orphaned' AND tt.block_time <= payments.expires_at
	AND (tt.payment_id = payments.id OR (tt.payment_id IS NULL AND tt.deposit_address_id = payments.deposit_address_id))`

// HasTimelyTransfer reports whether a payment has a transfer the watcher will settle it with
// (see timelyTransferSQL).
func (t *Tx) HasTimelyTransfer(paymentID uuid.UUID) (bool, error) {
	var n int64
	err := t.db.Model(&paymentRow{}).Where("payments.id = ? AND EXISTS ("+timelyTransferSQL+")", paymentID).Count(&n).Error
	return n > 0, translate(err)
}

// PaymentsWithDueQuotes lists up to limit pending payments that have an active quote past its
// expiry.
func (t *Tx) PaymentsWithDueQuotes(now time.Time, limit int) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&quoteRow{}).Distinct("quotes.payment_id").
		Joins("JOIN payments ON payments.id = quotes.payment_id").
		Where("quotes.status = ? AND quotes.expires_at <= ? AND payments.status = ?", domain.QuoteActive, now.UTC(), domain.PaymentPending).
		Limit(limit).Pluck("quotes.payment_id", &ids).Error
	return ids, translate(err)
}

// ReleaseLease gives up holder's lease, so another process need not wait for it to expire.
func (t *Tx) ReleaseLease(name, holder string) error {
	return translate(t.db.Where("name = ? AND holder = ?", name, holder).Delete(&leaseRow{}).Error)
}

// TryLease takes or renews the named lease for holder until now+ttl. It reports false while
// another holder's lease is unexpired.
func (t *Tx) TryLease(name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	res := t.db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "name"}},
		DoUpdates: clause.Assignments(map[string]any{"holder": holder, "expires_at": now.Add(ttl).UTC()}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Or(
			clause.Eq{Column: clause.Column{Table: "leases", Name: "holder"}, Value: holder},
			clause.Lte{Column: clause.Column{Table: "leases", Name: "expires_at"}, Value: now.UTC()},
		)}},
	}).Create(&leaseRow{Name: name, Holder: holder, ExpiresAt: now.Add(ttl).UTC()})
	if res.Error != nil {
		return false, translate(res.Error)
	}
	return res.RowsAffected == 1, nil
}

func settlingQuote(r *domain.Received) *uuid.UUID {
	if r == nil {
		return nil
	}
	id := r.QuoteID
	return &id
}

func receivedAmount(r *domain.Received, confirmed bool) decimal.NullDecimal {
	switch {
	case r == nil:
		return decimal.NullDecimal{}
	case confirmed:
		return decimal.NewNullDecimal(r.Confirmed)
	}
	return decimal.NewNullDecimal(r.Amount)
}

// TakeLease takes or renews the named lease for holder in a transaction of its own (TryLease).
func (s *Store) TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	var held bool
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		held, err = tx.TryLease(name, holder, now, ttl)
		return err
	})
	return held, err
}

// GiveUpLease releases holder's lease in a transaction of its own (ReleaseLease).
func (s *Store) GiveUpLease(ctx context.Context, name, holder string) error {
	return s.InTx(ctx, func(tx *Tx) error { return tx.ReleaseLease(name, holder) })
}
