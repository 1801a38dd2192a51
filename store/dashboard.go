package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// The dashboard's aggregate reads: the overview's figures (GROUP BY in the database, never a
// scan in Go) and the CSV exports' pages (keyset paging on (created_at, id), so a page costs
// the same however deep the export is).

// TokenIntake is what completed payments settled in one token brought in.
type TokenIntake struct {
	ChainID  int64
	TokenID  string
	Cents    int64           // the payments' amount_merchant_net_cents
	Asset    decimal.Decimal // the settled amounts, smallest unit
	Payments int64
}

// DayVolume is one UTC day's completed payments (by their receipt's time).
type DayVolume struct {
	Day   string // YYYY-MM-DD
	Cents int64
	Count int64
}

// PaymentsByStatus counts a merchant's payments of a mode per status.
func (t *Tx) PaymentsByStatus(merchantID uuid.UUID, mode domain.Mode) (map[domain.PaymentStatus]int64, error) {
	var rows []struct {
		Status domain.PaymentStatus
		N      int64
	}
	err := t.db.Model(&paymentRow{}).Select("status, COUNT(*) AS n").
		Where("merchant_id = ? AND livemode = ?", merchantID, mode.Live()).Group("status").Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := map[domain.PaymentStatus]int64{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// IntakeByToken sums a merchant's completed payments of a mode per settled token. PostgreSQL
// sums the token amounts exactly (NUMERIC); SQLite stores them as text and its SUM would go
// through floating point, so there the database groups the cents and counts and Go adds the
// amounts exactly, one row per completed payment streamed (nothing held but the totals).
func (t *Tx) IntakeByToken(merchantID uuid.UUID, mode domain.Mode) ([]TokenIntake, error) {
	base := t.db.Table("payments").Joins("JOIN payment_receipts r ON r.payment_id = payments.id").
		Where("payments.merchant_id = ? AND payments.livemode = ? AND payments.status = ?", merchantID, mode.Live(), domain.PaymentCompleted)
	var groups []struct {
		ChainID int64
		TokenID string
		Cents   int64
		N       int64
		Asset   string
	}
	sel := "r.chain_id AS chain_id, r.token_id AS token_id, COALESCE(SUM(payments.amount_merchant_net_cents), 0) AS cents, COUNT(*) AS n, '0' AS asset"
	if t.dialect == Postgres {
		sel = "r.chain_id AS chain_id, r.token_id AS token_id, COALESCE(SUM(payments.amount_merchant_net_cents), 0) AS cents, COUNT(*) AS n, SUM(r.settled_amount_asset)::text AS asset"
	}
	if err := base.Session(&gorm.Session{}).Select(sel).Group("r.chain_id, r.token_id").Order("r.chain_id, r.token_id").Scan(&groups).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]TokenIntake, len(groups))
	idx := map[string]int{}
	for i, g := range groups {
		a, err := decimal.NewFromString(g.Asset)
		if err != nil {
			return nil, err
		}
		out[i] = TokenIntake{ChainID: g.ChainID, TokenID: g.TokenID, Cents: g.Cents, Asset: a, Payments: g.N}
		idx[g.TokenID] = i
	}
	if t.dialect == Postgres || len(groups) == 0 {
		return out, nil
	}
	rows, err := base.Session(&gorm.Session{}).Select("r.token_id, r.settled_amount_asset").Rows()
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var tok, amount string
		if err := rows.Scan(&tok, &amount); err != nil {
			return nil, translate(err)
		}
		a, err := decimal.NewFromString(amount)
		if err != nil {
			return nil, err
		}
		if i, ok := idx[tok]; ok {
			out[i].Asset = out[i].Asset.Add(a)
		}
	}
	return out, translate(rows.Err())
}

