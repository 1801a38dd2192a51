package store

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// AllocateDerivationIndex hands out the next BIP-32 child index. On PostgreSQL a sequence
// (migration 00005): nothing waits on it, and a rolled-back create leaves a harmless gap. On
// SQLite the counter row, which costs nothing there: SQLite has one writer. Either way the
// unique index on deposit_addresses.derivation_index backs it up.
func (t *Tx) AllocateDerivationIndex() (int64, error) {
	if t.dialect == Postgres {
		var idx int64
		if err := t.db.Raw("SELECT nextval('deposit_derivation_index_seq')").Scan(&idx).Error; err != nil {
			return 0, translate(err)
		}
		return idx, nil
	}
	var next []int64
	err := t.db.Raw("UPDATE address_counters SET next_index = next_index + 1 WHERE name = 'deposit' RETURNING next_index").
		Scan(&next).Error
	if err != nil {
		return 0, translate(err)
	}
	if len(next) != 1 {
		return 0, fmt.Errorf("store: address counter 'deposit' missing (%d rows): database not migrated?", len(next))
	}
	return next[0] - 1, nil
}

// InsertDepositAddress stores a derived address.
func (t *Tx) InsertDepositAddress(a domain.DepositAddress) error {
	return translate(t.db.Create(&depositAddressRow{ID: a.ID, MerchantID: a.MerchantID, PaymentID: a.PaymentID,
		CustomerRefID: a.CustomerRefID, DerivationIndex: a.DerivationIndex, Address: a.Address, Livemode: a.Mode.Live(),
		CreatedAt: a.CreatedAt}).Error)
}

// IsDepositAddress reports whether an address (lowercase hex) is any deposit address this
// service ever derived, of any merchant and mode.
func (t *Tx) IsDepositAddress(address string) (bool, error) {
	var n int64
	err := t.db.Model(&depositAddressRow{}).Where("address = ?", address).Limit(1).Count(&n).Error
	return n > 0, translate(err)
}

// CustomerDepositAddress finds the address a merchant's customer already deposits to in a mode.
func (t *Tx) CustomerDepositAddress(merchantID uuid.UUID, mode domain.Mode, customerRefID string) (domain.DepositAddress, error) {
	var r depositAddressRow
	if err := t.db.Take(&r, "merchant_id = ? AND livemode = ? AND customer_ref_id = ?", merchantID, mode.Live(), customerRefID).Error; err != nil {
		return domain.DepositAddress{}, translate(err)
	}
	return r.domain(), nil
}

// InsertPayment stores a payment with its quotes.
func (t *Tx) InsertPayment(p domain.Payment) error {
	row := paymentRow{ID: p.ID, MerchantID: p.Merchant.ID, Livemode: p.Mode.Live(), Type: p.Type, AmountInCents: p.AmountInCents,
		AmountDueCents: p.AmountDueCents, AmountMerchantNetCents: p.AmountMerchantNetCents, Currency: p.Currency,
		Status: p.Status, OrderID: p.OrderID, CustomerRefID: p.CustomerRefID, RedirectURL: p.RedirectURL,
		CustomMetadata: p.CustomMetadata, SecretHash: p.SecretHash, DepositAddressID: p.DepositAddress.ID,
		ExpiresAt: p.ExpiresAt, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, Version: p.Version}
	if err := t.db.Create(&row).Error; err != nil {
		return translate(err)
	}
	return t.InsertQuotes(p.ID, p.Quotes)
}

// InsertQuotes stores quotes of a payment (at creation, or fresh ones replacing expired quotes).
func (t *Tx) InsertQuotes(paymentID uuid.UUID, qs []domain.Quote) error {
	if len(qs) == 0 {
		return nil
	}
	quotes := make([]quoteRow, len(qs))
	for i, q := range qs {
		quotes[i] = quoteRow{ID: q.ID, PaymentID: paymentID, TokenID: q.Token.ID, ChainID: q.Token.Chain.ID,
			ExpectedAmountAsset: q.ExpectedAmountAsset, RateUSDAsset: q.RateUSDAsset, AmountDueCents: q.AmountDueCents,
			ConvenienceFeeCents: q.ConvenienceFeeCents, ExpiresAt: q.ExpiresAt, Status: q.Status, CreatedAt: q.CreatedAt}
	}
	return translate(t.db.Create(&quotes).Error)
}

