package money

import (
	"errors"
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// exactUnits is cents × 10^decimals / (100 × rate) as an exact rational: the independent
// reference the rounding rules are checked against.
func exactUnits(cents int64, rate decimal.Decimal, decimals int32) *big.Rat {
	r := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(cents), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)),
		big.NewInt(100))
	return r.Quo(r, rate.Rat())
}

// exactCents is units / 10^decimals × rate × 100 as an exact rational.
func exactCents(units decimal.Decimal, decimals int32, rate decimal.Decimal) *big.Rat {
	r := new(big.Rat).SetFrac(units.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	return r.Mul(r, rate.Rat()).Mul(r, big.NewRat(100, 1))
}

func TestUnitsToReceiveAndToSend(t *testing.T) {
	tests := []struct {
		name     string
		cents    int64
		rate     string
		decimals int32
		up, down string
	}{
		{"stablecoin 6 decimals, exact", 1150, "1", 6, "11500000", "11500000"},
		{"rate 1.00 written with trailing zeros", 1150, "1.00", 6, "11500000", "11500000"},
		{"ETH 18 decimals: a repeating third rounds up to receive, down to send", 1000, "3000", 18, "3333333333333334", "3333333333333333"},
		{"rate just under the peg", 1000, "0.999999", 6, "10000011", "10000010"},
		{"rate with many decimals", 1000, "3456.789012345678", 18, "2892858072704382", "2892858072704381"},
		{"rate with more decimals than the token", 1000, "0.12345678901234567890123", 6, "81000001", "81000000"},
		{"18-decimal stablecoin (BNB chain) exceeds int64", 1000, "1", 18, "10000000000000000000", "10000000000000000000"},
		{"max amount at rate 1, 6 decimals", 100_000_000, "1", 6, "1000000000000", "1000000000000"},
		{"max amount at ETH rate, 18 decimals", 100_000_000, "3000", 18, "333333333333333333334", "333333333333333333333"},
		{"max amount at many-decimal rate", 100_000_000, "3456.789012345678", 18, "289285807270438135932", "289285807270438135931"},
		{"max amount at a tiny rate", 100_000_000, "0.000001", 18, "1000000000000000000000000000000", "1000000000000000000000000000000"},
		{"sub-dollar rate divides exactly", 400, "0.5", 18, "8000000000000000000", "8000000000000000000"},
		{"BNB price, exact", 1005, "600", 18, "16750000000000000", "16750000000000000"},
		{"zero decimals: one cent at $3 is one unit owed, none sent", 1, "3", 0, "1", "0"},
		{"zero amount is zero", 0, "3000", 18, "0", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rate := dec(tc.rate)
			up, err := UnitsToReceive(tc.cents, rate, tc.decimals)
			require.NoError(t, err)
			down, err := UnitsToSend(tc.cents, rate, tc.decimals)
			require.NoError(t, err)
			assert.Equal(t, tc.up, up.String())
			assert.Equal(t, tc.down, down.String())
			assert.Equal(t, int32(0), up.Exponent(), "an integer in the smallest unit")
			assert.Equal(t, int32(0), down.Exponent(), "an integer in the smallest unit")

			exact := exactUnits(tc.cents, rate, tc.decimals)
			u, d := new(big.Rat).SetInt(up.BigInt()), new(big.Rat).SetInt(down.BigInt())
			assert.True(t, u.Cmp(exact) >= 0 && new(big.Rat).Sub(u, big.NewRat(1, 1)).Cmp(exact) < 0, "receive: the least integer ≥ %s", exact.FloatString(30))
			assert.True(t, d.Cmp(exact) <= 0 && new(big.Rat).Add(d, big.NewRat(1, 1)).Cmp(exact) > 0, "send: the greatest integer ≤ %s", exact.FloatString(30))
		})
	}
}

func TestUnitsRefuseBadInput(t *testing.T) {
	for _, rate := range []string{"0", "0.000", "-1", "-3000.5"} {
		_, err := UnitsToReceive(1000, dec(rate), 18)
		require.Error(t, err, rate)
		assert.Contains(t, err.Error(), "positive")
		_, err = UnitsToSend(1000, dec(rate), 18)
		require.Error(t, err, rate)
	}
	_, err := UnitsToReceive(1000, decimal.Decimal{}, 6)
	require.Error(t, err, "the zero value of decimal is a zero rate")
	_, err = UnitsToSend(-1, dec("1"), 6)
	require.Error(t, err, "a negative amount")
}

