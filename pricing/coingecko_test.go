package pricing

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is an injectable, manually advanced clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// upstream is a scripted CoinGecko-compatible server.
type upstream struct {
	mu       sync.Mutex
	status   int
	body     string
	requests int
	headers  []http.Header
	paths    []string
	queries  []url.Values
	block    chan struct{} // when non-nil, handlers wait for it to close
	srv      *httptest.Server
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{status: http.StatusOK, body: "{}"}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests++
		u.headers = append(u.headers, r.Header.Clone())
		u.paths = append(u.paths, r.URL.Path)
		u.queries = append(u.queries, r.URL.Query())
		status, body, block := u.status, u.body, u.block
		u.mu.Unlock()
		if block != nil {
			<-block
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprint(w, body)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) respond(status int, body string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.status, u.body = status, body
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests
}

// quote renders a /simple/price body for one id with a raw JSON usd value.
func quote(id, usd string, updated time.Time) string {
	return fmt.Sprintf(`{%q:{"usd":%s,"last_updated_at":%d}}`, id, usd, updated.Unix())
}

func newTestClient(u *upstream, clk *fakeClock, mod func(*CoinGeckoConfig)) *CoinGecko {
	cfg := CoinGeckoConfig{BaseURL: u.srv.URL + "/api/v3/", Now: clk.Now}
	if mod != nil {
		mod(&cfg)
	}
	return NewCoinGecko(cfg)
}

func TestNewCoinGecko_Defaults(t *testing.T) {
	c := NewCoinGecko(CoinGeckoConfig{})
	assert.Equal(t, DefaultCoinGeckoBaseURL, c.cfg.BaseURL)
	assert.Equal(t, 60*time.Second, c.cfg.TTL)
	assert.Equal(t, 5*time.Minute, c.cfg.MaxStaleness)
	require.NotNil(t, c.cfg.HTTPClient)
	assert.Equal(t, 5*time.Second, c.cfg.HTTPClient.Timeout)
	require.NotNil(t, c.cfg.Now)
}

func TestCoinGecko_ParsesPriceExactly(t *testing.T) {
	clk := newFakeClock()
	tests := []struct {
		name, body, want string
	}{
		{name: "with last_updated_at", body: quote("ethereum", "3456.789012345678", clk.Now()), want: "3456.789012345678"},
		{name: "without last_updated_at", body: `{"ethereum":{"usd":3456.789012345678}}`, want: "3456.789012345678"},
		{name: "many digits", body: `{"ethereum":{"usd":0.000000012345678901234567}}`, want: "0.000000012345678901234567"},
		{name: "exponent", body: `{"ethereum":{"usd":1.5e3}}`, want: "1500"},
		{name: "quoted number", body: `{"ethereum":{"usd":"2.10"}}`, want: "2.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstream(t)
			u.respond(http.StatusOK, tc.body)
			c := newTestClient(u, clk, nil)
			got, err := c.PriceUSD(context.Background(), eth)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())

			require.Equal(t, 1, u.count())
			assert.Equal(t, "/api/v3/simple/price", u.paths[0])
			assert.Equal(t, url.Values{
				"ids": {"ethereum"}, "vs_currencies": {"usd"}, "include_last_updated_at": {"true"},
			}, u.queries[0])
		})
	}
}

func TestCoinGecko_CacheAndRefresh(t *testing.T) {
	clk := newFakeClock()
	u := newUpstream(t)
	c := newTestClient(u, clk, nil)
	ctx := context.Background()

	u.respond(http.StatusOK, quote("ethereum", "3000.5", clk.Now()))
	got, err := c.PriceUSD(ctx, eth)
	require.NoError(t, err)
	assert.Equal(t, "3000.5", got.String())

	// Within TTL: served from cache, no new request.
	u.respond(http.StatusOK, quote("ethereum", "3100", clk.Now()))
	clk.Advance(59 * time.Second)
	got, err = c.PriceUSD(ctx, eth)
	require.NoError(t, err)
	assert.Equal(t, "3000.5", got.String())
	assert.Equal(t, 1, u.count())

	// TTL elapsed: refetched.
	clk.Advance(2 * time.Second)
	u.respond(http.StatusOK, quote("ethereum", "3100", clk.Now()))
	got, err = c.PriceUSD(ctx, eth)
	require.NoError(t, err)
	assert.Equal(t, "3100", got.String())
	assert.Equal(t, 2, u.count())
}

func TestCoinGecko_UpstreamFailureFallback(t *testing.T) {
	tests := []struct {
		name    string
		advance time.Duration
		status  int
		body    string
		want    string // empty means ErrPriceUnavailable expected
	}{
		{name: "500 within staleness serves cached", advance: 2 * time.Minute, status: 500, body: "oops", want: "3000"},
		{name: "malformed within staleness serves cached", advance: 4 * time.Minute, status: 200, body: "{", want: "3000"},
		{name: "500 beyond staleness", advance: 5*time.Minute + time.Second, status: 500, body: "oops"},
		{name: "missing id beyond staleness", advance: 6 * time.Minute, status: 200, body: "{}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			u := newUpstream(t)
			c := newTestClient(u, clk, nil)
			u.respond(http.StatusOK, quote("ethereum", "3000", clk.Now()))
			_, err := c.PriceUSD(context.Background(), eth)
			require.NoError(t, err)

			clk.Advance(tc.advance)
			u.respond(tc.status, tc.body)
			got, err := c.PriceUSD(context.Background(), eth)
			assert.Equal(t, 2, u.count(), "must try upstream after TTL")
			if tc.want == "" {
				require.ErrorIs(t, err, ErrPriceUnavailable)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
		})
	}
}

func TestCoinGecko_ProviderTimestampStaleness(t *testing.T) {
	clk := newFakeClock()
	tests := []struct {
		name    string
		updated time.Time
		wantErr bool
	}{
		{name: "fresh", updated: clk.Now()},
		{name: "just within bound", updated: clk.Now().Add(-5 * time.Minute)},
		{name: "older than MaxStaleness", updated: clk.Now().Add(-5*time.Minute - time.Second), wantErr: true},
		{name: "very old", updated: clk.Now().Add(-24 * time.Hour), wantErr: true},
		{name: "future timestamp clamped to fetch time", updated: clk.Now().Add(time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstream(t)
			u.respond(http.StatusOK, quote("ethereum", "3000", tc.updated))
			c := newTestClient(u, clk, nil)
			got, err := c.PriceUSD(context.Background(), eth)
			if tc.wantErr {
				require.ErrorIs(t, err, ErrPriceUnavailable)
				assert.Contains(t, err.Error(), "stale")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "3000", got.String())
		})
	}
}

func TestCoinGecko_CacheNeverServesBeyondStaleness(t *testing.T) {
	// TTL longer than MaxStaleness: the staleness bound must still win.
	clk := newFakeClock()
	u := newUpstream(t)
	c := newTestClient(u, clk, func(cfg *CoinGeckoConfig) { cfg.TTL = time.Hour })
	u.respond(http.StatusOK, quote("ethereum", "3000", clk.Now().Add(-4*time.Minute)))
	_, err := c.PriceUSD(context.Background(), eth)
	require.NoError(t, err)

	clk.Advance(2 * time.Minute) // cached price is now 6 minutes old
	u.respond(http.StatusServiceUnavailable, "down")
	_, err = c.PriceUSD(context.Background(), eth)
	require.ErrorIs(t, err, ErrPriceUnavailable)
	assert.Equal(t, 2, u.count())
}
