// Package lifecycle is the one place where payments, withdrawals and refunds change state. Every change
// goes through an update-by-closure that locks the row, lets the closure change a copy, checks
// the change against the entity's transition table (domain/states.go), writes it with a version
// bump, books what the transition means for the merchant's balance, and inserts the domain event
// announcing it — all in one transaction, so a change and its event commit together or not at all.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Core applies changes. Catalog resolves the tokens of the rows it reads.
type Core struct {
	Store   *store.Store
	Catalog domain.Catalog
	Now     func() time.Time
	// Render gives each event the object as the API's GET returns it, in the deployment's
	// shape: the webhook body. Nil: events carry no object, and nothing is delivered.
	Render Renderer
	// Outbox appends each event in the change's transaction and decides who receives it
	// (webhooks.Fanout). Nil: events are appended and delivered to no one.
	Outbox Outbox
}

// Outbox appends an event to the outbox of the transaction writing its change.
type Outbox interface {
	Append(tx *store.Tx, e domain.Event) error
}

// emit appends e through the Outbox.
func (c *Core) emit(tx *store.Tx, e domain.Event) error {
	if c.Outbox == nil {
		return tx.InsertEvent(e, nil)
	}
	return c.Outbox.Append(tx, e)
}

// Renderer renders entities as the API does (settlement).
type Renderer interface {
	Payment(p domain.Payment) ([]byte, error)
	Withdrawal(w domain.Withdrawal) ([]byte, error)
	Refund(r domain.Refund) ([]byte, error)
}

// PaymentChange changes a locked copy of a payment; returning an error changes nothing.
type PaymentChange func(p *domain.Payment) error

// WithdrawalChange changes a locked copy of a withdrawal; returning an error changes nothing.
type WithdrawalChange func(w *domain.Withdrawal) error

// CreatePayment inserts a new pending payment (version 1) with its quotes and announces it.
func (c *Core) CreatePayment(tx *store.Tx, p *domain.Payment) error {
	if p.Status != domain.PaymentPending {
		return fmt.Errorf("lifecycle: a payment is created pending, not %s", p.Status)
	}
	for _, q := range p.Quotes {
		if q.Status != domain.QuoteActive {
			return fmt.Errorf("lifecycle: a quote is created active, not %s", q.Status)
		}
	}
	p.Version = 1
	if err := tx.InsertPayment(*p); err != nil {
		return err
	}
	return c.emit(tx, c.paymentEvent(domain.EventPaymentCreated, "", *p))
}

// UpdatePayment applies change to payment id in a transaction of its own.
func (c *Core) UpdatePayment(ctx context.Context, id uuid.UUID, change PaymentChange) (domain.Payment, error) {
	var out domain.Payment
	err := c.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = c.UpdatePaymentTx(tx, id, change)
		return err
	})
	return out, err
}