// DailyVolume sums a merchant's payments of a mode completed since (a UTC midnight) per UTC day
// of their receipt; days without any are absent.
func (t *Tx) DailyVolume(merchantID uuid.UUID, mode domain.Mode, since time.Time) ([]DayVolume, error) {
	day := "strftime('%Y-%m-%d', r.created_at)"
	if t.dialect == Postgres {
		day = "to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	var out []DayVolume
	err := t.db.Table("payments").Joins("JOIN payment_receipts r ON r.payment_id = payments.id").
		Select(day+" AS day, COALESCE(SUM(payments.amount_merchant_net_cents), 0) AS cents, COUNT(*) AS count").
		Where("payments.merchant_id = ? AND payments.livemode = ? AND payments.status = ? AND r.created_at >= ?",
			merchantID, mode.Live(), domain.PaymentCompleted, since.UTC()).
		Group("day").Order("day").Scan(&out).Error
	return out, translate(err)
}

// ExportCursor is where an export page starts: after (CreatedAt, ID); zero: at the range's start.
type ExportCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// PaymentExportRow is one payment as the CSV export shows it.
type PaymentExportRow struct {
	ID                     uuid.UUID
	CreatedAt              time.Time
	UpdatedAt              time.Time
	Type                   string
	Status                 string
	AmountInCents          int64
	AmountDueCents         int64
	AmountMerchantNetCents int64
	Currency               string
	ChainID                *int64
	TokenID                *string
	SettledAmountAsset     *string
	TxHash                 *string
	DepositAddress         *string
	OrderID                *string
	CustomerRefID          *string
}

// WithdrawalExportRow is one withdrawal as the CSV export shows it.
type WithdrawalExportRow struct {
	ID                 uuid.UUID
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Status             string
	AmountInCents      int64
	Currency           string
	ChainID            int64
	TokenID            string
	SettledAmountAsset *string
	RecipientAddress   string
	TxHash             *string
	OrderID            *string
}

// keyset narrows to the rows after c in (created_at, id) order.
func keysetAfter(col, idCol string, c ExportCursor) (string, []any) {
	if c.ID == uuid.Nil {
		return "1 = 1", nil
	}
	at := c.CreatedAt.UTC()
	return "(" + col + " > ? OR (" + col + " = ? AND " + idCol + " > ?))", []any{at, at, c.ID}
}

// ExportPayments reads up to limit of a merchant's payments of a mode created in [from, to),
// after c, oldest first.
func (t *Tx) ExportPayments(merchantID uuid.UUID, mode domain.Mode, from, to time.Time, c ExportCursor, limit int) ([]PaymentExportRow, error) {
	cond, args := keysetAfter("payments.created_at", "payments.id", c)
	var out []PaymentExportRow
	err := t.db.Table("payments").
		Select("payments.id, payments.created_at, payments.updated_at, payments.type, payments.status, payments.amount_in_cents, "+
			"payments.amount_due_cents, payments.amount_merchant_net_cents, payments.currency, r.chain_id, r.token_id, "+
			"r.settled_amount_asset, r.tx_hash, a.address AS deposit_address, payments.order_id, payments.customer_ref_id").
		Joins("LEFT JOIN payment_receipts r ON r.payment_id = payments.id").
		Joins("LEFT JOIN deposit_addresses a ON a.id = payments.deposit_address_id").
		Where("payments.merchant_id = ? AND payments.livemode = ? AND payments.created_at >= ? AND payments.created_at < ?",
			merchantID, mode.Live(), from.UTC(), to.UTC()).
		Where(cond, args...).Order("payments.created_at, payments.id").Limit(limit).Scan(&out).Error
	return out, translate(err)
}

// ExportWithdrawals is ExportPayments for withdrawals.
func (t *Tx) ExportWithdrawals(merchantID uuid.UUID, mode domain.Mode, from, to time.Time, c ExportCursor, limit int) ([]WithdrawalExportRow, error) {
	cond, args := keysetAfter("withdrawals.created_at", "withdrawals.id", c)
	var out []WithdrawalExportRow
	err := t.db.Table("withdrawals").
		Select("withdrawals.id, withdrawals.created_at, withdrawals.updated_at, withdrawals.status, withdrawals.amount_in_cents, "+
			"withdrawals.currency, withdrawals.chain_id, withdrawals.token_id, r.settled_amount_asset, withdrawals.recipient_address, "+
			"r.tx_hash, withdrawals.order_id").
		Joins("LEFT JOIN withdrawal_receipts r ON r.withdrawal_id = withdrawals.id").
		Where("withdrawals.merchant_id = ? AND withdrawals.livemode = ? AND withdrawals.created_at >= ? AND withdrawals.created_at < ?",
			merchantID, mode.Live(), from.UTC(), to.UTC()).
		Where(cond, args...).Order("withdrawals.created_at, withdrawals.id").Limit(limit).Scan(&out).Error
	return out, translate(err)
}
