package money

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// due is a quote's due as the quotes make it: the amount plus the fee, in units rounded up to a
// readable amount (UnitsToQuote).
func due(t *testing.T, cents, fee int64, rate string, decimals int32) *Due {
	t.Helper()
	u, err := UnitsToQuote(cents+fee, dec(rate), decimals)
	require.NoError(t, err)
	return &Due{AmountCents: cents, ConvenienceFeeCents: fee, Units: u}
}

// leastDue is a due of the least units worth the amount (UnitsToReceive): the tightest due
// Settle must take, a fraction of a unit over the cents.
func leastDue(t *testing.T, cents, fee int64, rate string, decimals int32) *Due {
	t.Helper()
	u, err := UnitsToReceive(cents+fee, dec(rate), decimals)
	require.NoError(t, err)
	return &Due{AmountCents: cents, ConvenienceFeeCents: fee, Units: u}
}

func TestSettle(t *testing.T) {
	type want struct {
		outcome                        Outcome
		amount, due, conv, fee, credit int64
		net                            int64
		usd                            string
		excessUnits                    string
		excessCents                    int64
		short                          string
	}
	usdc := func(t *testing.T) *Due { return due(t, 1000, 5, "1", 6) }              // $10.00 + 5 cents on an L2: 10050000
	eth := func(t *testing.T) *Due { return due(t, 1000, 0, "3000", 18) }           // 0.003334 ETH: $10.002
	leastETH := func(t *testing.T) *Due { return leastDue(t, 1000, 0, "3000", 18) } // 3333333333333334 wei
	tests := []struct {
		name     string
		due      func(t *testing.T) *Due
		received string
		decimals int32
		rate     string
		bps      int64
		want     want
	}{
		{"6 decimals, exact", usdc, "10050000", 6, "1", 100,
			want{Paid, 1000, 1005, 5, 10, 1000, 990, "10.05", "0", 0, "0"}},
		{"6 decimals, one unit under: underpaid, what arrived is credited", usdc, "10049999", 6, "1", 100,
			want{Underpaid, 1000, 1005, 0, 10, 1004, 994, "10.04", "0", 0, "1"}},
		{"6 decimals, one unit over: overpaid by less than a cent", usdc, "10050001", 6, "1", 100,
			want{Overpaid, 1000, 1005, 5, 10, 1000, 990, "10.05", "1", 0, "0"}},
		{"6 decimals, overpaid by $5: the excess is the merchant's, fee on the total", usdc, "15050000", 6, "1", 100,
			want{Overpaid, 1000, 1005, 5, 15, 1500, 1485, "15.05", "5000000", 500, "0"}},
		{"18 decimals, the quote's 0.003334 ETH exactly: paid, the 0.2 cent of rounding not credited", eth, "3334000000000000", 18, "3000", 100,
			want{Paid, 1000, 1000, 0, 10, 1000, 990, "10", "0", 0, "0"}},
		{"18 decimals, one wei under the quote's: underpaid, though worth the amount to the cent", eth, "3333999999999999", 18, "3000", 100,
			want{Underpaid, 1000, 1000, 0, 10, 1000, 990, "10", "0", 0, "1"}},
		{"the issue's $18.50 at $3,000: 0.006167 ETH exactly is paid, settled at $18.50", func(t *testing.T) *Due { return due(t, 1850, 0, "3000", 18) },
			"6167000000000000", 18, "3000", 100,
			want{Paid, 1850, 1850, 0, 19, 1850, 1831, "18.5", "0", 0, "0"}},
		{"18 decimals, the least due exactly (a rounded-up third)", leastETH, "3333333333333334", 18, "3000", 100,
			want{Paid, 1000, 1000, 0, 10, 1000, 990, "10", "0", 0, "0"}},
		{"18 decimals, one wei under the least due", leastETH, "3333333333333333", 18, "3000", 100,
			want{Underpaid, 1000, 1000, 0, 10, 999, 989, "9.99", "0", 0, "1"}},
		{"18 decimals, one wei over the least due", leastETH, "3333333333333335", 18, "3000", 100,
			want{Overpaid, 1000, 1000, 0, 10, 1000, 990, "10", "1", 0, "0"}},
		{"18 decimals, overpaid by 500.5 cents: the excess and the USD round down, never half up", leastETH, "5001666666666667", 18, "3000", 100,
			want{Overpaid, 1000, 1000, 0, 15, 1500, 1485, "15", "1668333333333333", 500, "0"}},
		{"18-decimal stablecoin, exact", func(t *testing.T) *Due { return due(t, 1000, 10, "1", 18) }, "10100000000000000000", 18, "1", 100,
			want{Paid, 1000, 1010, 10, 10, 1000, 990, "10.1", "0", 0, "0"}},
		{"18-decimal stablecoin, overpaid by one unit under a cent", func(t *testing.T) *Due { return due(t, 1000, 10, "1", 18) },
			"10109999999999999999", 18, "1", 100,
			want{Overpaid, 1000, 1010, 10, 10, 1000, 990, "10.1", "9999999999999999", 0, "0"}},
		{"rate with many decimals, the quote's 0.002893 exactly", func(t *testing.T) *Due { return due(t, 1000, 0, "3456.789012345678", 18) },
			"2893000000000000", 18, "3456.789012345678", 100,
			want{Paid, 1000, 1000, 0, 10, 1000, 990, "10", "0", 0, "0"}},
		{"rate with many decimals, the least due exactly", func(t *testing.T) *Due { return leastDue(t, 1000, 0, "3456.789012345678", 18) },
			"2892858072704382", 18, "3456.789012345678", 100,
			want{Paid, 1000, 1000, 0, 10, 1000, 990, "10", "0", 0, "0"}},
		{"rate with many decimals, overpaid", func(t *testing.T) *Due { return due(t, 1050, 150, "3456.789012345678", 18) },
			"4000000000000000", 18, "3456.789012345678", 100,
			want{Overpaid, 1050, 1200, 150, 12, 1232, 1220, "13.82", "528000000000000", 182, "0"}}, // due 0.003472
		{"deposit, 18-decimal stablecoin one unit under $12.35", nil, "12349999999999999999", 18, "1", 100,
			want{Deposited, 1234, 1234, 0, 12, 1234, 1222, "12.34", "0", 0, "0"}},
		{"deposit of one unit, worth nothing", nil, "1", 6, "1", 100,
			want{Deposited, 0, 0, 0, 0, 0, 0, "0", "0", 0, "0"}},
		{"deposit at a many-decimal rate", nil, "1000000000000000000", 18, "3456.789012345678", 250,
			want{Deposited, 345678, 345678, 0, 8642, 345678, 337036, "3456.78", "0", 0, "0"}},
		{"expired with nothing confirmed", usdc, "0", 6, "1", 100,
			want{Underpaid, 1000, 1005, 0, 0, 0, 0, "0", "0", 0, "10050000"}},
		{"no merchant fee", usdc, "15050000", 6, "1", 0,
			want{Overpaid, 1000, 1005, 5, 0, 1500, 1500, "15.05", "5000000", 500, "0"}},
		{"the fee rounds half up: 1% of $10.50", func(t *testing.T) *Due { return due(t, 1050, 0, "1", 6) }, "10500000", 6, "1", 100,
			want{Paid, 1050, 1050, 0, 11, 1050, 1039, "10.5", "0", 0, "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			terms := Terms{Received: dec(tc.received), Decimals: tc.decimals, Rate: dec(tc.rate), MerchantFeeBps: tc.bps}
			if tc.due != nil {
				terms.Due = tc.due(t)
			}
			a, err := Settle(terms)
			require.NoError(t, err)
			w := tc.want
			assert.Equal(t, w.outcome, a.Outcome)
			assert.Equal(t, w.amount, a.AmountInCents, "amountInCents")
			assert.Equal(t, w.due, a.AmountDueCents, "amountDueCents")
			assert.Equal(t, w.conv, a.ConvenienceFeeCents, "convenienceFeeCents")
			assert.Equal(t, w.fee, a.MerchantFeeCents, "merchantFeeCents")
			assert.Equal(t, int64(0), a.SwapFeeCents, "swapFeeCents")
			assert.Equal(t, w.credit, a.CreditCents, "credit")
			assert.Equal(t, w.net, a.NetCents, "net")
			assert.Equal(t, w.usd, a.SettledUSD.String(), "settledAmountUsd")
			assert.Equal(t, w.excessUnits, a.ExcessUnits.String(), "excess units")
			assert.Equal(t, w.excessCents, a.ExcessCents, "excess cents")
			assert.Equal(t, w.short, a.ShortUnits.String(), "short units")
			checkInvariants(t, terms, a)
		})
	}
}

