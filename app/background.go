package app

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/worker"
)

// The background loops of a serve process (watchers, payouts and sweeps, webhook delivery,
// expiry, the Idempotency-Key sweeper) run under one worker runtime (internal/worker): it holds
// their leases, paces them, recovers a panic and backs off after a failure, never taking the API
// or the other loops down; and WaitBackground joins it, so every lease is given up before the
// database closes and another process takes over at once instead of waiting for it to expire.

// keySweepInterval is how often expired Idempotency-Keys are purged.
const keySweepInterval = time.Hour

// RunBackground starts the process's background loops; they run until ctx ends. Every role
// purges Idempotency-Keys (the API writes them); background roles also expire, watch, pay and
// deliver.
func (a *App) RunBackground(ctx context.Context, background bool) {
	loops := []worker.Loop{a.Keeper.SweepLoop(keySweepInterval, a.Log)}
	if background {
		loops = append(loops, a.Expirer.Loop())
		loops = append(loops, a.RefundLoops()...)
		loops = append(loops, a.WatcherLoops()...)
		loops = append(loops, a.PayoutLoops()...)
		loops = append(loops, a.WebhookLoops()...)
		if len(a.Clients) > 0 {
			loops = append(loops, a.ChainHealthLoop())
		}
	}
	rt := &worker.Runtime{Leases: a.Store, Holder: holderName(), Log: a.Log.With("component", "worker"), Metrics: a.Metrics,
		Grace: a.Cfg.ShutdownGrace}
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		rt.Run(ctx, loops...)
	}()
}

// WaitBackground waits, at most timeout, for the background loops to stop once their context
// has ended (their rounds in flight finished, their leases released); false if some did not.
func (a *App) WaitBackground(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { a.bg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}
