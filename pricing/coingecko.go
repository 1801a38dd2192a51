package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"
)

// Defaults applied by NewCoinGecko to zero-valued config fields.
const (
	DefaultCoinGeckoBaseURL = "https://api.coingecko.com/api/v3"
	DefaultTTL              = 60 * time.Second
	DefaultMaxStaleness     = 5 * time.Minute
	DefaultHTTPTimeout      = 5 * time.Second
)

// maxResponseBytes bounds how much of an upstream response is read.
const maxResponseBytes = 1 << 20

// CoinGeckoConfig configures a CoinGecko client. Zero values get defaults.
type CoinGeckoConfig struct {
	BaseURL      string        // default DefaultCoinGeckoBaseURL
	APIKey       string        // sent as header x-cg-demo-api-key when set
	TTL          time.Duration // how long a fetched price is reused; default 60s
	MaxStaleness time.Duration // maximum age of a returned price; default 5m
	HTTPClient   *http.Client  // default: client with a 5s timeout
	Now          func() time.Time
}

// CoinGecko is a Source backed by a CoinGecko-compatible
// GET {BaseURL}/simple/price?ids=...&vs_currencies=usd&include_last_updated_at=true
// endpoint.
//
// Prices are cached per MarketAPIID for TTL. The age of a price is measured
// from the provider's last_updated_at when present, otherwise from the fetch
// time; a price older than MaxStaleness is never returned. When the upstream
// fails, a cached price still within MaxStaleness is served; otherwise the
// error wraps ErrPriceUnavailable. Concurrent misses for the same id share a
// single upstream request. A CoinGecko must be created with NewCoinGecko and
// is safe for concurrent use.
type CoinGecko struct {
	cfg   CoinGeckoConfig
	group singleflight.Group

	mu    sync.Mutex
	cache map[string]cgEntry
}

type cgEntry struct {
	price     decimal.Decimal
	asOf      time.Time // provider timestamp, or fetch time if absent
	fetchedAt time.Time
}

var _ Source = (*CoinGecko)(nil)

// NewCoinGecko returns a client with defaults filled in for zero fields.
func NewCoinGecko(cfg CoinGeckoConfig) *CoinGecko {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultCoinGeckoBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.MaxStaleness <= 0 {
		cfg.MaxStaleness = DefaultMaxStaleness
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &CoinGecko{cfg: cfg, cache: make(map[string]cgEntry)}
}

// PriceUSD implements Source.
func (c *CoinGecko) PriceUSD(ctx context.Context, a Asset) (decimal.Decimal, error) {
	id := a.MarketAPIID
	if id == "" {
		return decimal.Decimal{}, unavailablef("%s: asset has no market API id", assetName(a))
	}
	if err := ctx.Err(); err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: %s: %w", ErrPriceUnavailable, assetName(a), err)
	}
	if p, ok := c.cached(id, true); ok {
		return p, nil
	}

	// The shared fetch is detached from any single caller's cancellation (so
	// one impatient caller cannot fail the others) but is still bounded by
	// the HTTP client's timeout, or DefaultHTTPTimeout if it has none.
	ch := c.group.DoChan(id, func() (any, error) {
		// A caller that missed the cache just as another fetch finished would otherwise fetch
		// again: the cache, filled by that fetch, answers it.
		if p, ok := c.cached(id, true); ok {
			return p, nil
		}
		fctx := context.WithoutCancel(ctx)
		if c.cfg.HTTPClient.Timeout <= 0 {
			var cancel context.CancelFunc
			fctx, cancel = context.WithTimeout(fctx, DefaultHTTPTimeout)
			defer cancel()
		}
		return c.refresh(fctx, id)
	})
	select {
	case <-ctx.Done():
		return decimal.Decimal{}, fmt.Errorf("%w: %s: %w", ErrPriceUnavailable, assetName(a), ctx.Err())
	case r := <-ch:
		if r.Err == nil {
			return r.Val.(decimal.Decimal), nil
		}
		if p, ok := c.cached(id, false); ok {
			return p, nil // upstream failed; cached price is still fresh enough
		}
		return decimal.Decimal{}, fmt.Errorf("%s: %w", assetName(a), r.Err)
	}
}