// checkInvariants holds for every settlement: nothing credited that did not arrive, fee and
// net add up to the credit, the rounding rules as written.
func checkInvariants(t *testing.T, terms Terms, a Amounts) {
	t.Helper()
	value := exactCents(terms.Received, terms.Decimals, terms.Rate)
	assert.Equal(t, a.CreditCents, a.MerchantFeeCents+a.NetCents, "fee + net = credit")
	assert.GreaterOrEqual(t, a.NetCents, int64(0))
	credited := decimal.NewFromInt(a.CreditCents + a.ConvenienceFeeCents).Rat()
	assert.True(t, credited.Cmp(value) <= 0, "credit %d + convenience fee %d ≤ value %s", a.CreditCents, a.ConvenienceFeeCents, value.FloatString(6))
	usd := a.SettledUSD.Shift(2)
	assert.True(t, usd.Equal(usd.Truncate(0)) && usd.Rat().Cmp(value) <= 0 && usd.Add(decimal.NewFromInt(1)).Rat().Cmp(value) > 0,
		"settled USD %s is the value %s rounded down to the cent", a.SettledUSD, value.FloatString(6))
	assert.Equal(t, FeeCents(a.CreditCents, terms.MerchantFeeBps), a.MerchantFeeCents)
	if terms.Due != nil && a.Outcome != Underpaid {
		assert.GreaterOrEqual(t, a.CreditCents, terms.Due.AmountCents, "paid in full: at least the amount")
		ex := exactCents(a.ExcessUnits, terms.Decimals, terms.Rate)
		assert.True(t, decimal.NewFromInt(a.ExcessCents).Rat().Cmp(ex) <= 0 &&
			decimal.NewFromInt(a.ExcessCents+1).Rat().Cmp(ex) > 0, "excess cents %d = floor(%s)", a.ExcessCents, ex.FloatString(6))
	}
}

