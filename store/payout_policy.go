package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// The payout policy's tables (issue 23): each merchant's payout settings, its address book, and
// the sum the rolling daily limit is checked against.

type payoutSettingsRow struct {
	MerchantID              uuid.UUID `gorm:"primaryKey"`
	Livemode                bool      `gorm:"primaryKey"`
	ApprovalThresholdCents  *int64
	AllowlistOnly           bool
	AddressCoolingOffHours  int32
	DailyLimitCents         *int64
	RefundClaimDays         int32
	OfferOverpaymentRefunds bool
	UpdatedAt               time.Time
	StricterRules           *string // JSON of domain.PolicyRules
	StricterUntil           *time.Time
}

func (payoutSettingsRow) TableName() string { return "payout_settings" }

type addressBookRow struct {
	ID             uuid.UUID `gorm:"primaryKey"`
	MerchantID     uuid.UUID
	Label          string
	ChainID        int64
	Address        string
	CreatedAt      time.Time
	UsableAt       time.Time
	CreatedBy      *uuid.UUID
	CreatedByEmail *string
}

func (addressBookRow) TableName() string { return "address_book" }

func (r addressBookRow) domain() domain.AddressBookEntry {
	return domain.AddressBookEntry{ID: r.ID, MerchantID: r.MerchantID, Label: r.Label, ChainID: r.ChainID, Address: r.Address,
		CreatedAt: r.CreatedAt, UsableAt: r.UsableAt, CreatedBy: r.CreatedBy, CreatedByEmail: r.CreatedByEmail}
}

// PayoutSettings reads a merchant's payout settings of a mode; ErrNotFound when they never
// changed (the caller applies domain.DefaultPayoutSettings).
func (t *Tx) PayoutSettings(merchantID uuid.UUID, mode domain.Mode) (domain.PayoutSettings, error) {
	var r payoutSettingsRow
	if err := t.db.Take(&r, "merchant_id = ? AND livemode = ?", merchantID, mode.Live()).Error; err != nil {
		return domain.PayoutSettings{}, translate(err)
	}
	at := r.UpdatedAt
	out := domain.PayoutSettings{MerchantID: r.MerchantID, Mode: domain.ModeOf(r.Livemode), ApprovalThresholdCents: r.ApprovalThresholdCents, AllowlistOnly: r.AllowlistOnly,
		AddressCoolingOffHours: r.AddressCoolingOffHours, DailyLimitCents: r.DailyLimitCents, RefundClaimDays: r.RefundClaimDays,
		OfferOverpaymentRefund: r.OfferOverpaymentRefunds, UpdatedAt: &at}
	if r.StricterRules != nil && r.StricterUntil != nil {
		var rules domain.PolicyRules
		if err := json.Unmarshal([]byte(*r.StricterRules), &rules); err != nil {
			return domain.PayoutSettings{}, fmt.Errorf("payout settings of %s: stricter rules: %w", merchantID, err)
		}
		until := r.StricterUntil.UTC()
		out.Stricter, out.StricterUntil = &rules, &until
	}
	return out, nil
}

// PutPayoutSettings writes a merchant's payout settings of s.Mode whole (UpdatedAt must be set).
func (t *Tx) PutPayoutSettings(s domain.PayoutSettings) error {
	row := payoutSettingsRow{MerchantID: s.MerchantID, Livemode: s.Mode.Live(), ApprovalThresholdCents: s.ApprovalThresholdCents, AllowlistOnly: s.AllowlistOnly,
		AddressCoolingOffHours: s.AddressCoolingOffHours, DailyLimitCents: s.DailyLimitCents, RefundClaimDays: s.RefundClaimDays,
		OfferOverpaymentRefunds: s.OfferOverpaymentRefund, UpdatedAt: s.UpdatedAt.UTC()}
	if s.Stricter != nil && s.StricterUntil != nil {
		b, err := json.Marshal(s.Stricter)
		if err != nil {
			return err
		}
		rules, until := string(b), s.StricterUntil.UTC()
		row.StricterRules, row.StricterUntil = &rules, &until
	}
	return translate(t.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error)
}

