package store

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// WatchedAddress is a deposit address the watcher follows: the payment it belongs to, or none
// for a customer's reusable address (each transfer is attributed when it is settled).
type WatchedAddress struct {
	DepositAddressID uuid.UUID
	MerchantID       uuid.UUID
	PaymentID        *uuid.UUID
}

// WatchedAddresses lists the deposit addresses to follow: those of payments open or expired
// within grace of since, and every customer's reusable address, keyed by lowercase address.
func (t *Tx) WatchedAddresses(since time.Time, grace time.Duration) (map[string]WatchedAddress, error) {
	return t.watchedAddresses(since, grace, nil)
}

// WatchedAddressOf is one deposit address as WatchedAddresses would list it (keyed by its
// lowercase address), or ErrNotFound when the watcher does not follow it now.
func (t *Tx) WatchedAddressOf(id uuid.UUID, since time.Time, grace time.Duration) (string, WatchedAddress, error) {
	all, err := t.watchedAddresses(since, grace, &id)
	if err != nil {
		return "", WatchedAddress{}, err
	}
	for addr, w := range all {
		return addr, w, nil
	}
	return "", WatchedAddress{}, ErrNotFound
}

// watchedAddresses is WatchedAddresses, of one deposit address when only is set.
func (t *Tx) watchedAddresses(since time.Time, grace time.Duration, only *uuid.UUID) (map[string]WatchedAddress, error) {
	type row struct {
		ID         uuid.UUID
		MerchantID uuid.UUID
		PaymentID  *uuid.UUID
		Address    string
	}
	var rows []row
	open := []domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}
	q := `SELECT da.id, da.merchant_id, da.payment_id, da.address FROM deposit_addresses da
		WHERE da.customer_ref_id IS NULL AND da.id IN (
			SELECT deposit_address_id FROM payments WHERE status IN ? UNION
			SELECT deposit_address_id FROM payments WHERE expires_at > ?)
		UNION ALL
		SELECT da.id, da.merchant_id, da.payment_id, da.address FROM deposit_addresses da WHERE da.customer_ref_id IS NOT NULL`
	args := []any{open, since.Add(-grace).UTC()}
	if only != nil {
		q = `SELECT * FROM (` + q + `) w WHERE w.id = ?`
		args = append(args, *only)
	}
	err := t.db.Raw(q, args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]WatchedAddress, len(rows))
	for _, r := range rows {
		out[strings.ToLower(r.Address)] = WatchedAddress{DepositAddressID: r.ID, MerchantID: r.MerchantID, PaymentID: r.PaymentID}
	}
	return out, nil
}

// OpenPaymentAt finds the newest open payment using a deposit address (ErrNotFound: none).
func (t *Tx) OpenPaymentAt(depositAddressID uuid.UUID) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := t.db.Model(&paymentRow{}).Where("deposit_address_id = ? AND status IN ?", depositAddressID,
		[]domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing}).Order("created_at DESC").Limit(1).Pluck("id", &ids).Error
	if err != nil {
		return uuid.Nil, translate(err)
	}
	if len(ids) == 0 {
		return uuid.Nil, ErrNotFound
	}
	return ids[0], nil
}

// DepositAddressByID reads a deposit address.
func (t *Tx) DepositAddressByID(id uuid.UUID) (domain.DepositAddress, error) {
	var r depositAddressRow
	if err := t.db.Take(&r, "id = ?", id).Error; err != nil {
		return domain.DepositAddress{}, translate(err)
	}
	return r.domain(), nil
}