// SelectQuote records the quote a payment's customer chose.
func (t *Tx) SelectQuote(paymentID, quoteID uuid.UUID) error {
	// UpdateColumn: the customer's choice is not a change of the payment (no updated_at, no version).
	return translate(t.db.Model(&paymentRow{}).Where("id = ?", paymentID).UpdateColumn("selected_quote_id", quoteID).Error)
}

// SelectedQuote reads the quote a payment's customer chose (nil: none yet).
func (t *Tx) SelectedQuote(paymentID uuid.UUID) (*uuid.UUID, error) {
	var row struct{ SelectedQuoteID *uuid.UUID }
	err := t.db.Model(&paymentRow{}).Select("selected_quote_id").Where("id = ?", paymentID).Take(&row).Error
	return row.SelectedQuoteID, translate(err)
}

// PaymentFilter selects a page of a merchant's payments.
type PaymentFilter struct {
	MerchantID uuid.UUID
	Mode       domain.Mode      // only this mode's payments
	Merchant   *domain.Merchant // the merchant itself, when the caller holds it: saves its lookup
	Type       domain.PaymentType
	Status     domain.PaymentStatus
	Search     string // already trimmed; matched per the API's search rules
	SortBy     string // created_at | amount_in_cents
	Ascending  bool
	Limit      int32
	Offset     int32
}

// ListPayments returns one page of payments (fully loaded) and the count of all matches.
func (t *Tx) ListPayments(f PaymentFilter, cat domain.Catalog) ([]domain.Payment, int64, error) {
	q := t.db.Model(&paymentRow{}).Where("payments.merchant_id = ? AND payments.livemode = ?", f.MerchantID, f.Mode.Live())
	if f.Type != "" {
		q = q.Where("payments.type = ?", f.Type)
	}
	if f.Status != "" {
		q = q.Where("payments.status = ?", f.Status)
	}
	if f.Search != "" {
		var err error
		if q, err = t.applySearch(q, f); err != nil {
			return nil, 0, err
		}
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, translate(err)
	}
	dir := "DESC"
	if f.Ascending {
		dir = "ASC"
	}
	col := "created_at"
	if f.SortBy == "amount_in_cents" {
		col = "amount_in_cents"
	}
	var joined []paymentAddressRow
	err := withAddress(q).Order(fmt.Sprintf("payments.%s %s, payments.id %s", col, dir, dir)).
		Limit(int(f.Limit)).Offset(int(f.Offset)).Find(&joined).Error
	if err != nil {
		return nil, 0, translate(err)
	}
	var known []domain.Merchant
	if f.Merchant != nil {
		known = append(known, *f.Merchant)
	}
	rows, addrs := split(joined)
	out, err := t.hydrate(rows, cat, addrs, known...)
	return out, total, err
}

