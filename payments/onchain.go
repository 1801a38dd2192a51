package payments

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/store"
)

// The settlement rules on chain. The watcher records transfers and their
// confirmations; these functions turn them into payment states, always through the lifecycle
// core. They are reconcilers: each call reads the transfers as they are now and moves the
// payment to where they say it belongs, so a call that crashed is finished by the next.
//
//   - A transfer counts for a payment when it is in the canonical chain and its block's time is
//     not after the payment's expiry ("timely"). Later ones are recorded and credited on their
//     own (payment.late_transfer), never dropped.
//   - The payment settles on the quote of the token that brought the most value (the one it
//     already settles on, while that still holds transfers).
//   - pending → processing when a counted transfer is seen; processing → pending when a reorg
//     removed every counted transfer; → completed when the confirmed total reaches the quote's
//     expected amount (a deposit: when what arrived is confirmed); → expired once the chain is
//     past the expiry with less than the amount seen: what is confirmed is credited.

// TxFacts is what a receipt needs from the chain about one transaction.
type TxFacts struct {
	Sender       string          // who signed the transaction
	GasUsed      int64           // from its receipt
	TotalCostWei decimal.Decimal // gas used × effective gas price, in the native smallest unit
}

// ChainReader reads transactions for receipts (the watcher's chain clients).
type ChainReader interface {
	TxFacts(ctx context.Context, chainID int64, txHash string) (TxFacts, error)
}

// OnChain settles payments from the watcher's transfers.
type OnChain struct {
	Payments *Service
	Chains   ChainReader
	Risk     risk.Provider
}

// errSettlementMoved says the transfers changed between the read and the locked write; the
// next round settles on what is there then.
var errSettlementMoved = errors.New("payments: transfers changed while settling; retried next round")

// Reconcile moves one payment to where its transfers say it belongs. It reports whether the
// payment changed.
func (o *OnChain) Reconcile(ctx context.Context, paymentID uuid.UUID) (bool, error) {
	s := o.Payments
	rd := s.Store.Read(ctx)
	p, err := rd.PaymentByID(paymentID, s.Catalog)
	if err != nil {
		return false, err
	}
	if !p.Status.Open() {
		return false, nil // final meanwhile (another process, a manual settlement): nothing to do
	}
	ts, err := rd.PaymentTransfers(paymentID)
	if err != nil {
		return false, err
	}
	cursors, err := rd.CursorTimes()
	if err != nil {
		return false, err
	}
	past := func(chainID int64) bool {
		t, ok := cursors[chainID]
		return ok && t.After(p.ExpiresAt)
	}
	signed, err := signedQuotes(rd, paymentID, ts)
	if err != nil {
		return false, err
	}
	v := evaluate(p, ts, past, signed)
	if v.same(p) {
		return false, nil
	}
	// What the receipt needs from outside the database is read before the transaction.
	var receipt *domain.PaymentReceipt
	var charge *gaslessCharge
	if v.status == domain.PaymentCompleted {
		if receipt, err = o.receipt(ctx, p, v); err != nil {
			return false, err
		}
		if charge, err = o.gaslessCharge(ctx, p, v); err != nil {
			return false, err
		}
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		ts, err := tx.PaymentTransfers(paymentID)
		if err != nil {
			return err
		}
		signed, err := signedQuotes(tx, paymentID, ts)
		if err != nil {
			return err
		}
		var counted []uuid.UUID
		if v.status == domain.PaymentProcessing && v.confirmed.IsPositive() && p.Status == domain.PaymentPending {
			// Seen and already confirmed short (a watcher catching up): announce both steps,
			// payment.processing and then payment.underpaid, as a slower watcher would have.
			seen := v
			seen.confirmed = decimal.Zero
			if _, err := s.Core.UpdatePaymentTx(tx, paymentID, func(p *domain.Payment) error { return s.apply(p, seen, nil, nil) }); err != nil {
				return err
			}
		}
		_, err = s.Core.UpdatePaymentTx(tx, paymentID, func(p *domain.Payment) error {
			if !p.Status.Open() {
				return errSettlementMoved
			}
			now := evaluate(*p, ts, past, signed)
			if now.status == domain.PaymentCompleted && (now.last == nil || v.last == nil || now.last.ID != v.last.ID) {
				return errSettlementMoved
			}
			for _, t := range now.counted {
				counted = append(counted, t.ID)
			}
			return s.apply(p, now, receipt, charge)
		})
		if err != nil {
			return err
		}
		return tx.MarkCredited(counted, s.Now())
	})
	if errors.Is(err, errSettlementMoved) {
		return false, nil
	}
	return err == nil, err
}

// apply moves a locked payment to the verdict (charge: what relaying a signed transfer adds to a
// completion; nil for none).
func (s *Service) apply(p *domain.Payment, v verdict, receipt *domain.PaymentReceipt, charge *gaslessCharge) error {
	if v.quote == nil {
		p.Received = nil
		if v.status != p.Status {
			return p.TransitionTo(v.status)
		}
		return nil
	}
	p.Received = &domain.Received{QuoteID: v.quote.ID, Amount: v.received, Confirmed: v.confirmed}
	q := *v.quote
	switch v.status {
	case domain.PaymentCompleted:
		if err := s.finaliseOnChain(p, q, v.confirmed, charge); err != nil {
			return err
		}
		p.Receipt = receipt
	case domain.PaymentExpired:
		a, err := s.settledAmounts(*p, q, v.confirmed) // short: what is confirmed is credited
		if err != nil {
			return err
		}
		setFees(p, a)
		for i := range p.Quotes {
			if p.Quotes[i].Status == domain.QuoteActive {
				p.Quotes[i].Status = domain.QuoteExpired
			}
		}
	}
	if v.status != p.Status {
		return p.TransitionTo(v.status)
	}
	return nil
}

// finaliseOnChain fixes a completed payment's amounts (settledAmounts: a payment is due its
// quote's amount and keeps any excess, credited — the funds arrived and are the merchant's to
// refund; a deposit is worth what arrived; values round down to the cent).
func (s *Service) finaliseOnChain(p *domain.Payment, q domain.Quote, settled decimal.Decimal, charge *gaslessCharge) error {
	a, err := s.settledAmountsWith(*p, q, settled, charge)
	if err != nil {
		return fmt.Errorf("payment %s: %w", p.ID, err)
	}
	setAmounts(p, a)
	markPaid(p, q)
	return nil
}
