package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/server"
)

// startChainHealth asks every chain once, all at the same time and for at most one RPC timeout,
// so the chains that answer are quoted from the first request, then probes each one in the
// background for as long as its client lives. Every change of a chain's state is logged.
func (a *App) startChainHealth(ctx context.Context) {
	timeout := a.Cfg.Chains.RPCTimeout
	if timeout <= 0 { // unset: the clients' own default, not a probe that has already timed out
		timeout = chain.DefaultTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range a.Clients {
		wg.Go(func() { _ = c.Probe(pctx) }) // the outcome is in the client's health
	}
	wg.Wait()
	for id, c := range a.Clients {
		caip := chains.CAIP2(id)
		c.StartProbing(func(h chain.Health) { a.logChainState(caip, h) })
	}
}

func (a *App) logChainState(caip string, h chain.Health) {
	attrs := []any{"chain", caip, "state", string(h.State)}
	if !h.LastSuccess.IsZero() {
		attrs = append(attrs, "last_success", h.LastSuccess.UTC().Format(time.RFC3339))
	}
	if h.State.Serving() {
		a.Log.Info("chain state", append(attrs, "url", h.URL)...)
		return
	}
	a.Log.Warn("chain state: not offered for new payments until it answers again; open payments stay watched",
		append(attrs, slog.String("last_error", h.LastError))...)
}

// wireChainHealth hands the chains' health to the services that read it: quotes leave out the
// chains that are not serving, and the metrics show every chain's state and head lag.
func (a *App) wireChainHealth() error {
	a.Payments.ChainServing = a.chainServing
	return a.Metrics.ObserveChains(func() map[string]metrics.ChainHealth {
		out := make(map[string]metrics.ChainHealth, len(a.Clients))
		for id, c := range a.Clients {
			h := c.Health()
			out[chains.CAIP2(id)] = metrics.ChainHealth{Up: h.State.Serving(), HeadTime: h.HeadTime}
		}
		return out
	})
}

// chainServing says whether new payments may be quoted on a chain now. A chain this process
// has no client for (an API-only process) follows the state a worker published; without a fresh
// one (no worker, an unwatched chain served on purpose) it is left to the catalogue.
func (a *App) chainServing(id int64) bool {
	if c, ok := a.Clients[id]; ok {
		return c.Health().State.Serving()
	}
	h, ok := a.shared.get(context.Background(), a.Store, id)
	return !ok || h.Serving
}

// chainHealth is every chain's health for /readyz and the chain list.
func (a *App) chainHealth() map[int64]server.ChainHealth {
	now := time.Now()
	out := make(map[int64]server.ChainHealth, len(a.Clients))
	if len(a.Clients) == 0 { // no chain clients here: what a worker published, when fresh
		for _, c := range a.Catalog.Chains {
			if h, ok := a.shared.get(context.Background(), a.Store, c.ID); ok {
				out[c.ID] = server.ChainHealth{State: h.State, Serving: h.Serving}
			}
		}
		return out
	}
	for id, c := range a.Clients {
		h := c.Health()
		ch := server.ChainHealth{State: string(h.State), Serving: h.State.Serving()}
		if !h.LastSuccess.IsZero() {
			t := h.LastSuccess.UTC()
			ch.LastSuccessAt = &t
		}
		if !h.HeadTime.IsZero() {
			n, lag := int64(h.HeadBlock), int64(max(now.Sub(h.HeadTime), 0)/time.Second)
			ch.HeadBlock, ch.HeadLagSeconds = &n, &lag
		}
		out[id] = ch
	}
	return out
}
