package payments

import (
	"math/big"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

func TestExpectedAmountAsset(t *testing.T) {
	tests := []struct {
		name     string
		cents    int64
		rate     decimal.Decimal
		decimals int32
		want     string
	}{
		{"stablecoin 6 decimals, exact", 1150, decimal.RequireFromString("1"), 6, "11500000"},
		{"rate 1.00 written with trailing zeros", 1150, decimal.RequireFromString("1.00"), 6, "11500000"},
		{"ETH 18 decimals rounds up a repeating third", 1000, decimal.RequireFromString("3000"), 18, "3333333333333334"},
		{"rate with positive exponent (coef 3, exp 3) equals 3000", 1000, decimal.New(3, 3), 18, "3333333333333334"},
		{"rate just under the peg rounds up", 1000, decimal.RequireFromString("0.999999"), 6, "10000011"},
		{"rate with many decimals", 1000, decimal.RequireFromString("3456.789012345678"), 18, "2892858072704382"},
		{"18-decimal stablecoin (BNB chain) exceeds int64", 1000, decimal.RequireFromString("1"), 18, "10000000000000000000"},
		{"max amount at rate 1, 6 decimals", 100_000_000, decimal.RequireFromString("1"), 6, "1000000000000"},
		{"max amount at ETH rate, 18 decimals", 100_000_000, decimal.RequireFromString("3000"), 18, "333333333333333333334"},
		{"max amount at many-decimal rate", 100_000_000, decimal.RequireFromString("3456.789012345678"), 18, "289285807270438135932"},
		{"max amount at a tiny rate", 100_000_000, decimal.RequireFromString("0.000001"), 18, "1000000000000000000000000000000"},
		{"sub-dollar rate divides exactly", 400, decimal.RequireFromString("0.5"), 18, "8000000000000000000"},
		{"BNB price, exact", 1005, decimal.RequireFromString("600"), 18, "16750000000000000"},
		{"zero decimals: one cent at $3 rounds up to one unit", 1, decimal.RequireFromString("3"), 0, "1"},
		{"zero amount is zero", 0, decimal.RequireFromString("3000"), 18, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExpectedAmountAsset(tc.cents, tc.rate, tc.decimals)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
			assert.Equal(t, int32(0), got.Exponent(), "the amount is an integer in the smallest unit")

			// Independent check with exact rationals: got is the least integer ≥ the exact amount.
			exact := new(big.Rat).SetFrac(
				new(big.Int).Mul(big.NewInt(tc.cents), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tc.decimals)), nil)),
				big.NewInt(100))
			exact.Quo(exact, tc.rate.Rat())
			g := new(big.Rat).SetInt(got.BigInt())
			assert.True(t, g.Cmp(exact) >= 0, "never ask for less than due: %s < %s", g, exact.FloatString(30))
			assert.True(t, new(big.Rat).Sub(g, big.NewRat(1, 1)).Cmp(exact) < 0, "not more than one unit above due: %s", exact.FloatString(30))
		})
	}
}

func TestExpectedAmountAssetRejectsNonPositiveRate(t *testing.T) {
	for _, rate := range []string{"0", "0.000", "-1", "-3000.5"} {
		t.Run(rate, func(t *testing.T) {
			_, err := ExpectedAmountAsset(1000, decimal.RequireFromString(rate), 18)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "positive")
		})
	}
	_, err := ExpectedAmountAsset(1000, decimal.Decimal{}, 6)
	require.Error(t, err, "the zero value of decimal is a zero rate")
}

func ptr[T any](v T) *T { return &v }

func TestCheapestDue(t *testing.T) {
	tests := []struct {
		name string
		dues []*int64
		want int64
	}{
		{"no quotes", nil, 0},
		{"deposit quotes carry no due", []*int64{nil, nil}, 0},
		{"single", []*int64{ptr[int64](1150)}, 1150},
		{"minimum wins regardless of order", []*int64{ptr[int64](1150), ptr[int64](1005), ptr[int64](1010)}, 1005},
		{"minimum last", []*int64{ptr[int64](1150), ptr[int64](1010), ptr[int64](1000)}, 1000},
		{"nil dues are skipped", []*int64{nil, ptr[int64](1010), nil, ptr[int64](1005)}, 1005},
		{"zero is a valid minimum", []*int64{ptr[int64](5), ptr[int64](0)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			qs := make([]domain.Quote, len(tc.dues))
			for i, d := range tc.dues {
				qs[i].AmountDueCents = d
			}
			assert.Equal(t, tc.want, cheapestDue(qs))
		})
	}
}

func TestEffectiveQuoteStatus(t *testing.T) {
	expiry := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		status domain.QuoteStatus
		now    time.Time
		want   domain.QuoteStatus
	}{
		{"active before expiry stays active", "active", expiry.Add(-time.Nanosecond), "active"},
		{"active at the expiry instant reads expired", "active", expiry, "expired"},
		{"active past expiry reads expired", "active", expiry.Add(time.Hour), "expired"},
		{"used past expiry stays used", "used", expiry.Add(time.Hour), "used"},
		{"used before expiry stays used", "used", expiry.Add(-time.Hour), "used"},
		{"expired stays expired", "expired", expiry.Add(-time.Hour), "expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := domain.Quote{Status: tc.status, ExpiresAt: expiry}
			assert.Equal(t, tc.want, effectiveQuoteStatus(q, tc.now))
			assert.Equal(t, tc.status, q.Status, "the stored quote is not mutated")
		})
	}
}
