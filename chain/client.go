// Package chain reads and writes EVM chains over JSON-RPC for the chain watcher and the payout
// sender: one Client per chain over one or more URLs, every call with a timeout, retries with
// exponential backoff and jitter, failover to the next URL, and errors classified into the
// sentinels of this package. Blocks and transactions are decoded into light types straight from
// the node's JSON (hashes and senders as the node reports them), so L2 header fields and
// transaction types geth does not know do not matter.
//
// URLs often carry API keys: only RedactURL's scheme://host form is ever logged or returned.
package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// Options tune a Client; zero fields take the defaults.
type Options struct {
	// Timeout bounds one attempt of one call (default 10s).
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call over all URLs (default 5); a call makes at
	// least one attempt per URL.
	MaxAttempts int
	// FailoverAfter is how many transient failures in a row on one URL move the call to the
	// next URL (default 2). Rate limits and unusable answers move on at once.
	FailoverAfter int
	// BackoffBase and BackoffMax shape the pause between attempts: BackoffBase·2^(n-1) capped at
	// BackoffMax, of which a random half is jitter (defaults 200ms and 5s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// BatchSize is the most requests Blocks puts in one JSON-RPC batch (default and maximum
	// MaxBatch; some providers accept fewer).
	BatchSize int
	// MaxRetryAfter caps how long a server's Retry-After makes a call wait (default 30s).
	MaxRetryAfter time.Duration
	// Logger gets retries at Debug and failovers at Warn (default slog.Default()).
	Logger *slog.Logger
	// DownAfter is how long without a successful call makes the chain down (default 30s).
	DownAfter time.Duration
	// ProbeEvery is how often StartProbing's loop calls a chain that no call reached for that
	// long, or that is down (default DownAfter/3, between 100ms and 10s).
	ProbeEvery time.Duration
}

// DefaultTimeout is one attempt's timeout when Options.Timeout is not set.
const DefaultTimeout = 10 * time.Second

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.FailoverAfter <= 0 {
		o.FailoverAfter = 2
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 200 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 5 * time.Second
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.BatchSize <= 0 || o.BatchSize > MaxBatch {
		o.BatchSize = MaxBatch
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DownAfter <= 0 {
		o.DownAfter = DefaultDownAfter
	}
	if o.ProbeEvery <= 0 {
		o.ProbeEvery = min(max(o.DownAfter/3, 100*time.Millisecond), 10*time.Second)
	}
	return o
}

// Client is one chain's RPC access over one or more URLs. Safe for concurrent use.
type Client struct {
	id   int64
	name string // eip155:<id>
	eps  []*endpoint
	opts Options
	log  *slog.Logger
	// preferred is the index of the URL that last answered: calls start there.
	preferred atomic.Int32
	health    tracker
	probe     probeLoop
}

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

// New builds the client of one chain over urls (tried in this order) without calling them:
// each URL's chain id is checked before its first use, and the chain is down until a call
// succeeds. Only a malformed configuration is an error.
func New(chainID int64, urls []string, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	c := &Client{id: chainID, name: CAIP2(chainID), opts: opts,
		log: opts.Logger.With(slog.String("chain", CAIP2(chainID)))}
	if chainID <= 0 {
		return nil, c.errorf("dial", nil, "chain id must be positive, got %d", chainID)
	}
	if len(urls) == 0 {
		return nil, c.errorf("dial", nil, "no RPC URL configured")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	for i, u := range urls {
		if err := checkURL(u); err != nil {
			return nil, c.errorf("dial", nil, "URL %d (%s): %v", i+1, RedactURL(u), err)
		}
		ep := &endpoint{url: u, name: RedactURL(u)}
		ep.hc = &http.Client{Transport: &retryAfterTransport{base: tr, ep: ep}}
		c.eps = append(c.eps, ep)
	}
	return c, nil
}

// Dial builds the client of one chain over urls (tried in this order) and checks that each URL
// serves chainID. A URL answering another chain id fails the whole Dial (a misconfiguration must
// stop an operator command). A URL that does not answer is kept, with a warning, if another one
// answers; its chain id is checked before its first use. If none answers, Dial fails with
// ErrUnavailable. ctx bounds only the checks. serve uses New instead: a chain fails alone.
func Dial(ctx context.Context, chainID int64, urls []string, opts Options) (*Client, error) {
	c, err := New(chainID, urls, opts)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(c.eps))
	var wg sync.WaitGroup
	for i, ep := range c.eps {
		wg.Go(func() { errs[i] = c.checkAtDial(ctx, ep) })
	}
	wg.Wait()

	var mismatches, down []error
	first := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if first < 0 {
				first = i
			}
		case errors.Is(err, ErrChainIDMismatch):
			mismatches = append(mismatches, err)
		default:
			down = append(down, err)
		}
	}
	if len(mismatches) > 0 {
		c.Close()
		return nil, joinErrors(mismatches)
	}
	if first < 0 {
		c.Close()
		if ctx.Err() != nil {
			return nil, c.wrap("eth_chainId", nil, ctx.Err())
		}
		return nil, c.wrap("eth_chainId", nil, withKind(ErrUnavailable, joinErrors(down)))
	}
	for _, err := range down {
		c.log.Warn("RPC URL not answering at start; kept for failover", slog.String("err", err.Error()))
	}
	c.preferred.Store(int32(first))
	return c, nil
}

