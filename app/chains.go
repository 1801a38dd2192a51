package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/watcher"
)

// openChains starts the embedded devnet chains when configured and builds the client of every chain
// with an RPC URL. No chain's RPC stops the start: each chain fails alone, with a health of its
// own (startChainHealth) that keeps a chain that is down or answers another chain id out of new
// quotes while its watcher keeps trying.
func (a *App) openChains(ctx context.Context) error {
	cfg := a.Cfg.Chains
	urls := map[int64][]string{}
	for id, u := range cfg.RPCURLs {
		urls[id] = u
	}
	if cfg.Passive {
		a.Clients = map[int64]*chain.Client{}
		return nil
	}
	if err := a.startDevnets(ctx, urls); err != nil {
		return err
	}
	ids := make([]int64, 0, len(urls))
	for id := range urls {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	a.Clients = map[int64]*chain.Client{}
	for _, id := range ids {
		// A dead URL costs one timeout before the next one is used (and preferred from then on).
		c, err := chain.New(id, urls[id], chain.Options{Timeout: cfg.RPCTimeout, FailoverAfter: 1,
			DownAfter: cfg.ChainDownAfter, Logger: a.Log})
		if err != nil {
			return fmt.Errorf("chain %s: %w", chains.CAIP2(id), err)
		}
		a.Clients[id] = c
	}
	a.startChainHealth(ctx)
	return nil
}

// wireWatchers builds one watcher per dialled chain and the expiry horizon they give.
func (a *App) wireWatchers() error {
	var screen risk.Provider = a.sanctions // loaded by wirePolicy (nil: nobody listed)
	readers := watcher.Readers{}
	for id, c := range a.Clients {
		readers[id] = c
	}
	a.OnChain = &payments.OnChain{Payments: a.Payments, Chains: readers, Risk: screen}
	for _, c := range a.Catalog.Chains {
		client, ok := a.Clients[c.ID]
		if !ok {
			continue
		}
		if !c.Enabled {
			a.Log.Warn("chain has an RPC URL but is not served (inactive in the catalogue or outside PAYMENTS_NETWORKS)", "chain", chains.CAIP2(c.ID))
			continue
		}
		wc := watcher.DefaultConfig()
		wc.Interval = a.Cfg.Chains.WatchInterval
		if devnet.IsDevnet(c.ID) {
			wc.Lag, wc.StartBack = 0, 1<<62 // a devnet is new on every start: scan it whole, at its head
		}
		caip := chains.CAIP2(c.ID)
		w := &watcher.Watcher{Chain: client, Info: c, Tokens: a.Catalog.ChainTokens(c.ID), Store: a.Store, Settle: a.OnChain,
			Config: wc, Log: a.Log.With("component", "watcher"), Now: Now,
			Observe: func(r watcher.RoundResult, err error) {
				result, blocks, cursor := "scanned", 0, int64(-1)
				switch {
				case err != nil:
					result = "failed"
				case r.Skipped:
					result = "skipped"
				}
				if r.To >= r.From {
					blocks, cursor = int(r.To-r.From+1), r.To
				}
				head := r.Head
				if r.Skipped || head == 0 {
					head = -1
				}
				a.Metrics.WatchRound(caip, result, blocks, r.Transfers, r.Reorged, r.Settled, r.Credited, head, cursor)
			}}
		a.Watchers = append(a.Watchers, w)
	}
	if len(a.Watchers) > 0 {
		a.Expirer.Horizon = a.scanHorizon
		// The checkout page's transaction reports are read through the same watchers (none in a
		// process without chain connections: reports are then answered unavailable).
		a.Checkout.Transactions = watcher.NewReports(a.Watchers, readers, a.Cfg.Chains.ReportWait, a.Log.With("component", "reports"))
	}
	return nil
}

// scanHorizon is the block time each watched chain has been scanned to (the zero time for one
// not scanned yet): a payment quoted on a chain and expiring after its time may still have a
// transfer mined in time there that no watcher has read yet.
func (a *App) scanHorizon(ctx context.Context) (map[int64]time.Time, error) {
	times, err := a.Store.Read(ctx).CursorTimes()
	if err != nil {
		return nil, err
	}
	h := make(map[int64]time.Time, len(a.Watchers))
	for _, w := range a.Watchers {
		h[w.Info.ID] = times[w.Info.ID]
	}
	return h, nil
}

// WatcherLoops are every chain's watcher as background loops (RunBackground).
func (a *App) WatcherLoops() []worker.Loop {
	var out []worker.Loop
	for _, w := range a.Watchers {
		out = append(out, w.Loop())
	}
	return out
}

// warnLiveBesideDevnet says loudly that a deployment serving live chains also runs (or
// reaches) the devnet: modes keep the two apart, but a production deployment has no reason to
// hand out free money at all.
func (a *App) warnLiveBesideDevnet() {
	devServed := false
	for _, id := range devnet.ChainIDs() {
		dev, ok := a.Catalog.Chain(id)
		devServed = devServed || (ok && dev.Enabled)
	}
	if !devServed || !a.Catalog.ServesMode(domain.ModeLive) {
		return
	}
	var live []string
	for _, c := range a.Catalog.Chains {
		if c.Enabled && domain.ChainMode(c).Live() {
			live = append(live, chains.CAIP2(c.ID))
		}
	}
	a.Log.Warn("!!! LIVE CHAINS AND THE DEVNET ARE BOTH SERVED !!! live-mode keys take real money on " + strings.Join(live, ", ") +
		" while the devnet hands out free test money; test and live balances never mix, but a production deployment should " +
		"turn the devnet off (PAYMENTS_DEVNET=off)")
}
