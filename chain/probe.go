package chain

import (
	"context"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Health is the chain's health now, from the outcomes of the client's calls.
func (c *Client) Health() Health {
	wrong := 0
	for _, ep := range c.eps {
		if ep.disabled.Load() {
			wrong++
		}
	}
	return c.health.snapshot(time.Now(), c.opts.DownAfter, len(c.eps), wrong)
}

// Probe asks each URL disabled for a wrong chain id whether it serves the right one now (it is
// used again if so), then reads the latest block through the ordinary call path (retries,
// failover), which feeds the chain's health and its head.
func (c *Client) Probe(ctx context.Context) error {
	for _, ep := range c.eps {
		if ep.disabled.Load() {
			c.recheck(ctx, ep)
		}
	}
	_, err := c.BlockByTag(ctx, "latest", false)
	return err
}

// recheck asks a disabled URL its chain id once; verify re-enables it on the right answer.
func (c *Client) recheck(ctx context.Context, ep *endpoint) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	ep.verified.Store(false)
	rc, _, err := ep.conn(actx)
	if err != nil {
		return
	}
	var got hexutil.Big
	if err := rc.CallContext(actx, &got, "eth_chainId"); err != nil {
		return
	}
	if id := (*big.Int)(&got); id.IsInt64() && id.Int64() == c.id {
		_ = c.verify(actx, ep) // asks once more and re-enables: one place decides
	}
}

// StartProbing runs, until Close, a loop that probes the chain whenever no call succeeded for
// Options.ProbeEvery (so a chain nothing else calls still has a health, and a down chain is
// seen coming back), and calls onChange with the new health whenever the state changes (the
// first probe's outcome included). Calling it again does nothing.
func (c *Client) StartProbing(onChange func(Health)) {
	c.probe.start(func(ctx context.Context) {
		last := State("")
		t := time.NewTicker(c.opts.ProbeEvery)
		defer t.Stop()
		for {
			if h := c.Health(); h.State != StateUp || time.Since(h.LastSuccess) >= c.opts.ProbeEvery {
				pctx, cancel := context.WithTimeout(ctx, max(c.opts.ProbeEvery, c.opts.Timeout))
				err := c.Probe(pctx)
				cancel()
				if err != nil && ctx.Err() == nil {
					c.log.Debug("chain probe failed", slog.String("err", err.Error()))
				}
			}
			if h := c.Health(); h.State != last && ctx.Err() == nil {
				last = h.State
				if onChange != nil {
					onChange(h)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// probeLoop owns StartProbing's goroutine.
type probeLoop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *probeLoop) start(run func(context.Context)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		run(ctx)
	}()
}

func (p *probeLoop) stop() {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}