// checkAtDial asks eth_chainId with retries, except that a refused connection or a mismatch
// ends it at once.
func (c *Client) checkAtDial(ctx context.Context, ep *endpoint) error {
	var err error
	for attempt := 1; attempt <= c.opts.MaxAttempts; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		err = c.verify(actx, ep)
		cancel()
		if err == nil {
			c.health.ok(time.Now(), ep.name, false)
			return nil
		}
		err = c.wrap("eth_chainId", ep, err)
		if ctx.Err() != nil || errors.Is(err, ErrChainIDMismatch) || notSent(err) || classify(err) >= endpointBad {
			break
		}
		if attempt < c.opts.MaxAttempts {
			c.log.Debug("RPC retry", slog.String("method", "eth_chainId"), slog.String("url", ep.name),
				slog.Int("attempt", attempt), slog.String("err", err.Error()))
			if sleep(ctx, c.backoff(attempt, classify(err) == rateLimited)) != nil {
				break
			}
		}
	}
	return err
}

// verify checks the endpoint's chain id; a mismatch disables it for good.
func (c *Client) verify(ctx context.Context, ep *endpoint) error {
	if ep.verified.Load() {
		return nil
	}
	rc, _, err := ep.conn(ctx)
	if err != nil {
		return err
	}
	var got hexutil.Big
	if err := rc.CallContext(ctx, &got, "eth_chainId"); err != nil {
		return err
	}
	if id := (*big.Int)(&got); !id.IsInt64() || id.Int64() != c.id {
		ep.disabled.Store(true)
		return withKind(ErrChainIDMismatch, fmt.Errorf("the URL serves eip155:%s, expected %s", id, c.name))
	}
	ep.verified.Store(true)
	if ep.disabled.Swap(false) {
		c.log.Info("RPC URL answers the right chain id again: back in use", slog.String("url", ep.name))
	}
	return nil
}

// ChainID is the chain this client serves.
func (c *Client) ChainID() int64 { return c.id }

// URLs lists the client's URLs, redacted, in order.
func (c *Client) URLs() []string {
	out := make([]string, len(c.eps))
	for i, ep := range c.eps {
		out[i] = ep.name
	}
	return out
}

// Close releases the connections.
func (c *Client) Close() {
	c.probe.stop()
	for _, ep := range c.eps {
		ep.close()
	}
}

func (c *Client) wrap(method string, ep *endpoint, err error) error {
	var ce *CallError
	if errors.As(err, &ce) && ce.ChainID == c.id {
		return err
	}
	e := &CallError{ChainID: c.id, Method: method, Err: redactErr(err)}
	if ep != nil {
		e.URL, e.raw = ep.name, ep.url
	}
	return e
}

func (c *Client) errorf(method string, ep *endpoint, format string, args ...any) error {
	return c.wrap(method, ep, fmt.Errorf(format, args...))
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return &joined{errs}
}

// joined is errors.Join on one line.
type joined struct{ errs []error }