// UpdatePaymentTx applies change inside the caller's transaction (to commit it with, say, an
// idempotency key). A change that alters nothing writes nothing and announces nothing.
func (c *Core) UpdatePaymentTx(tx *store.Tx, id uuid.UUID, change PaymentChange) (domain.Payment, error) {
	before, err := tx.LockPayment(id, c.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Payment{}, err
	}
	frozen := frozenPayment(before, before.Receipt != nil)
	after := clonePayment(before)
	if err := change(&after); err != nil {
		return domain.Payment{}, err
	}
	if err := checkFrozen("payment", before.ID.String(), frozen, frozenPayment(after, before.Receipt != nil)); err != nil {
		return domain.Payment{}, err
	}
	if err := checkPayment(before, after); err != nil {
		return domain.Payment{}, err
	}
	if !paymentChanged(before, after) {
		return before, nil
	}
	after.UpdatedAt, after.Version = c.Now(), before.Version+1
	if err := tx.SavePaymentChange(before, after); err != nil {
		return domain.Payment{}, err
	}
	if after.Status == domain.PaymentCompleted || (after.Status == domain.PaymentExpired && after.AmountMerchantNetCents > 0 && after.Received != nil) {
		// Completion credits the merchant's net once: the ledger's unique (kind, payment) index
		// refuses a second credit, and completed is terminal. An expiry with part of the amount
		// received credits what arrived (a partial amount stays credited).
		id := after.ID
		if err := tx.AppendLedger(before.Merchant.ID, creditMode(after), store.LedgerPaymentCredit, after.AmountMerchantNetCents, &id, nil, after.UpdatedAt); err != nil {
			return domain.Payment{}, err
		}
	}
	if err := c.emit(tx, c.paymentEvent(paymentEventType(before, after), before.Status, after)); err != nil {
		return domain.Payment{}, err
	}
	if before.Status != domain.PaymentCompleted && overpaid(after) {
		// Completed with more than was due: announced on its own after payment.completed, with
		// its own place in the payment's sequence.
		if err := tx.TouchPayment(after.ID, after.Version, after.UpdatedAt); err != nil {
			return domain.Payment{}, err
		}
		after.Version++
		if err := c.emit(tx, c.paymentEvent(domain.EventPaymentOverpaid, "", after)); err != nil {
			return domain.Payment{}, err
		}
	}
	return after, nil
}

// RefreshQuotesTx adds to a live payment (pending, before its expiry) the candidates for the
// tokens it has quotes for, none of them still active — decided under the payment's lock, so two
// refreshes at once add one set; each expires with the payment at the latest. The payment's
// version moves and payment.updated is written.
func (c *Core) RefreshQuotesTx(tx *store.Tx, id uuid.UUID, candidates []domain.Quote) (domain.Payment, error) {
	p, err := tx.LockPayment(id, c.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Payment{}, err
	}
	now := c.Now()
	if p.Status != domain.PaymentPending || !now.Before(p.ExpiresAt) {
		return domain.Payment{}, fmt.Errorf("%w: the payment is %s; its quotes cannot be refreshed", domain.ErrPaymentNotOpen, p.Status)
	}
	had, live := map[string]bool{}, map[string]bool{}
	for _, q := range p.Quotes {
		had[q.Token.ID] = true
		if q.Status == domain.QuoteActive && now.Before(q.ExpiresAt) {
			live[q.Token.ID] = true
		}
	}
	var fresh []domain.Quote
	for _, q := range candidates {
		if had[q.Token.ID] && !live[q.Token.ID] {
			if q.ExpiresAt.After(p.ExpiresAt) {
				q.ExpiresAt = p.ExpiresAt
			}
			fresh = append(fresh, q)
		}
	}
	if len(fresh) == 0 {
		return p, nil
	}
	if err := tx.InsertQuotes(p.ID, fresh); err != nil {
		return domain.Payment{}, err
	}
	if err := tx.TouchPayment(p.ID, p.Version, now); err != nil {
		return domain.Payment{}, err
	}
	p.Quotes = append(p.Quotes, fresh...)
	p.Version, p.UpdatedAt = p.Version+1, now
	return p, c.emit(tx, c.paymentEvent(domain.EventPaymentUpdated, "", p))
}

// overpaid reports whether a completed payment (not a deposit) settled more of its token than
// its quote asked for.
func overpaid(p domain.Payment) bool {
	if p.Status != domain.PaymentCompleted || p.Type != domain.TypePayment || p.Receipt == nil {
		return false
	}
	for _, q := range p.Quotes {
		if q.ID == p.Receipt.QuoteID {
			return p.Receipt.SettledAmountAsset.GreaterThan(q.ExpectedAmountAsset)
		}
	}
	return false
}

