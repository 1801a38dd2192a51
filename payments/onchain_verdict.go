package payments

import (
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
)

// verdict is where a payment's transfers say it belongs.
type verdict struct {
	status    domain.PaymentStatus
	quote     *domain.Quote
	received  decimal.Decimal // counted transfers of the quote's token in the canonical chain
	confirmed decimal.Decimal // of those, confirmed
	counted   []store.Transfer
	last      *store.Transfer // the confirmed transfer that completed it: the receipt's transaction
}

// evaluate applies the rules to a payment's transfers. scannedPast says the settling chain has
// been scanned past the payment's expiry (no more timely transfer can appear there). signed maps
// a token to the quote a relayed authorization among the transfers was signed for (signedQuotes).
func evaluate(p domain.Payment, ts []store.Transfer, scannedPast func(chainID int64) bool, signed map[string]uuid.UUID) verdict {
	v := verdict{status: p.Status}
	if !p.Status.Open() {
		return v
	}
	timely := func(t store.Transfer) bool {
		return t.Status != store.TransferOrphaned && !t.BlockTime.After(p.ExpiresAt)
	}
	// A token can have several quotes (the checkout refreshes expired ones): its transfers are
	// judged against the one asking the least — every quote the customer was given stays
	// payable, so one paid under an expired quote is not held to its fresher price.
	quoteFor := map[string]*domain.Quote{}
	for i := range p.Quotes {
		q := &p.Quotes[i]
		if q.Status == domain.QuoteFailed {
			continue
		}
		if cur := quoteFor[q.Token.ID]; cur == nil || q.ExpectedAmountAsset.LessThan(cur.ExpectedAmountAsset) {
			quoteFor[q.Token.ID] = q
		}
	}
	// A transfer the customer signed (a payment without gas) was made for one quote: its value
	// holds that quote's amount and, when the buyer pays the relay, the fee on top. Judged
	// against a cheaper quote of the token, the fee would be taken for an overpayment.
	for i := range p.Quotes {
		q := &p.Quotes[i]
		if id, ok := signed[q.Token.ID]; ok && id == q.ID && q.Status != domain.QuoteFailed {
			quoteFor[q.Token.ID] = q
		}
	}
	value := map[uuid.UUID]decimal.Decimal{}
	for _, t := range ts {
		if q := quoteFor[t.TokenID]; q != nil && timely(t) {
			value[q.ID] = value[q.ID].Add(money.ValueUSD(t.Amount, q.Token.Decimals, q.RateUSDAsset))
		}
	}
	for i := range p.Quotes {
		q := &p.Quotes[i]
		val, ok := value[q.ID]
		if !ok {
			continue
		}
		if p.Received != nil && p.Received.QuoteID == q.ID {
			v.quote = q // stay on the quote already settling while it holds transfers
			break
		}
		if v.quote == nil || val.GreaterThan(value[v.quote.ID]) {
			v.quote = q
		}
	}
	if v.quote == nil {
		if p.Status == domain.PaymentProcessing {
			v.status = domain.PaymentPending // every counted transfer was reorged out
		}
		return v
	}
	for _, t := range ts {
		if t.TokenID != v.quote.Token.ID || !timely(t) {
			continue
		}
		v.received = v.received.Add(t.Amount)
		if t.Status == store.TransferConfirmed {
			v.confirmed = v.confirmed.Add(t.Amount)
			v.counted = append(v.counted, t)
			last := t
			v.last = &last
		}
	}
	past := scannedPast(v.quote.Token.Chain.ID)
	switch {
	case p.Type == domain.TypePayment && v.confirmed.GreaterThanOrEqual(v.quote.ExpectedAmountAsset):
		v.status = domain.PaymentCompleted
	case p.Type == domain.TypeDeposit && v.confirmed.IsPositive() && (v.confirmed.Equal(v.received) || past):
		v.status = domain.PaymentCompleted
	case past && p.Type == domain.TypePayment && v.received.LessThan(v.quote.ExpectedAmountAsset):
		v.status = domain.PaymentExpired // short, and nothing more can count: what is confirmed is credited
	default:
		v.status = domain.PaymentProcessing
	}
	if v.status != domain.PaymentCompleted && v.status != domain.PaymentExpired {
		v.counted, v.last = nil, nil
	}
	return v
}

// same reports whether the payment already is where the verdict puts it.
func (v verdict) same(p domain.Payment) bool {
	if v.status != p.Status {
		return false
	}
	if v.quote == nil {
		return p.Received == nil || p.Status == domain.PaymentPending
	}
	r := p.Received
	return r != nil && r.QuoteID == v.quote.ID && r.Amount.Equal(v.received) && r.Confirmed.Equal(v.confirmed)
}
