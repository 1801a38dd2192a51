package payments

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
)

// SettleInput is the operator's manual settlement of a payment (`paymentsd payments settle`).
type SettleInput struct {
	PaymentID   uuid.UUID
	QuoteID     *uuid.UUID       // default: the payment's cheapest quote
	TxHash      string           // 0x + 64 hex
	AmountAsset *decimal.Decimal // smallest unit; default the quote's expected amount; required for deposits
}

var txHashRE = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

// Settle completes a pending or processing payment on one of its active quotes: the receipt is
// attached (processedBy manual), fees are finalised, the paid quote becomes used and the others
// expired — one change through the lifecycle core, which credits the merchant's net and writes
// the payment.completed event in the same transaction (sealed with seal when it is not nil).
// Any other status is refused with a *domain.TransitionError.
func (s *Service) Settle(ctx context.Context, in SettleInput, seal Sealer[domain.Payment]) (domain.Payment, error) {
	if !txHashRE.MatchString(in.TxHash) {
		return domain.Payment{}, domain.Invalid(domain.CodeParameterInvalid, "tx-hash", "transaction hash must be 0x followed by 64 hex digits")
	}
	hash := strings.ToLower(in.TxHash)
	var out domain.Payment
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		p, err := s.Core.UpdatePaymentTx(tx, in.PaymentID, func(p *domain.Payment) error {
			if !p.Status.Open() {
				return &domain.TransitionError{Entity: "payment", ID: p.ID.String(), From: string(p.Status), To: string(domain.PaymentCompleted)}
			}
			q, err := s.pickQuote(*p, in.QuoteID)
			if err != nil {
				return err
			}
			return s.finalise(p, q, in.AmountAsset, hash)
		})
		if err != nil {
			return err
		}
		// The operator's settlement stands for what the watcher has recorded for this payment so
		// far: those transfers are not credited again on their own (CreditUncounted also skips
		// the settled transaction if it is seen only later).
		if err := s.markRecordedCredited(tx, p.ID); err != nil {
			return err
		}
		out = s.present(p)
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	})
	return out, err
}

// MerchantOf reads which merchant a payment belongs to (operator commands scope their
// idempotency keys by it); ErrPaymentNotFound when there is no such payment.
func (s *Service) MerchantOf(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	m, err := s.Store.Read(ctx).PaymentMerchant(id)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, domain.ErrPaymentNotFound
	}
	return m, err
}

// pickQuote returns the chosen quote, or the cheapest active one, or — when every quote has
// expired while the payment is still open (a late transfer) — the cheapest expired one. A used
// or failed quote cannot be paid.
func (s *Service) pickQuote(p domain.Payment, id *uuid.UUID) (domain.Quote, error) {
	now := s.Now()
	payable := func(q domain.Quote) bool {
		return q.Status == domain.QuoteActive || q.Status == domain.QuoteExpired
	}
	if id != nil {
		for _, q := range p.Quotes {
			if q.ID != *id {
				continue
			}
			if !payable(q) {
				return domain.Quote{}, &domain.TransitionError{Entity: "quote", ID: q.ID.String(), From: string(q.Status), To: string(domain.QuoteUsed)}
			}
			return q, nil
		}
		return domain.Quote{}, domain.Invalid(domain.CodeParameterInvalid, "quote", "quote %s does not belong to payment %s", id, p.ID)
	}
	if q, ok := cheapest(p.Quotes, func(q domain.Quote) bool { return effectiveQuoteStatus(q, now) == domain.QuoteActive }); ok {
		return q, nil
	}
	if q, ok := cheapest(p.Quotes, payable); ok {
		return q, nil
	}
	return domain.Quote{}, domain.Invalid(domain.CodeParameterInvalid, "quote", "payment %s has no quote left to settle on", p.ID)
}

// cheapest is the quote with the lowest amount due among those ok accepts (deposits' quotes
// have none: the first accepted).
func cheapest(qs []domain.Quote, ok func(domain.Quote) bool) (domain.Quote, bool) {
	var best *domain.Quote
	for i, q := range qs {
		if !ok(q) {
			continue
		}
		if best == nil || (q.AmountDueCents != nil && (best.AmountDueCents == nil || *q.AmountDueCents < *best.AmountDueCents)) {
			best = &qs[i]
		}
	}
	if best == nil {
		return domain.Quote{}, false
	}
	return *best, true
}

// finalise fixes the paid quote's amounts and fees by the same rule as the watcher's
// settlement (settledAmounts): an overpayment's excess is credited, values round down to the
// cent. A deposit settles at the amount received, which the operator must give.
func (s *Service) finalise(p *domain.Payment, q domain.Quote, amountAsset *decimal.Decimal, txHash string) error {
	settled := q.ExpectedAmountAsset
	if amountAsset != nil {
		settled = *amountAsset
	}
	if p.Type == TypeDeposit && amountAsset == nil {
		return domain.Invalid(domain.CodeParameterMissing, "amount-asset", "a deposit settles with the amount received (--amount-asset)")
	}
	if !settled.IsPositive() || !settled.Equal(settled.Truncate(0)) {
		return domain.Invalid(domain.CodeParameterInvalid, "amount-asset", "amount must be a positive integer in the token's smallest unit")
	}
	a, err := s.settledAmounts(*p, q, settled)
	if errors.Is(err, money.ErrBeyondLimit) {
		// Beyond any real payment, and beyond what the ledger's int64 cents could sum safely.
		return domain.Invalid(domain.CodeParameterInvalid, "amount-asset", "settled value exceeds the %d-cent limit", int64(domain.MaxSettledCents))
	}
	if err != nil {
		return err
	}
	if a.Outcome == money.Underpaid {
		return domain.Invalid(domain.CodeParameterInvalid, "amount-asset", "amount %s is below the quote's expected %s", settled, q.ExpectedAmountAsset)
	}
	setAmounts(p, a)
	markPaid(p, q)
	if err := p.TransitionTo(domain.PaymentCompleted); err != nil {
		return err
	}
	processedBy := domain.ProcessedByManual
	now := s.Now()
	p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: q.ID, Token: q.Token, SettledAmountAsset: settled,
		SettledAmountUSD: a.SettledUSD, TxHash: &txHash, ProcessedBy: &processedBy,
		RequiredConfirmations: q.Token.Chain.RequiredConfirmations, Confirmations: q.Token.Chain.RequiredConfirmations, CreatedAt: now}
	return nil
}

// markPaid marks the paid quote used and the other active ones expired.
func markPaid(p *domain.Payment, q domain.Quote) {
	for i := range p.Quotes {
		switch {
		case p.Quotes[i].ID == q.ID:
			p.Quotes[i].Status = domain.QuoteUsed
		case p.Quotes[i].Status == domain.QuoteActive:
			p.Quotes[i].Status = domain.QuoteExpired // another quote was paid
		}
	}
}

// markRecordedCredited marks every transfer recorded for a payment as held by its credit.
func (s *Service) markRecordedCredited(tx *store.Tx, paymentID uuid.UUID) error {
	ts, err := tx.PaymentTransfers(paymentID)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(ts))
	for _, t := range ts {
		if t.Status != store.TransferOrphaned {
			ids = append(ids, t.ID)
		}
	}
	return tx.MarkCredited(ids, s.Now())
}