func TestSettleRefuses(t *testing.T) {
	ok := Terms{Received: dec("10000000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100}
	bad := func(mut func(*Terms)) error {
		terms := ok
		mut(&terms)
		_, err := Settle(terms)
		return err
	}
	require.NoError(t, bad(func(*Terms) {}))
	assert.ErrorIs(t, bad(func(t *Terms) { t.Received = dec("61489146912365505386666666666667") }), ErrBeyondLimit, "would wrap int64 cents")
	assert.ErrorIs(t, bad(func(t *Terms) { t.Received = dec("1000000000000010000") }), ErrBeyondLimit, "one cent over the limit")
	assert.NoError(t, bad(func(t *Terms) { t.Received = dec("1000000000000000000") }), "exactly the limit")
	assert.Error(t, bad(func(t *Terms) { t.Received = dec("-1") }), "negative")
	assert.Error(t, bad(func(t *Terms) { t.Received = dec("1.5") }), "a fraction of the smallest unit")
	assert.Error(t, bad(func(t *Terms) { t.Rate = decimal.Zero }), "no rate")
	assert.Error(t, bad(func(t *Terms) { t.MerchantFeeBps = 10_001 }), "fee over 100%")
	assert.Error(t, bad(func(t *Terms) { t.MerchantFeeBps = -1 }), "negative fee")
	assert.Error(t, bad(func(t *Terms) { t.Due, t.Received = &Due{AmountCents: 1000, Units: dec("9999999")}, dec("9999999") }),
		"a due whose units are worth less than its cents")
}
