package app

import (
	"context"
	"runtime/debug"
	"time"
)

// The background loops of a serve process (watchers, payouts and sweeps, webhook delivery,
// expiry, the idempotency-key sweeper) run under goLoop: a panic in one is logged and that loop
// restarted after a pause, never taking the API or the other loops down; and WaitBackground
// joins them all, so every lease they hold is given up before the database closes and another
// process takes over at once instead of waiting for the lease to expire.

// goLoop runs run(ctx) in the background until ctx ends, restarting it (after 1 s, doubling to
// a minute) when it panics or returns early.
func (a *App) goLoop(ctx context.Context, name string, run func(context.Context)) {
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		for pause := time.Second; ctx.Err() == nil; pause = min(2*pause, time.Minute) {
			a.runGuarded(ctx, name, run)
			if ctx.Err() != nil {
				return
			}
			a.Log.Warn("background loop stopped; restarting", "loop", name, "after", pause)
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
	}()
}

// runGuarded runs one loop, turning a panic into a log line.
func (a *App) runGuarded(ctx context.Context, name string, run func(context.Context)) {
	defer func() {
		if p := recover(); p != nil {
			a.Log.Error("background loop panicked", "loop", name, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	run(ctx)
}

// RunExpiry sweeps expired payments and quotes in the background.
func (a *App) RunExpiry(ctx context.Context) { a.goLoop(ctx, "expiry", a.Expirer.Run) }

// RunKeySweep purges expired Idempotency-Keys (and seals answers stored in clear) hourly.
func (a *App) RunKeySweep(ctx context.Context) {
	a.goLoop(ctx, "idempotency-keys", func(ctx context.Context) { a.Keeper.Sweep(ctx, time.Hour, a.Log) })
}

// WaitBackground waits, at most timeout, for every background loop to stop once their context
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
