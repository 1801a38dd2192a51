package money

import (
	"math/big"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGasCost(t *testing.T) {
	assert.Equal(t, "21000000000000", GasCost(21_000, big.NewInt(1_000_000_000)).String(), "21,000 gas at 1 gwei")
	price, _ := new(big.Int).SetString("1000000000000000000000", 10)
	assert.Equal(t, "18446744073709551615000000000000000000000", GasCost(^uint64(0), price).String(), "no overflow")
	assert.Equal(t, "0", GasCost(21_000, nil).String())
}

func TestGasCostUSDFractions(t *testing.T) {
	tests := []struct {
		name     string
		cost     string
		decimals int32
		price    string
		want     int64
	}{
		{"21,000 gas at 1 gwei, ETH at $3000 (18 decimals)", "21000000000000", 18, "3000", 63_000},
		{"a chain with 6 native decimals", "21000", 6, "3000", 63_000_000},
		{"a chain with 8 native decimals", "2100000", 8, "30", 630_000},
		{"rounds down: a third of a millionth", "1", 18, "333333333333.333", 0},
		{"one unit under a millionth boundary", "333333333333", 18, "3000", 999},
		{"rate with many decimals", "123456789012345678", 18, "3456.789012345678", 426_764_071},
		{"zero cost", "0", 18, "3000", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GasCostUSDFractions(dec(tc.cost), tc.decimals, dec(tc.price))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := GasCostUSDFractions(dec("1"), 18, dec("0"))
	assert.Error(t, err, "no price")
	_, err = GasCostUSDFractions(dec("-1"), 18, dec("1"))
	assert.Error(t, err, "a negative cost")
	_, err = GasCostUSDFractions(dec("1"), 0, dec("1e20"))
	assert.ErrorIs(t, err, ErrBeyondLimit)
}

func TestGasFeeInToken(t *testing.T) {
	d := decimal.RequireFromString
	cases := []struct {
		fee, nativePrice, tokenPrice string
		nativeDec, tokenDec          int32
		want                         string
	}{
		// 21,000 gas at 1 gwei = 0.000021 ETH at $3000 = $0.063 = 63000 USDC units, exactly.
		{"21000000000000", "3000", "1", 18, 6, "63000"},
		// One wei more is a fraction of a unit: rounded up.
		{"21000000000001", "3000", "1", 18, 6, "63001"},
		// A fee worth less than one unit still costs one.
		{"1", "3000", "1", 18, 6, "1"},
		{"0", "3000", "1", 18, 6, "0"},
		// A token priced above the native coin.
		{"1000000000000000000", "2", "3", 18, 8, "66666667"},
	}
	for _, c := range cases {
		got, err := GasFeeInToken(d(c.fee), c.nativeDec, d(c.nativePrice), c.tokenDec, d(c.tokenPrice))
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != c.want {
			t.Errorf("GasFeeInToken(%s wei at %s, token at %s) = %s, want %s", c.fee, c.nativePrice, c.tokenPrice, got, c.want)
		}
	}
	if _, err := GasFeeInToken(d("1.5"), 18, d("1"), 6, d("1")); err == nil {
		t.Error("a fractional fee is refused")
	}
	if _, err := GasFeeInToken(d("1"), 18, d("1"), 6, d("0")); err == nil {
		t.Error("a zero token price is refused")
	}
}