func (j *joined) Error() string {
	parts := make([]string, len(j.errs))
	for i, e := range j.errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (j *joined) Unwrap() []error { return j.errs }

// backoff is the pause before attempt n+1: base·2^(n-1) (one step more when rate limited),
// capped, half of it jitter.
func (c *Client) backoff(n int, longer bool) time.Duration {
	if longer {
		n++
	}
	d := c.opts.BackoffBase
	for i := 1; i < n && d < c.opts.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.opts.BackoffMax)
	half := d / 2
	return half + rand.N(half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// start picks the first endpoint of a call: the preferred one unless it asked for a pause
// and another one did not.
func (c *Client) start(now time.Time) int {
	n := len(c.eps)
	p := int(c.preferred.Load())
	fallback := -1
	for i := range n {
		idx := (p + i) % n
		ep := c.eps[idx]
		if ep.disabled.Load() {
			continue
		}
		if ep.retryAt.Load() <= now.UnixNano() {
			return idx
		}
		if fallback < 0 {
			fallback = idx
		}
	}
	return fallback
}

// next is the endpoint after idx, in order, skipping disabled ones; idx itself if none.
func (c *Client) next(idx int) int {
	n := len(c.eps)
	for i := 1; i < n; i++ {
		j := (idx + i) % n
		if !c.eps[j].disabled.Load() {
			return j
		}
	}
	return idx
}

// do runs fn with retries and failover. fn gets a context bounded by Options.Timeout and an
// endpoint whose chain id is checked. classify decides what a failure does next.
func (c *Client) do(ctx context.Context, method string, classify func(error) class,
	fn func(ctx context.Context, ep *endpoint) error,
) error {
	idx := c.start(time.Now())
	if idx < 0 {
		err := withKind(ErrUnavailable, errors.New("every URL serves another chain id"))
		c.health.fail(time.Now(), err.Error())
		return c.wrap(method, nil, err)
	}
	budget := max(c.opts.MaxAttempts, len(c.eps))
	tried := make([]bool, len(c.eps))
	fails := 0 // in a row on idx
	for attempt := 1; ; attempt++ {
		ep := c.eps[idx]
		tried[idx] = true
		err := c.attempt(ctx, ep, fn)
		if err == nil {
			c.preferred.Store(int32(idx))
			c.health.ok(time.Now(), ep.name, idx != c.firstUsable())
			return nil
		}
		if ctx.Err() != nil {
			return c.wrap(method, ep, fmt.Errorf("%w (last error: %w)", ctx.Err(), err))
		}
		cls := classify(err)
		c.record(ep, idx, cls, err)
		if errors.Is(err, ErrChainIDMismatch) {
			c.log.Error("RPC URL serves another chain: disabled", slog.String("url", ep.name), slog.String("err", ep.scrub(err)))
			cls = endpointBad
		}
		if cls == final {
			return c.wrap(method, ep, err)
		}
		nxt := idx
		fails++
		if cls != transient || fails >= c.opts.FailoverAfter {
			nxt = c.next(idx)
		}
		if attempt >= budget || (cls == endpointBad && nxt == idx) || c.eps[nxt].disabled.Load() {
			if cls == endpointBad {
				return c.wrap(method, ep, err)
			}
			return c.wrap(method, ep, withKind(ErrUnavailable, err))
		}
		var wait time.Duration
		if nxt != idx {
			lvl := slog.LevelWarn
			if c.Health().State == StateDown {
				lvl = slog.LevelDebug // said once by the state change: not again on every call
			}
			c.log.Log(ctx, lvl, "RPC failover", slog.String("method", method), slog.String("url", ep.name),
				slog.String("next", c.eps[nxt].name), slog.String("reason", cls.String()), slog.String("err", ep.scrub(err)))
			fails = 0
		} else {
			c.log.Debug("RPC retry", slog.String("method", method), slog.String("url", ep.name),
				slog.Int("attempt", attempt), slog.String("reason", cls.String()), slog.String("err", ep.scrub(err)))
		}
		if nxt == idx || tried[nxt] {
			wait = c.backoff(attempt, cls == rateLimited)
		}
		if until := time.Until(time.Unix(0, c.eps[nxt].retryAt.Load())); until > wait {
			wait = min(until, c.opts.MaxRetryAfter)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return c.wrap(method, ep, fmt.Errorf("%w (last error: %w)", serr, err))
		}
		idx = nxt
	}
}

// attempt is one try of fn on ep, bounded by Options.Timeout, checking the endpoint's chain id
// first if Dial could not.
func (c *Client) attempt(ctx context.Context, ep *endpoint, fn func(context.Context, *endpoint) error) error {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if c.Health().State == StateDown {
		// A chain coming back is used again only once it answers the right chain id: the
		// node behind a URL may have been replaced while it was away.
		ep.verified.Store(false)
	}
	if err := c.verify(actx, ep); err != nil {
		return err
	}
	return redactErr(fn(actx, ep))
}

// record feeds a failed attempt's outcome to the chain's health: a deterministic answer (not
// found, reverted, nonce too low…) is the node answering, anything else a failure.
func (c *Client) record(ep *endpoint, idx int, cls class, err error) {
	if cls == final && !errors.Is(err, ErrChainIDMismatch) && !errors.Is(err, context.Canceled) {
		c.health.ok(time.Now(), ep.name, idx != c.firstUsable())
		return
	}
	c.health.fail(time.Now(), ep.name+": "+ep.scrub(err))
}

// firstUsable is the first URL, in the order given, not disabled for a wrong chain id.
func (c *Client) firstUsable() int {
	for i, ep := range c.eps {
		if !ep.disabled.Load() {
			return i
		}
	}
	return -1
}