// CreateWithdrawal inserts a new pending withdrawal (version 1), debits the merchant's balance
// and announces it. The caller has checked the balance under the merchant's lock.
func (c *Core) CreateWithdrawal(tx *store.Tx, w *domain.Withdrawal) error {
	if w.Status != domain.WithdrawalPending {
		return fmt.Errorf("lifecycle: a withdrawal is created pending, not %s", w.Status)
	}
	w.Version = 1
	if err := tx.InsertWithdrawal(*w); err != nil {
		return err
	}
	id := w.ID
	if w.Mode.Norm() != domain.ChainMode(w.Chain) {
		// Withdrawals are checked against their key's mode before this; this is the last line.
		return fmt.Errorf("lifecycle: a %s-mode withdrawal cannot pay out on %s (a %s chain)", w.Mode.Norm(), w.Chain.Name, domain.ChainMode(w.Chain))
	}
	if err := tx.AppendLedger(w.MerchantID, w.Mode.Norm(), store.LedgerWithdrawalDebit, -w.AmountInCents, nil, &id, w.CreatedAt); err != nil {
		return err
	}
	return c.emit(tx, c.withdrawalEvent(domain.EventWithdrawalCreated, "", *w))
}

// UpdateWithdrawal applies change to withdrawal id in a transaction of its own.
func (c *Core) UpdateWithdrawal(ctx context.Context, id uuid.UUID, change WithdrawalChange) (domain.Withdrawal, error) {
	var out domain.Withdrawal
	err := c.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = c.UpdateWithdrawalTx(tx, id, change)
		return err
	})
	return out, err
}

// UpdateWithdrawalTx applies change inside the caller's transaction.
func (c *Core) UpdateWithdrawalTx(tx *store.Tx, id uuid.UUID, change WithdrawalChange) (domain.Withdrawal, error) {
	before, err := tx.LockWithdrawal(id, c.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	if err != nil {
		return domain.Withdrawal{}, err
	}
	frozen := frozenWithdrawal(before, before.Receipt != nil)
	after := cloneWithdrawal(before)
	if err := change(&after); err != nil {
		return domain.Withdrawal{}, err
	}
	if err := checkFrozen("withdrawal", before.ID.String(), frozen, frozenWithdrawal(after, before.Receipt != nil)); err != nil {
		return domain.Withdrawal{}, err
	}
	if err := checkWithdrawal(before, after); err != nil {
		return domain.Withdrawal{}, err
	}
	if !withdrawalChanged(before, after) {
		return before, nil
	}
	after.UpdatedAt, after.Version = c.Now(), before.Version+1
	if err := tx.SaveWithdrawalChange(before, after); err != nil {
		return domain.Withdrawal{}, err
	}
	if before.Status.Debited() && !after.Status.Debited() {
		// Failed or cancelled: nothing left the hot wallet, so the debit is reversed, once (the
		// ledger's unique (kind, withdrawal) index), and both states are terminal.
		id := after.ID
		if err := tx.AppendLedger(before.MerchantID, before.Mode, store.LedgerWithdrawalReversal, before.AmountInCents, nil, &id, after.UpdatedAt); err != nil {
			return domain.Withdrawal{}, err
		}
	}
	typ := domain.EventWithdrawalUpdated
	if after.Status != before.Status {
		typ = domain.WithdrawalStatusEvent(after.Status)
	}
	if err := c.emit(tx, c.withdrawalEvent(typ, before.Status, after)); err != nil {
		return domain.Withdrawal{}, err
	}
	return after, nil
}

// creditMode is the mode a payment's credit is booked in: the mode of the chain it settled on
// (its receipt's, or the quote it received on), so a payment's money lands in the balance of
// the network it really moved on. A payment quotes only its own mode's chains, so this is its
// mode; rows from before modes existed are why it is read from the chain.
func creditMode(p domain.Payment) domain.Mode {
	if p.Receipt != nil && p.Receipt.Token.ID != "" {
		return domain.ChainMode(p.Receipt.Token.Chain)
	}
	if p.Received != nil {
		for _, q := range p.Quotes {
			if q.ID == p.Received.QuoteID {
				return domain.ChainMode(q.Token.Chain)
			}
		}
	}
	return p.Mode.Norm()
}
