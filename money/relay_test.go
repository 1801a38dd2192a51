package money

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A payment made without gas (issue 24): the relay's gas the merchant bears is charged with the
// merchant fee when paid in full, never past the credit; not on an underpayment or a deposit.
// A buyer's relay fee is in the due (units and convenience fee) and leaves the merchant whole.
func TestSettleRelayCost(t *testing.T) {
	d := due(t, 1000, 5, "1", 6) // 10050000 units
	paid, err := Settle(Terms{Due: d, Received: dec("10050000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100, RelayCostCents: 18})
	require.NoError(t, err)
	assert.Equal(t, Paid, paid.Outcome)
	assert.Equal(t, int64(10+18), paid.MerchantFeeCents)
	assert.Equal(t, int64(1000-28), paid.NetCents)
	assert.Equal(t, int64(5), paid.ConvenienceFeeCents)

	capped, err := Settle(Terms{Due: d, Received: dec("10050000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100, RelayCostCents: 5_000})
	require.NoError(t, err)
	assert.Equal(t, int64(1000), capped.MerchantFeeCents, "never past the credit")
	assert.Zero(t, capped.NetCents)

	short, err := Settle(Terms{Due: d, Received: dec("10000000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100, RelayCostCents: 18})
	require.NoError(t, err)
	assert.Equal(t, Underpaid, short.Outcome)
	assert.Equal(t, int64(10), short.MerchantFeeCents, "an underpayment bears no relay cost")

	_, err = Settle(Terms{Due: d, Received: dec("10050000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100, RelayCostCents: -1})
	assert.Error(t, err)

	// The buyer's 1-cent relay fee (10000 units at $1) in the due: the merchant is credited its
	// amount exactly, the fee counts with the convenience fee.
	buyer := *d
	buyer.ConvenienceFeeCents += 1
	buyer.Units = buyer.Units.Add(dec("10000"))
	b, err := Settle(Terms{Due: &buyer, Received: dec("10060000"), Decimals: 6, Rate: dec("1"), MerchantFeeBps: 100})
	require.NoError(t, err)
	assert.Equal(t, Paid, b.Outcome)
	assert.Equal(t, int64(6), b.ConvenienceFeeCents)
	assert.Equal(t, int64(1006), b.AmountDueCents)
	assert.Equal(t, int64(1000), b.CreditCents)
	assert.Equal(t, int64(990), b.NetCents)
}

func TestGasCostCents(t *testing.T) {
	for _, tc := range []struct {
		name, cost, price string
		decimals          int32
		want              int64
	}{
		{"60,000 gas at 1 gwei, ETH at $3000: 18 cents exactly", "60000000000000", "3000", 18, 18},
		{"a wei more: rounded up", "60000000000001", "3000", 18, 19},
		{"a millionth of a cent: one cent", "1", "3000", 18, 1},
		{"nothing", "0", "3000", 18, 0},
		{"6 native decimals", "1000000", "0.5", 6, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GasCostCents(dec(tc.cost), tc.decimals, dec(tc.price))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := GasCostCents(dec("1"), 18, dec("-1"))
	assert.Error(t, err)
}
