package money

import (
	"fmt"
	"math"
	"math/big"

	"github.com/shopspring/decimal"
)

// GasCost is what a transaction cost in the chain's native smallest unit: gas used × the
// effective gas price (an L2's L1 data fee is not part of it). A nil price costs nothing.
func GasCost(gasUsed uint64, price *big.Int) decimal.Decimal {
	if price == nil {
		return decimal.Zero
	}
	return decimal.NewFromBigInt(new(big.Int).Mul(new(big.Int).SetUint64(gasUsed), price), 0)
}

// GasCostUSDFractions is a native cost (smallest unit, nativeDecimals places — the chain's own,
// never assumed 18) in millionths of a USD at price, rounded DOWN: a reported cost, never more
// than was spent. The receipts' txTotalCostUsdFractions.
func GasCostUSDFractions(cost decimal.Decimal, nativeDecimals int32, price decimal.Decimal) (int64, error) {
	if err := checkUnits(cost); err != nil {
		return 0, err
	}
	if err := checkRate(price); err != nil {
		return 0, err
	}
	f := ValueUSD(cost, nativeDecimals, price).Shift(6).Floor()
	if f.GreaterThan(decimal.NewFromInt(math.MaxInt64)) {
		return 0, fmt.Errorf("%w: a cost of %s USD", ErrBeyondLimit, f.Shift(-6))
	}
	return f.IntPart(), nil
}

// GasFeeInToken is a native fee (smallest unit, nativeDecimals places) expressed in another token
// (smallest unit, tokenDecimals places) at the two USD prices, rounded UP: a fee a customer bears
// (a refund with subtractNetworkFee) is never understated, so the gateway never pays part of it.
// Exact at any decimals (QuoRem, not Div).
func GasFeeInToken(fee decimal.Decimal, nativeDecimals int32, nativePrice decimal.Decimal, tokenDecimals int32, tokenPrice decimal.Decimal) (decimal.Decimal, error) {
	if err := checkUnits(fee); err != nil {
		return decimal.Decimal{}, err
	}
	if err := checkRate(nativePrice); err != nil {
		return decimal.Decimal{}, err
	}
	if err := checkRate(tokenPrice); err != nil {
		return decimal.Decimal{}, err
	}
	q, r := fee.Mul(nativePrice).Shift(tokenDecimals).QuoRem(tokenPrice.Shift(nativeDecimals), 0)
	q = decimal.NewFromBigInt(q.BigInt(), 0)
	if r.IsPositive() {
		q = q.Add(decimal.NewFromInt(1))
	}
	return q, nil
}

// GasCostCents is a native cost in USD cents at price, rounded UP: a cost charged to someone
// (the relay gas a merchant bears, issue 24) is never understated. Exact (no float).
func GasCostCents(cost decimal.Decimal, nativeDecimals int32, price decimal.Decimal) (int64, error) {
	if err := checkUnits(cost); err != nil {
		return 0, err
	}
	if err := checkRate(price); err != nil {
		return 0, err
	}
	c := ValueUSD(cost, nativeDecimals, price).Shift(2).Ceil()
	if c.GreaterThan(decimal.NewFromInt(MaxSettledCents)) {
		return 0, fmt.Errorf("%w: a cost of %s USD", ErrBeyondLimit, c.Shift(-2))
	}
	return c.IntPart(), nil
}
