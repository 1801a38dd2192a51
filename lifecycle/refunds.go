package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Refunds change state here as withdrawals do: the debit is booked with the refund's creation,
// the reversal with its failure or cancellation, each with the refund's event. A refund changes
// what its payment shows (amountRefundedCents), so those two moments also bump the payment's
// version with a payment.updated event: the payment's caches and ETags see the change.

// RefundChange changes a locked copy of a refund; returning an error changes nothing.
type RefundChange func(r *domain.Refund) error

// CreateRefund inserts a new refund (version 1), debits the merchant's balance and announces it.
// p is the refund's payment, locked by the caller, who has checked the balance under the
// merchant's balance lock and the payment's refunded total under the payment's lock.
func (c *Core) CreateRefund(tx *store.Tx, p domain.Payment, r *domain.Refund) error {
	if r.Status != domain.RefundAwaitingAddress && r.Status != domain.RefundPending {
		return fmt.Errorf("lifecycle: a refund is created awaiting_address or pending, not %s", r.Status)
	}
	if (r.RecipientAddress == nil) != (r.Status == domain.RefundAwaitingAddress) || (r.RecipientAddress == nil) != (r.RecipientSource == nil) {
		return fmt.Errorf("lifecycle: refund %s: a refund awaits its address exactly when it has none", r.ID)
	}
	if r.PaymentID != p.ID || r.MerchantID != p.Merchant.ID {
		return fmt.Errorf("lifecycle: refund %s is not of payment %s", r.ID, p.ID)
	}
	if r.Mode.Norm() != domain.ChainMode(r.Chain) {
		// The service pays a refund on its payment's chain, whose mode is the payment's; this is the last line.
		return fmt.Errorf("lifecycle: a %s-mode refund cannot pay out on %s (a %s chain)", r.Mode.Norm(), r.Chain.Name, domain.ChainMode(r.Chain))
	}
	r.Version = 1
	if err := tx.InsertRefund(*r); err != nil {
		return err
	}
	if err := tx.AppendRefundLedger(r.MerchantID, r.Mode.Norm(), store.LedgerRefundDebit, -r.AmountInCents, r.ID, r.CreatedAt); err != nil {
		return err
	}
	if err := c.emit(tx, c.refundEvent(domain.EventRefundCreated, "", *r)); err != nil {
		return err
	}
	p.AmountRefundedCents += r.AmountInCents
	return c.touchRefunded(tx, p)
}

// UpdateRefund applies change to refund id in a transaction of its own.
func (c *Core) UpdateRefund(ctx context.Context, id uuid.UUID, change RefundChange) (domain.Refund, error) {
	var out domain.Refund
	err := c.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = c.UpdateRefundTx(tx, id, change)
		return err
	})
	return out, err
}

// UpdateRefundTx applies change inside the caller's transaction. A change that alters nothing
// writes nothing and announces nothing.
func (c *Core) UpdateRefundTx(tx *store.Tx, id uuid.UUID, change RefundChange) (domain.Refund, error) {
	before, err := tx.LockRefund(id, c.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	if err != nil {
		return domain.Refund{}, err
	}
	frozen := frozenRefund(before, before)
	after := cloneRefund(before)
	if err := change(&after); err != nil {
		return domain.Refund{}, err
	}
	if err := checkFrozen("refund", before.ID.String(), frozen, frozenRefund(after, before)); err != nil {
		return domain.Refund{}, err
	}
	if err := checkRefund(before, after); err != nil {
		return domain.Refund{}, err
	}
	if !refundChanged(before, after) {
		return before, nil
	}
	after.UpdatedAt, after.Version = c.Now(), before.Version+1
	if err := tx.SaveRefundChange(before, after); err != nil {
		return domain.Refund{}, err
	}
	typ := domain.EventRefundUpdated
	if after.Status != before.Status {
		typ = domain.RefundStatusEvent(after.Status)
	}
	if err := c.emit(tx, c.refundEvent(typ, before.Status, after)); err != nil {
		return domain.Refund{}, err
	}
	if before.Status.Debited() && !after.Status.Debited() {
		// Failed or cancelled: nothing reached the customer, so the debit is reversed, once (the
		// ledger's unique (kind, refund) index), and both states are terminal.
		if err := tx.AppendRefundLedger(before.MerchantID, before.Mode.Norm(), store.LedgerRefundReversal, before.AmountInCents, after.ID, after.UpdatedAt); err != nil {
			return domain.Refund{}, err
		}
		p, err := tx.LockPayment(after.PaymentID, c.Catalog)
		if err != nil {
			return domain.Refund{}, err
		}
		if err := c.touchRefunded(tx, p); err != nil { // p was read after the new status: it shows the new total
			return domain.Refund{}, err
		}
	}
	return after, nil
}

// touchRefunded bumps a payment's version for a change of its refunded total and announces it
// (payment.updated: the outbox only).
func (c *Core) touchRefunded(tx *store.Tx, p domain.Payment) error {
	now := c.Now()
	if err := tx.TouchPayment(p.ID, p.Version, now); err != nil {
		return err
	}
	p.Version, p.UpdatedAt = p.Version+1, now
	return c.emit(tx, c.paymentEvent(domain.EventPaymentUpdated, "", p))
}
