package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

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