// cached returns the cached price for id if it is within MaxStaleness and,
// when requireTTL is set, was fetched less than TTL ago.
func (c *CoinGecko) cached(id string, requireTTL bool) (decimal.Decimal, bool) {
	c.mu.Lock()
	e, ok := c.cache[id]
	c.mu.Unlock()
	if !ok {
		return decimal.Decimal{}, false
	}
	now := c.cfg.Now()
	if now.Sub(e.asOf) > c.cfg.MaxStaleness {
		return decimal.Decimal{}, false
	}
	if requireTTL && now.Sub(e.fetchedAt) >= c.cfg.TTL {
		return decimal.Decimal{}, false
	}
	return e.price, true
}

// refresh fetches id from upstream and, if the result is fresh enough,
// stores it in the cache.
func (c *CoinGecko) refresh(ctx context.Context, id string) (decimal.Decimal, error) {
	price, updatedAt, err := c.fetch(ctx, id)
	if err != nil {
		return decimal.Decimal{}, err
	}
	now := c.cfg.Now()
	asOf := now
	if updatedAt != nil && updatedAt.Before(now) {
		asOf = *updatedAt
	}
	if age := now.Sub(asOf); age > c.cfg.MaxStaleness {
		return decimal.Decimal{}, unavailablef("stale price: provider last updated %s ago (max %s)",
			age.Round(time.Second), c.cfg.MaxStaleness)
	}
	c.mu.Lock()
	c.cache[id] = cgEntry{price: price, asOf: asOf, fetchedAt: now}
	c.mu.Unlock()
	return price, nil
}

// cgQuote is one entry of the /simple/price response.
type cgQuote struct {
	USD           *json.Number `json:"usd"`
	LastUpdatedAt *json.Number `json:"last_updated_at"`
}

// fetch performs one upstream request. updatedAt is nil when the provider
// did not report last_updated_at.
func (c *CoinGecko) fetch(ctx context.Context, id string) (decimal.Decimal, *time.Time, error) {
	u, err := url.Parse(c.cfg.BaseURL + "/simple/price")
	if err != nil {
		return decimal.Decimal{}, nil, unavailablef("invalid base URL: %v", err)
	}
	q := url.Values{}
	q.Set("ids", id)
	q.Set("vs_currencies", "usd")
	q.Set("include_last_updated_at", "true")
	u.RawQuery = q.Encode()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return decimal.Decimal{}, nil, unavailablef("building request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("x-cg-demo-api-key", c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return decimal.Decimal{}, nil, fmt.Errorf("%w: upstream request failed: %w", ErrPriceUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return decimal.Decimal{}, nil, unavailablef("reading upstream response: %v", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decimal.Decimal{}, nil, unavailablef("upstream returned HTTP %d: %s", resp.StatusCode, snippet(body))
	}

	var quotes map[string]cgQuote
	if err := json.Unmarshal(body, &quotes); err != nil {
		return decimal.Decimal{}, nil, unavailablef("malformed upstream JSON: %v", err)
	}
	qt, ok := quotes[id]
	if !ok {
		return decimal.Decimal{}, nil, unavailablef("unknown asset %q: missing from upstream response", id)
	}
	if qt.USD == nil {
		return decimal.Decimal{}, nil, unavailablef("upstream response has no usd price for %q", id)
	}
	price, err := decimal.NewFromString(qt.USD.String())
	if err != nil {
		return decimal.Decimal{}, nil, unavailablef("invalid usd price %q for %q: %v", qt.USD.String(), id, err)
	}
	if !price.IsPositive() {
		return decimal.Decimal{}, nil, unavailablef("non-positive usd price %s for %q", price.String(), id)
	}
	if qt.LastUpdatedAt == nil {
		return price, nil, nil
	}
	secs, err := qt.LastUpdatedAt.Int64()
	if err != nil {
		return decimal.Decimal{}, nil, unavailablef("invalid last_updated_at %q for %q", qt.LastUpdatedAt.String(), id)
	}
	t := time.Unix(secs, 0)
	return price, &t, nil
}

// snippet returns a short, single-line excerpt of an upstream body for errors.
func snippet(b []byte) string {
	const limit = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}
