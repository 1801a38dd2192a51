package money

import (
	"github.com/shopspring/decimal"
)

// UnitsToQuote is how many smallest units of a token a quote asks for cents at rate: the exact
// amount rounded UP to the fewest decimals of the token for which the rounding adds less than
// half a cent. A customer copies or reads "0.006167 ETH", not "0.006166666666666667 ETH", and
// the merchant still never receives less than they priced (rounded up, never below the due).
//
// Half a cent is the bound because the settlement values what arrived rounded down to the cent
// (ValueCents): an amount worth less than half a cent over the due is booked as exactly the due,
// so the receipt, the credit and the buyer's total do not move by a cent. When even the token's
// smallest unit adds half a cent or more (a token with few decimals and a high price), no
// rounding is readable within the bound and the amount is UnitsToReceive's, the least possible.
//
// Stablecoins at 1.00 already come out in whole cents (18.50 USDC is 18500000 at 6 decimals)
// and do not change: the rounding adds nothing there.
func UnitsToQuote(cents int64, rate decimal.Decimal, decimals int32) (decimal.Decimal, error) {
	least, err := UnitsToReceive(cents, rate, decimals)
	if err != nil || decimals <= 0 {
		return least, err
	}
	owed := decimal.New(cents, decimals) // cents × 10^decimals: the due in "cent-units"
	perUnit := rate.Mul(hundred)         // cents per whole token
	// Fewer decimals never add less (ceilings to coarser steps only grow), so the first number
	// of decimals that fits is the fewest; the full precision is UnitsToReceive's own answer.
	for k := int32(0); k < decimals; k++ {
		step := decimal.New(1, decimals-k) // one unit of the k-th decimal, in smallest units
		q, r := owed.QuoRem(perUnit.Mul(step), 0)
		units := decimal.NewFromBigInt(q.BigInt(), 0).Mul(step)
		if r.IsPositive() {
			units = units.Add(step)
		}
		if addsUnderHalfCent(units, cents, perUnit, decimals) {
			return decimal.NewFromBigInt(units.BigInt(), 0), nil // exponent 0, as UnitsToReceive's
		}
	}
	return least, nil
}

// addsUnderHalfCent says whether units of a token, at perUnit cents a whole token, are worth
// less than half a cent more than cents: 2 × (units × perUnit − cents × 10^decimals) < 10^decimals,
// all in exact decimals (no division, so no rounding in the comparison itself).
func addsUnderHalfCent(units decimal.Decimal, cents int64, perUnit decimal.Decimal, decimals int32) bool {
	added := units.Mul(perUnit).Sub(decimal.New(cents, decimals))
	return added.Add(added).LessThan(decimal.New(1, decimals))
}