// InsertAddressBookEntry saves a recipient; the same address on the same chain twice is
// ErrConflict.
func (t *Tx) InsertAddressBookEntry(e domain.AddressBookEntry) error {
	return translate(t.db.Create(&addressBookRow{ID: e.ID, MerchantID: e.MerchantID, Label: e.Label, ChainID: e.ChainID,
		Address: strings.ToLower(e.Address), CreatedAt: e.CreatedAt.UTC(), UsableAt: e.UsableAt.UTC(), CreatedBy: e.CreatedBy,
		CreatedByEmail: e.CreatedByEmail}).Error)
}

// AddressBook lists a merchant's saved recipients, newest first.
func (t *Tx) AddressBook(merchantID uuid.UUID) ([]domain.AddressBookEntry, error) {
	var rows []addressBookRow
	if err := t.db.Where("merchant_id = ?", merchantID).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]domain.AddressBookEntry, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// CountAddressBook counts a merchant's saved recipients.
func (t *Tx) CountAddressBook(merchantID uuid.UUID) (int64, error) {
	var n int64
	return n, translate(t.db.Model(&addressBookRow{}).Where("merchant_id = ?", merchantID).Count(&n).Error)
}

// AddressBookEntryFor finds a merchant's saved entry of a lowercase address on a chain;
// ErrNotFound when it is not saved.
func (t *Tx) AddressBookEntryFor(merchantID uuid.UUID, chainID int64, address string) (domain.AddressBookEntry, error) {
	var r addressBookRow
	if err := t.db.Take(&r, "merchant_id = ? AND chain_id = ? AND address = ?", merchantID, chainID, strings.ToLower(address)).Error; err != nil {
		return domain.AddressBookEntry{}, translate(err)
	}
	return r.domain(), nil
}

// AddressBookEntry reads one of a merchant's entries; ErrNotFound when the merchant has none
// with that id.
func (t *Tx) AddressBookEntry(merchantID, id uuid.UUID) (domain.AddressBookEntry, error) {
	var r addressBookRow
	if err := t.db.Take(&r, "id = ? AND merchant_id = ?", id, merchantID).Error; err != nil {
		return domain.AddressBookEntry{}, translate(err)
	}
	return r.domain(), nil
}

// DeleteAddressBookEntry removes one of a merchant's entries and returns it; ErrNotFound when
// the merchant has no such entry.
func (t *Tx) DeleteAddressBookEntry(merchantID, id uuid.UUID) (domain.AddressBookEntry, error) {
	var r addressBookRow
	if err := t.db.Take(&r, "id = ? AND merchant_id = ?", id, merchantID).Error; err != nil {
		return domain.AddressBookEntry{}, translate(err)
	}
	res := t.db.Where("id = ? AND merchant_id = ?", id, merchantID).Delete(&addressBookRow{})
	if res.Error != nil {
		return domain.AddressBookEntry{}, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return domain.AddressBookEntry{}, ErrNotFound // removed by a concurrent request
	}
	return r.domain(), nil
}

// outflowKinds are the ledger's debits of money leaving a merchant (what the daily limit
// counts), each with the kind that reverses it and the column naming what it debits: a debit
// counts until its withdrawal (or refund) is reversed — failed or cancelled. Withdrawals and refunds
// one row each (migration 00020 gave refunds their ledger kinds and refund_id column).
var outflowKinds = []struct{ debit, reversal, column string }{
	{LedgerWithdrawalDebit, LedgerWithdrawalReversal, "withdrawal_id"},
	{LedgerRefundDebit, LedgerRefundReversal, "refund_id"},
}

// OutflowSince sums the cents of a mode that left a merchant's balance after since and were not
// given back: debits booked after since whose withdrawal (or refund) has no reversal.
func (t *Tx) OutflowSince(merchantID uuid.UUID, mode domain.Mode, since time.Time) (int64, error) {
	var (
		cond []string
		args = []any{merchantID, mode.Live(), since.UTC()}
	)
	for _, k := range outflowKinds {
		// column is one of the constants above, never input.
		cond = append(cond, "(d.kind = ? AND NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.kind = ? AND r."+k.column+" = d."+k.column+"))")
		args = append(args, k.debit, k.reversal)
	}
	var sum int64
	err := t.db.Raw("SELECT COALESCE(SUM(-d.amount_cents), 0) FROM ledger_entries d WHERE d.merchant_id = ? AND d.livemode = ? AND d.created_at > ? AND ("+
		strings.Join(cond, " OR ")+")", args...).Scan(&sum).Error
	return sum, translate(err)
}
