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
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
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
