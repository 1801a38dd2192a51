package payments

import (
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
)

// settledAmounts computes every amount of settling p on quote q with received units of its
// token. The manual settlement, the watcher's (completed or expired short) and a transfer
// credited on its own all come here, so no two paths can value the same money differently.
func (s *Service) settledAmounts(p domain.Payment, q domain.Quote, received decimal.Decimal) (money.Amounts, error) {
	return s.settledAmountsWith(p, q, received, nil)
}

// settledAmountsWith is settledAmounts with what relaying a signed transfer charges (nil: none).
func (s *Service) settledAmountsWith(p domain.Payment, q domain.Quote, received decimal.Decimal, c *gaslessCharge) (money.Amounts, error) {
	t := money.Terms{Received: received, Decimals: q.Token.Decimals, Rate: q.RateUSDAsset, MerchantFeeBps: s.MerchantFeeBps}
	if p.Type == domain.TypePayment {
		t.Due = &money.Due{AmountCents: p.AmountInCents, ConvenienceFeeCents: q.ConvenienceFeeCents, Units: q.ExpectedAmountAsset}
	}
	c.terms(&t)
	return money.Settle(t)
}

// transferAmounts values a transfer credited on its own (not counted by its payment's
// settlement) at quote q's rate: like a deposit, worth what arrived.
func (s *Service) transferAmounts(q domain.Quote, units decimal.Decimal) (money.Amounts, error) {
	return money.Settle(money.Terms{Received: units, Decimals: q.Token.Decimals, Rate: q.RateUSDAsset, MerchantFeeBps: s.MerchantFeeBps})
}

// setAmounts writes a completed settlement's amounts and fees on the payment.
func setAmounts(p *domain.Payment, a money.Amounts) {
	p.AmountInCents, p.AmountDueCents = a.AmountInCents, a.AmountDueCents
	setFees(p, a)
}

// setFees writes the fees and the merchant's net (an expiry keeps the payment's amounts).
func setFees(p *domain.Payment, a money.Amounts) {
	conv, fee, swap := a.ConvenienceFeeCents, a.MerchantFeeCents, a.SwapFeeCents
	p.ConvenienceFeeCents, p.MerchantFeeCents, p.SwapFeeCents = &conv, &fee, &swap
	p.AmountMerchantNetCents = a.NetCents
}
