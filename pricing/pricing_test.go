package pricing

import (
	"context"
	"errors"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var (
	eth  = Asset{Symbol: "ETH", MarketAPIID: "ethereum"}
	usdc = Asset{Symbol: "USDC", MarketAPIID: "usd-coin", Stablecoin: true}
	usdt = Asset{Symbol: "USDT", MarketAPIID: "tether", Stablecoin: true}
)

// recordingSource records calls and returns a fixed result.
type recordingSource struct {
	price decimal.Decimal
	err   error
	calls []Asset
}

func (r *recordingSource) PriceUSD(_ context.Context, a Asset) (decimal.Decimal, error) {
	r.calls = append(r.calls, a)
	return r.price, r.err
}

func TestStatic(t *testing.T) {
	s := Static{"ethereum": d("3456.789012345678"), "broken": d("0"), "neg": d("-1")}
	tests := []struct {
		name    string
		asset   Asset
		want    string
		wantErr string
	}{
		{name: "known", asset: eth, want: "3456.789012345678"},
		{name: "unknown id", asset: Asset{Symbol: "DOGE", MarketAPIID: "dogecoin"}, wantErr: "unknown asset"},
		{name: "empty id", asset: Asset{Symbol: "ETH"}, wantErr: "unknown asset"},
		{name: "zero price", asset: Asset{MarketAPIID: "broken"}, wantErr: "non-positive"},
		{name: "negative price", asset: Asset{MarketAPIID: "neg"}, wantErr: "non-positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.PriceUSD(context.Background(), tc.asset)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrPriceUnavailable)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
		})
	}
}

func TestStatic_CanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := DefaultStatic().PriceUSD(ctx, eth)
	require.ErrorIs(t, err, ErrPriceUnavailable)
	require.ErrorIs(t, err, context.Canceled)
}

func TestDefaultStatic(t *testing.T) {
	s := DefaultStatic()
	for _, id := range []string{"ethereum", "polygon-ecosystem-token", "binancecoin", "avalanche-2", "usd-coin", "tether"} {
		p, err := s.PriceUSD(context.Background(), Asset{MarketAPIID: id})
		require.NoError(t, err, id)
		assert.True(t, p.IsPositive(), id)
	}
	assert.True(t, s["usd-coin"].Equal(d("1")))
	assert.True(t, s["tether"].Equal(d("1")))

	// Each call returns an independent table.
	s["ethereum"] = d("1")
	assert.False(t, DefaultStatic()["ethereum"].Equal(d("1")))
}

func TestPegged(t *testing.T) {
	upstreamErr := errors.New("boom")
	tests := []struct {
		name      string
		pegged    Pegged
		volatile  *recordingSource
		asset     Asset
		want      string
		wantErr   error
		wantCalls int
	}{
		{name: "stablecoin default peg", asset: usdc, want: "1"},
		{name: "stablecoin configured peg", pegged: Pegged{Peg: d("0.999")}, asset: usdc, want: "0.999"},
		{
			name:   "stablecoin override",
			pegged: Pegged{Peg: d("1"), Overrides: map[string]decimal.Decimal{"USDT": d("0.9985")}},
			asset:  usdt, want: "0.9985",
		},
		{
			name:   "override for other symbol ignored",
			pegged: Pegged{Overrides: map[string]decimal.Decimal{"USDT": d("0.9985")}},
			asset:  usdc, want: "1",
		},
		{
			name:   "zero override rejected",
			pegged: Pegged{Overrides: map[string]decimal.Decimal{"USDT": d("0")}},
			asset:  usdt, wantErr: ErrPriceUnavailable,
		},
		{name: "negative peg rejected", pegged: Pegged{Peg: d("-1")}, asset: usdc, wantErr: ErrPriceUnavailable},
		{
			name:     "stablecoin does not call volatile",
			volatile: &recordingSource{price: d("123")},
			asset:    usdc, want: "1",
		},
		{
			name:     "non-stablecoin delegates",
			volatile: &recordingSource{price: d("3456.789012345678")},
			asset:    eth, want: "3456.789012345678", wantCalls: 1,
		},
		{
			name:     "delegate error propagated",
			volatile: &recordingSource{err: upstreamErr},
			asset:    eth, wantErr: upstreamErr, wantCalls: 1,
		},
		{name: "non-stablecoin without volatile", asset: eth, wantErr: ErrPriceUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pegged
			if tc.volatile != nil {
				p.Volatile = tc.volatile
			}
			got, err := p.PriceUSD(context.Background(), tc.asset)
			if tc.volatile != nil {
				assert.Len(t, tc.volatile.calls, tc.wantCalls)
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.True(t, d(tc.want).Equal(got), "got %s want %s", got, tc.want)
		})
	}
}

func TestPegged_WithStaticVolatile(t *testing.T) {
	p := Pegged{Volatile: DefaultStatic()}
	got, err := p.PriceUSD(context.Background(), eth)
	require.NoError(t, err)
	assert.True(t, got.Equal(DefaultStatic()["ethereum"]))

	_, err = p.PriceUSD(context.Background(), Asset{Symbol: "DOGE", MarketAPIID: "dogecoin"})
	require.ErrorIs(t, err, ErrPriceUnavailable)
}