// applySearch narrows to payments whose id equals the term, whose deposit address, receipt tx
// hash or receipt sender starts with it (all stored lowercase), or every payment when the
// merchant's short name contains it. Each branch is an indexed lookup, not a scan.
func (t *Tx) applySearch(q *gorm.DB, f PaymentFilter) (*gorm.DB, error) {
	// Query strings may carry bytes that are not UTF-8; PostgreSQL would refuse them outright.
	term := strings.ToLower(strings.ToValidUTF8(f.Search, "\uFFFD"))
	var m merchantRow
	if err := t.db.Select("short_name").Take(&m, "id = ?", f.MerchantID).Error; err != nil {
		return nil, translate(err)
	}
	if strings.Contains(strings.ToLower(m.ShortName), term) {
		return q, nil
	}
	prefix := escapeLike(term) + "%"
	conds := []string{
		"payments.deposit_address_id IN (SELECT id FROM deposit_addresses WHERE address LIKE @prefix ESCAPE '\\')",
		"payments.id IN (SELECT payment_id FROM payment_receipts WHERE tx_hash LIKE @prefix ESCAPE '\\')",
		"payments.id IN (SELECT payment_id FROM payment_receipts WHERE tx_sender_address LIKE @prefix ESCAPE '\\')",
	}
	args := map[string]any{"prefix": prefix}
	if id, err := uuid.Parse(term); err == nil {
		conds = append(conds, "payments.id = @id")
		args["id"] = id
	}
	return q.Where("("+strings.Join(conds, " OR ")+")", args), nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// GetPayment reads one merchant's payment of a mode; another merchant's id, or another mode's,
// is ErrNotFound. A caller that already holds the merchant (the authenticated one) passes it as
// known and saves its lookup.
func (t *Tx) GetPayment(merchantID uuid.UUID, mode domain.Mode, id uuid.UUID, cat domain.Catalog, known ...domain.Merchant) (domain.Payment, error) {
	var joined []paymentAddressRow
	if err := withAddress(t.db.Model(&paymentRow{})).Where("payments.id = ? AND payments.merchant_id = ? AND payments.livemode = ?", id, merchantID, mode.Live()).
		Limit(1).Find(&joined).Error; err != nil {
		return domain.Payment{}, translate(err)
	}
	if len(joined) == 0 {
		return domain.Payment{}, ErrNotFound
	}
	rows, addrs := split(joined)
	out, err := t.hydrate(rows, cat, addrs, known...)
	if err != nil {
		return domain.Payment{}, err
	}
	return out[0], nil
}

// LockPayment reads a payment by id alone (operator paths) under a row lock on PostgreSQL.
func (t *Tx) LockPayment(id uuid.UUID, cat domain.Catalog) (domain.Payment, error) {
	return t.paymentByID(t.forUpdate(), id, cat)
}

// PaymentByID reads a payment by id alone (operator and worker paths), without a lock.
func (t *Tx) PaymentByID(id uuid.UUID, cat domain.Catalog) (domain.Payment, error) {
	return t.paymentByID(t.db, id, cat)
}

func (t *Tx) paymentByID(q *gorm.DB, id uuid.UUID, cat domain.Catalog) (domain.Payment, error) {
	var row paymentRow
	if err := q.Take(&row, "id = ?", id).Error; err != nil {
		return domain.Payment{}, translate(err)
	}
	out, err := t.hydrate([]paymentRow{row}, cat, nil)
	if err != nil {
		return domain.Payment{}, err
	}
	return out[0], nil
}

// PaymentSecretHash reads only a payment's secret hash (the checkout compares it before loading
// anything else).
func (t *Tx) PaymentSecretHash(id uuid.UUID) ([]byte, error) {
	var row paymentRow
	if err := t.db.Select("secret_hash").Take(&row, "id = ?", id).Error; err != nil {
		return nil, translate(err)
	}
	return row.SecretHash, nil
}

// PaymentMerchant reads which merchant owns a payment.
func (t *Tx) PaymentMerchant(id uuid.UUID) (uuid.UUID, error) {
	var row paymentRow
	if err := t.db.Select("merchant_id").Take(&row, "id = ?", id).Error; err != nil {
		return uuid.Nil, translate(err)
	}
	return row.MerchantID, nil
}

// PaymentVersion reads the version of one merchant's payment; another merchant's id is ErrNotFound.
func (t *Tx) PaymentVersion(merchantID uuid.UUID, mode domain.Mode, id uuid.UUID) (int64, error) {
	var row paymentRow
	if err := t.db.Select("version").Take(&row, "id = ? AND merchant_id = ? AND livemode = ?", id, merchantID, mode.Live()).Error; err != nil {
		return 0, translate(err)
	}
	return row.Version, nil
}
