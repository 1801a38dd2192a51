package money

// Conversions between a token's smallest unit and US cents at a decimal rate (USD per whole
// token), and the merchant fee. Every rounding of money in the gateway is one of the rules
// here, each written once. The rules share one principle: the books never promise more than the
// chain holds. What is owed to us rounds up, what we credit or send out rounds down.

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// MaxSettledCents caps what one settlement may be worth (10^14 cents, a trillion dollars): far
// above any real payment, and low enough that int64 ledger sums and NUMERIC(20,2) receipts never
// overflow.
const MaxSettledCents = 100_000_000_000_000

// ErrBeyondLimit is a value over MaxSettledCents (it could not be booked safely).
var ErrBeyondLimit = errors.New("money: value beyond the settlement limit")

var hundred = decimal.NewFromInt(100)

// ValueUSD is what units of a token (in its smallest unit, decimals places) are worth at rate,
// exactly: no rounding at all, for comparisons (which quote brought the most, is a balance
// worth sweeping) and for the rounding rules below.
func ValueUSD(units decimal.Decimal, decimals int32, rate decimal.Decimal) decimal.Decimal {
	return units.Shift(-decimals).Mul(rate)
}

// ValueCents is what units of a token are worth at rate, in cents rounded DOWN: everything the
// gateway credits or reports as received (a payment's value and excess, a deposit, a transfer
// credited on its own) is at most what arrived, so the merchant's balance is always backed by
// tokens. A value over MaxSettledCents is ErrBeyondLimit (an int64 would wrap).
func ValueCents(units decimal.Decimal, decimals int32, rate decimal.Decimal) (int64, error) {
	if err := checkUnits(units); err != nil {
		return 0, err
	}
	if err := checkRate(rate); err != nil {
		return 0, err
	}
	cents := ValueUSD(units, decimals, rate).Shift(2).Floor()
	if cents.GreaterThan(decimal.NewFromInt(MaxSettledCents)) {
		return 0, fmt.Errorf("%w: %s USD is over %d cents", ErrBeyondLimit, cents.Shift(-2), int64(MaxSettledCents))
	}
	return cents.IntPart(), nil
}

// USDDown is a USD value rounded down to the cent, by the same rule as ValueCents: what the
// gateway holds (the treasury report's assets) is never overstated.
func USDDown(usd decimal.Decimal) decimal.Decimal { return usd.RoundFloor(2) }

// UnitsToReceive is how many smallest units of a token a customer owes for cents at rate,
// rounded UP: a buyer is never asked for less than the amount due, so the merchant never
// receives less than they priced. Exact at any rate and decimals (QuoRem, not Div, which
// would round at 16 digits).
func UnitsToReceive(cents int64, rate decimal.Decimal, decimals int32) (decimal.Decimal, error) {
	q, r, err := unitsOf(cents, rate, decimals)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if r.IsPositive() {
		q = q.Add(decimal.NewFromInt(1))
	}
	return q, nil
}

// UnitsToSend is how many smallest units of a token pay out cents at rate, rounded DOWN: a
// withdrawal never sends more than the balance it debited.
func UnitsToSend(cents int64, rate decimal.Decimal, decimals int32) (decimal.Decimal, error) {
	q, _, err := unitsOf(cents, rate, decimals)
	return q, err
}

// unitsOf divides cents × 10^decimals by 100 × rate: integer quotient and remainder, exactly.
func unitsOf(cents int64, rate decimal.Decimal, decimals int32) (decimal.Decimal, decimal.Decimal, error) {
	if cents < 0 {
		return decimal.Decimal{}, decimal.Decimal{}, fmt.Errorf("money: negative amount %d cents", cents)
	}
	if err := checkRate(rate); err != nil {
		return decimal.Decimal{}, decimal.Decimal{}, err
	}
	q, r := decimal.New(cents, decimals).QuoRem(rate.Mul(hundred), 0)
	return decimal.NewFromBigInt(q.BigInt(), 0), r, nil // exponent 0: an integer count of units
}

// FeeCents is a fee of bps basis points on cents, rounded HALF UP to the cent: a fee is a price
// the gateway charges, rounded to the nearest cent like any price. It is taken out of the
// credit (net = credit − fee), so the two always add up to the credit and no cent is made or
// lost by the rounding.
func FeeCents(cents, bps int64) int64 {
	return decimal.NewFromInt(cents).Mul(decimal.NewFromInt(bps)).Shift(-4).Round(0).IntPart()
}

func checkRate(rate decimal.Decimal) error {
	if !rate.IsPositive() {
		return fmt.Errorf("money: rate must be positive, not %s", rate)
	}
	return nil
}

func checkUnits(units decimal.Decimal) error {
	if units.IsNegative() || !units.Equal(units.Truncate(0)) {
		return fmt.Errorf("money: %s is not a whole, non-negative number of smallest units", units)
	}
	return nil
}
