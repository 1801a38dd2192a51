package money

import (
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected figures below are worked by hand from the rule (the exact amount, its ceiling at
// each number of decimals from 0 up, what each adds in cents); checkQuoteRule then checks every
// one against the rule again with big.Rat, independently of UnitsToQuote's own arithmetic.
func TestUnitsToQuote(t *testing.T) {
	tests := []struct {
		name     string
		cents    int64
		rate     string
		decimals int32
		want     string
	}{
		// The example: 0.0061666… ETH; 0.006167 adds 0.1 cent, 0.00617 would add 1 cent.
		{"$18.50 at $3,000/ETH is 0.006167 ETH", 1850, "3000", 18, "6167000000000000"},
		{"$10.00 at $3,000/ETH: 0.003334 ETH adds 0.2 cent, 0.00334 would add 2", 1000, "3000", 18, "3334000000000000"},
		{"stablecoin at 1.00, 6 decimals: already whole cents, unchanged", 1850, "1", 6, "18500000"},
		{"stablecoin at 1.00 with a convenience fee: unchanged", 1005, "1", 6, "10050000"},
		{"18-decimal stablecoin at 1.00: unchanged", 1850, "1", 18, "18500000000000000000"},
		{"stablecoin off its peg: 18.504 adds 0.03 cent, 18.51 would add 0.63", 1850, "0.9998", 6, "18504000"},
		// 100 cents at 150 cents a token is 0.666… tokens: 0.67 adds 100.5 − 100 cents.
		{"exactly half a cent added is too much: one more decimal", 100, "1.5", 18, "667000000000000000"},
		{"just under half a cent added (0.4999933): two decimals", 100, "1.4999999", 18, "670000000000000000"},
		{"just over half a cent added (0.5000067): three decimals", 100, "1.5000001", 18, "667000000000000000"},
		{"one decimal token, half a cent exactly at 0 decimals: 0.7 tokens", 1, "0.015", 1, "7"},
		{"one decimal token, 0.4999 cent at 0 decimals: 1 token", 1, "0.014999", 1, "10"},
		{"many decimals: 0.0001905 BTC adds 0.2 cent, 0.000191 would add 5", 1850, "97123.45", 8, "19050"},
		{"high rate, exact: 0.000185 BTC", 1850, "100000", 8, "18500"},
		{"rate with many decimals: 0.002893 ETH", 1000, "3456.789012345678", 18, "2893000000000000"},
		{"rate with many decimals and a fee: 0.002908 ETH", 1005, "3456.789012345678", 18, "2908000000000000"},
		{"one cent at $3,000/ETH: 0.000004 ETH adds 0.2 cent", 1, "3000", 18, "4000000000000"},
		{"huge rate: 15 of 18 decimals", 1850, "3000000000000", 18, "6167000"},
		{"huge rate, exact", 1850, "1000000000000", 18, "18500000"},
		{"tiny rate: whole tokens suffice", 1850, "0.000013", 18, "1423077000000000000000000"},
		{"tiny rate, exact", 1, "0.000000000001", 18, "10000000000000000000000000000"},
		{"0-decimal token, exact", 300, "3", 0, "1"},
		{"0-decimal token: a unit is worth $3, the least units owed", 1, "3", 0, "1"},
		{"2-decimal token at $3,000: its smallest unit is $30, the least units owed", 1850, "3000", 2, "1"},
		{"zero is zero", 0, "3000", 18, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnitsToQuote(tc.cents, dec(tc.rate), tc.decimals)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
			assert.Equal(t, int32(0), got.Exponent(), "an integer in the smallest unit")
			checkQuoteRule(t, tc.cents, dec(tc.rate), tc.decimals, got)
		})
	}
}

func TestUnitsToQuoteRefusesBadInput(t *testing.T) {
	_, err := UnitsToQuote(1000, dec("0"), 18)
	require.Error(t, err, "no rate")
	_, err = UnitsToQuote(-1, dec("3000"), 18)
	require.Error(t, err, "a negative amount")
}

// FuzzUnitsToQuote checks the rule's invariants for any amount, rate and decimals.
func FuzzUnitsToQuote(f *testing.F) {
	f.Add(int64(1850), "3000", uint8(18))
	f.Add(int64(1850), "1", uint8(6))
	f.Add(int64(100), "1.5", uint8(18))
	f.Add(int64(1850), "97123.45", uint8(8))
	f.Add(int64(1850), "3000", uint8(2))
	f.Add(int64(1), "0.000000000001", uint8(0))
	f.Fuzz(func(t *testing.T, cents int64, rateText string, decimals uint8) {
		rate, err := decimal.NewFromString(rateText)
		if err != nil || !rate.IsPositive() || rate.Exponent() < -30 || rate.Exponent() > 10 ||
			cents < 0 || cents > 100_000_000 || decimals > 36 {
			return // outside what a quote can hold
		}
		got, err := UnitsToQuote(cents, rate, int32(decimals))
		if err != nil {
			t.Fatal(err)
		}
		checkQuoteRule(t, cents, rate, int32(decimals), got)
	})
}

// checkQuoteRule checks units against the rule, by exact rationals:
//   - never below the due: units ≥ the exact amount;
//   - the ceiling of the exact amount at the decimals units uses (no further rounding up);
//   - worth less than half a cent over the due, unless even the least whole number of units is
//     not (then units is that least number);
//   - no fewer decimals possible: one decimal fewer would add half a cent or more.
func checkQuoteRule(t *testing.T, cents int64, rate decimal.Decimal, decimals int32, units decimal.Decimal) {
	t.Helper()
	exact := exactUnits(cents, rate, decimals)
	u := new(big.Rat).SetInt(units.BigInt())
	if !units.Equal(units.Truncate(0)) || u.Cmp(exact) < 0 {
		t.Fatalf("%d cents at %s (%d decimals): %s is not a whole number of units ≥ %s", cents, rate, decimals, units, exact.FloatString(30))
	}
	ceilAt := func(k int32) *big.Rat { // the exact amount rounded up to k decimals, in smallest units
		step := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals-k)), nil)
		q := new(big.Rat).Quo(exact, new(big.Rat).SetInt(step))
		c := new(big.Int).Quo(q.Num(), q.Denom())
		if !q.IsInt() {
			c.Add(c, big.NewInt(1))
		}
		return new(big.Rat).SetInt(c.Mul(c, step))
	}
	underHalfCent := func(x *big.Rat) bool { // x units worth less than cents + ½
		v := exactCents(decimal.NewFromBigRat(x, 0), decimals, rate)
		return v.Sub(v, new(big.Rat).SetInt64(cents)).Cmp(big.NewRat(1, 2)) < 0
	}
	// The decimals units uses: the token's, less its trailing zeros (zero uses none).
	used := decimals
	for used > 0 {
		step := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals-used+1)), nil)
		if new(big.Int).Rem(units.BigInt(), step).Sign() != 0 {
			break
		}
		used--
	}
	if ceilAt(used).Cmp(u) != 0 {
		t.Fatalf("%d cents at %s (%d decimals): %s is not the exact amount %s rounded up at %d decimals", cents, rate, decimals, units, exact.FloatString(30), used)
	}
	if !underHalfCent(u) {
		if least := ceilAt(decimals); least.Cmp(u) != 0 {
			t.Fatalf("%d cents at %s (%d decimals): %s adds half a cent or more, and is not the least %s", cents, rate, decimals, units, least.FloatString(0))
		}
		return
	}
	if used > 0 && underHalfCent(ceilAt(used-1)) {
		t.Fatalf("%d cents at %s (%d decimals): %s, yet %d decimals (%s) add less than half a cent", cents, rate, decimals, units, used-1, ceilAt(used-1).FloatString(0))
	}
}