func TestValueCents(t *testing.T) {
	tests := []struct {
		name     string
		units    string
		decimals int32
		rate     string
		want     int64
	}{
		{"6 decimals, exact", "10000000", 6, "1", 1000},
		{"6 decimals, one unit under a cent boundary rounds down", "9999999", 6, "1", 999},
		{"6 decimals, one unit over", "10000001", 6, "1", 1000},
		{"18-decimal stablecoin, one unit under $12.35", "12349999999999999999", 18, "1", 1234},
		{"18-decimal stablecoin, exact", "12350000000000000000", 18, "1", 1235},
		{"ETH: the quote's rounded-up amount is worth its cents", "3333333333333334", 18, "3000", 1000},
		{"ETH: one unit under it is a cent short", "3333333333333333", 18, "3000", 999},
		{"half a cent and more still rounds down", "1668333333333333", 18, "3000", 500},
		{"rate with many decimals", "2892858072704382", 18, "3456.789012345678", 1000},
		{"one wei is worth nothing", "1", 18, "3000", 0},
		{"zero", "0", 18, "3000", 0},
		{"zero decimals", "7", 0, "0.333", 233},
		{"exactly the limit", "100000000000000", 2, "1", MaxSettledCents},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValueCents(dec(tc.units), tc.decimals, dec(tc.rate))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			exact := exactCents(dec(tc.units), tc.decimals, dec(tc.rate))
			c := new(big.Rat).SetInt64(got)
			assert.True(t, c.Cmp(exact) <= 0 && new(big.Rat).Add(c, big.NewRat(1, 1)).Cmp(exact) > 0, "floor of %s", exact.FloatString(20))
		})
	}
}

func TestValueCentsRefusesBadInput(t *testing.T) {
	_, err := ValueCents(dec("100000000000001"), 2, dec("1"))
	assert.ErrorIs(t, err, ErrBeyondLimit, "one cent over the limit")
	_, err = ValueCents(dec("61489146912365505386666666666667"), 6, dec("1"))
	assert.ErrorIs(t, err, ErrBeyondLimit, "would wrap an int64")
	for _, units := range []string{"-1", "1.5"} {
		_, err = ValueCents(dec(units), 6, dec("1"))
		assert.Error(t, err, units)
		assert.False(t, errors.Is(err, ErrBeyondLimit))
	}
	_, err = ValueCents(dec("1"), 6, dec("0"))
	assert.Error(t, err, "a zero rate")
}

// The round trip: what a customer is asked for is worth at least the cents; a payout of cents
// is worth at most them.
func TestUnitsAndValueAgree(t *testing.T) {
	for _, rate := range []string{"1", "0.999999", "3000", "3456.789012345678", "0.000001", "600.123"} {
		for _, decimals := range []int32{0, 6, 8, 18} {
			for _, cents := range []int64{1, 99, 100, 1005, 12_345, 100_000_000} {
				up, err := UnitsToReceive(cents, dec(rate), decimals)
				require.NoError(t, err)
				v, err := ValueCents(up, decimals, dec(rate))
				require.NoError(t, err)
				assert.GreaterOrEqual(t, v, cents, "receive %d cents at %s, %d decimals", cents, rate, decimals)
				down, err := UnitsToSend(cents, dec(rate), decimals)
				require.NoError(t, err)
				v, err = ValueCents(down, decimals, dec(rate))
				require.NoError(t, err)
				assert.LessOrEqual(t, v, cents, "send %d cents at %s, %d decimals", cents, rate, decimals)
			}
		}
	}
}

func TestFeeCents(t *testing.T) {
	tests := []struct {
		cents, bps, want int64
	}{
		{1050, 100, 11},               // 10.50 rounds half up
		{1049, 100, 10},               // 10.49 rounds down
		{12350, 100, 124},             // 123.50 rounds half up
		{10050, 100, 101},             // 100.50
		{1500, 100, 15},               // exact
		{400, 100, 4},                 // the minimum payment
		{100_000_000, 100, 1_000_000}, // the maximum
		{1000, 250, 25},
		{1, 4999, 0}, // 0.4999 cent
		{1, 5000, 1}, // half a cent
		{1000, 0, 0}, // no fee
		{1000, 10_000, 1000},
		{0, 100, 0},
		{MaxSettledCents, 100, MaxSettledCents / 100},
	}
	for _, tc := range tests {
		got := FeeCents(tc.cents, tc.bps)
		assert.Equal(t, tc.want, got, "%d bps of %d cents", tc.bps, tc.cents)
	}
}

func TestUSDDown(t *testing.T) {
	for in, want := range map[string]string{"15.005": "15.00", "15.009999": "15.00", "15": "15.00", "0.001": "0.00", "1234.56": "1234.56"} {
		assert.Equal(t, want, USDDown(dec(in)).StringFixed(2), in)
	}
}
