package chain

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// endpoint is one URL of a chain.
type endpoint struct {
	url  string // full URL: never logged nor returned
	name string // RedactURL(url)
	hc   *http.Client

	mu sync.Mutex
	rc *rpc.Client
	ec *ethclient.Client

	verified atomic.Bool  // answered the expected eth_chainId
	disabled atomic.Bool  // answered another chain id: not used until a probe finds the right one
	retryAt  atomic.Int64 // unix nanos before which the server asked not to be called
}

// conn returns the endpoint's RPC client, dialling it on first use (HTTP never fails here;
// a websocket URL connects now).
func (e *endpoint) conn(ctx context.Context) (*rpc.Client, *ethclient.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rc != nil {
		return e.rc, e.ec, nil
	}
	rc, err := rpc.DialOptions(ctx, e.url, rpc.WithHTTPClient(e.hc))
	if err != nil {
		return nil, nil, redactErr(err)
	}
	e.rc, e.ec = rc, ethclient.NewClient(rc)
	return e.rc, e.ec, nil
}

func (e *endpoint) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rc != nil {
		e.rc.Close()
		e.rc, e.ec = nil, nil
	}
}

// scrub is err's message without the endpoint's full URL, for logs.
func (e *endpoint) scrub(err error) string { return scrub(err.Error(), e.url, e.name) }

// retryAfterTransport remembers a 429/503 answer's Retry-After on the endpoint: rpc.HTTPError
// carries the status and body but not the headers.
type retryAfterTransport struct {
	base http.RoundTripper
	ep   *endpoint
}

func (t *retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		now := time.Now()
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			t.ep.retryAt.Store(now.Add(d).UnixNano())
		}
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, 24*3600)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
