package pricing

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCoinGecko_BadResponses(t *testing.T) {
	clk := newFakeClock()
	tests := []struct {
		name   string
		asset  Asset
		status int
		body   string
		reason string
	}{
		{name: "HTTP 500", asset: eth, status: 500, body: `{"error":"x"}`, reason: "HTTP 500"},
		{name: "HTTP 429", asset: eth, status: 429, body: "rate limited", reason: "HTTP 429"},
		{name: "HTTP 404", asset: eth, status: 404, body: "", reason: "HTTP 404"},
		{name: "malformed JSON", asset: eth, status: 200, body: `{"ethereum":`, reason: "malformed"},
		{name: "wrong shape", asset: eth, status: 200, body: `{"ethereum":3000}`, reason: "malformed"},
		{name: "non-numeric price", asset: eth, status: 200, body: `{"ethereum":{"usd":"abc"}}`, reason: "malformed"},
		{name: "unknown id", asset: Asset{Symbol: "NOPE", MarketAPIID: "no-such-coin"}, status: 200, body: `{}`, reason: "unknown asset"},
		{name: "missing usd", asset: eth, status: 200, body: `{"ethereum":{"eur":1}}`, reason: "no usd price"},
		{name: "null usd", asset: eth, status: 200, body: `{"ethereum":{"usd":null}}`, reason: "no usd price"},
		{name: "zero price", asset: eth, status: 200, body: `{"ethereum":{"usd":0}}`, reason: "non-positive"},
		{name: "negative price", asset: eth, status: 200, body: `{"ethereum":{"usd":-1.5}}`, reason: "non-positive"},
		{name: "bad last_updated_at", asset: eth, status: 200, body: `{"ethereum":{"usd":1,"last_updated_at":1.5}}`, reason: "last_updated_at"},
		{name: "empty market id", asset: Asset{Symbol: "ETH"}, status: 200, body: `{}`, reason: "no market API id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstream(t)
			u.respond(tc.status, tc.body)
			c := newTestClient(u, clk, nil)
			_, err := c.PriceUSD(context.Background(), tc.asset)
			require.ErrorIs(t, err, ErrPriceUnavailable)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
}

func TestCoinGecko_APIKeyHeader(t *testing.T) {
	clk := newFakeClock()
	for _, key := range []string{"", "secret-demo-key"} {
		t.Run("key="+key, func(t *testing.T) {
			u := newUpstream(t)
			u.respond(http.StatusOK, quote("ethereum", "1", clk.Now()))
			c := newTestClient(u, clk, func(cfg *CoinGeckoConfig) { cfg.APIKey = key })
			_, err := c.PriceUSD(context.Background(), eth)
			require.NoError(t, err)
			require.Len(t, u.headers, 1)
			vals, present := u.headers[0][http.CanonicalHeaderKey("x-cg-demo-api-key")]
			if key == "" {
				assert.False(t, present)
				return
			}
			assert.Equal(t, []string{key}, vals)
		})
	}
}

func TestCoinGecko_RespectsContext(t *testing.T) {
	clk := newFakeClock()
	u := newUpstream(t)
	u.respond(http.StatusOK, quote("ethereum", "1", clk.Now()))
	c := newTestClient(u, clk, nil)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.PriceUSD(canceled, eth)
	require.ErrorIs(t, err, ErrPriceUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, u.count())

	// A slow upstream: the caller's deadline is honoured.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	u.mu.Lock()
	u.block = release
	u.mu.Unlock()
	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = c.PriceUSD(ctx, eth)
	require.ErrorIs(t, err, ErrPriceUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCoinGecko_ConcurrentMissesShareOneRequest(t *testing.T) {
	clk := newFakeClock()
	u := newUpstream(t)
	u.respond(http.StatusOK, quote("ethereum", "3456.789012345678", clk.Now()))
	release := make(chan struct{})
	u.block = release
	c := newTestClient(u, clk, nil)

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			got, err := c.PriceUSD(context.Background(), eth)
			if err == nil && got.String() != "3456.789012345678" {
				err = fmt.Errorf("unexpected price %s", got)
			}
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return u.count() >= 1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, u.count())
}
