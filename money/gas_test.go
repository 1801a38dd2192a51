package money

import (
	"math/big"
	"testing"

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
