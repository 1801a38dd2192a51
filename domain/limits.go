package domain

import "github.com/paymentsd/paymentsd/money"

// PaymentLimits bound a create-payment amount in cents.
type PaymentLimits struct {
	MinAmountCents int64
	MaxAmountCents int64
}

// The spec's two create-payment minimums conflict: the typed schema says 400 cents, the guide
// text 250. A deployment serves one contract form (settlement.Shape) and the limits that go
// with it; the numbers live here, with the other amount rules.
var (
	SchemaPaymentLimits = PaymentLimits{MinAmountCents: 400, MaxAmountCents: 100_000_000}
	GuidePaymentLimits  = PaymentLimits{MinAmountCents: 250, MaxAmountCents: 100_000_000}
)

// Withdrawal amount bounds of the spec; a merchant's configuration may narrow them.
const (
	WithdrawalMinAmountCents = 100
	WithdrawalMaxAmountCents = 100_000_000
)

// MaxSettledCents caps what one settlement may be worth; the money module enforces it where
// values are computed.
const MaxSettledCents = money.MaxSettledCents
