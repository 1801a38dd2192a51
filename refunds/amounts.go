package refunds

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
)

// maxRefundCents is the contract's bound on amountInCents (openapi.yaml CreateRefundRequest).
const maxRefundCents = 100_000_000

// amount is a refund's token amount and the cents it debits, fixed when it is created.
type amount struct {
	token domain.Token
	units decimal.Decimal // smallest unit
	cents int64
	param string // the request field it came from (the refusals name it)
}

// amount converts the request's one amount into the other, each rounded down (money's rule: what
// the gateway sends or credits never exceeds what backs it). amountAsset is valued at the rate
// the payment settled at: the merchant gives back what that part of the payment brought. amountInCents
// is converted at the current price, as a withdrawal is.
func (s *Service) amount(ctx context.Context, p domain.Payment, in CreateInput) (amount, error) {
	if err := refundable(p); err != nil {
		return amount{}, err
	}
	tok := p.Receipt.Token
	switch {
	case (in.AmountInCents == nil) == (in.AmountAsset == nil):
		return amount{}, domain.Invalid(domain.CodeParameterInvalid, "amountInCents", "give exactly one of amountInCents and amountAsset")
	case in.AmountAsset != nil:
		units, err := decimal.NewFromString(*in.AmountAsset)
		if err != nil || !units.IsPositive() || !units.Equal(units.Truncate(0)) {
			return amount{}, domain.Invalid(domain.CodeInvalidAmount, "amountAsset", "amountAsset must be a positive whole number of the token's smallest unit")
		}
		a := amount{token: tok, units: units, param: "amountAsset"}
		if units.GreaterThan(p.Receipt.SettledAmountAsset) {
			return amount{}, exceeds(p, a)
		}
		a.cents, err = money.ValueCents(units, tok.Decimals, settledRate(p))
		if err != nil {
			return amount{}, fmt.Errorf("value refund of payment %s: %w", p.ID, err)
		}
		if a.cents < 1 {
			return amount{}, domain.Invalid(domain.CodeInvalidAmount, "amountAsset", "amountAsset %s %s is worth less than one cent at the payment's rate", units, tok.Symbol)
		}
		return a, nil
	}
	cents := *in.AmountInCents
	if cents < 1 || cents > maxRefundCents {
		return amount{}, domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "amountInCents must be between 1 and %d cents", maxRefundCents)
	}
	rate, err := s.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
	if err != nil {
		// The price source is down or does not know the token: not the client's fault (503).
		return amount{}, fmt.Errorf("%w: refund of payment %s: the price of %s: %w", domain.ErrPriceUnavailable, p.ID, tok.Symbol, err)
	}
	units, err := money.UnitsToSend(cents, rate, tok.Decimals)
	if err != nil {
		return amount{}, fmt.Errorf("refund of payment %s: %w", p.ID, err)
	}
	if !units.IsPositive() {
		return amount{}, domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "%d cents is less than one unit of %s", cents, tok.Symbol)
	}
	a := amount{token: tok, units: units, cents: cents, param: "amountInCents"}
	if units.GreaterThan(p.Receipt.SettledAmountAsset) {
		return amount{}, exceeds(p, a)
	}
	return a, nil
}

// settledRate is the USD rate of the quote the payment settled on.
func settledRate(p domain.Payment) decimal.Decimal {
	for _, q := range p.Quotes {
		if q.ID == p.Receipt.QuoteID {
			return q.RateUSDAsset
		}
	}
	return decimal.Zero // ValueCents refuses it: a receipt always names one of its payment's quotes
}

func exceeds(p domain.Payment, a amount) error {
	return domain.Refuse(domain.CodeRefundExceedsPayment, a.param, "the payment settled %s %s (smallest unit): a refund of %s is more than it settled",
		p.Receipt.SettledAmountAsset, a.token.Symbol, a.units)
}

// excess is what a completed payment settled beyond its quote's amount (zero for a deposit or
// a payment that was not overpaid).
func excess(p domain.Payment) decimal.Decimal {
	if p.Type != domain.TypePayment || p.Status != domain.PaymentCompleted || p.Receipt == nil {
		return decimal.Zero
	}
	for _, q := range p.Quotes {
		if q.ID == p.Receipt.QuoteID && p.Receipt.SettledAmountAsset.GreaterThan(q.ExpectedAmountAsset) {
			return p.Receipt.SettledAmountAsset.Sub(q.ExpectedAmountAsset)
		}
	}
	return decimal.Zero
}
