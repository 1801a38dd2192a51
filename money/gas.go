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
