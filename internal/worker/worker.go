// Package worker runs serve's background loops — the chain watchers, payouts and sweeps,
// webhook delivery, expiry, the Idempotency-Key purge — under one supervisor. A loop is a name,
// an optional lease, an interval and a round function; the runtime owns everything around the
// round: taking and renewing the lease (so the work runs in one process of a deployment at a
// time), pacing, recovering panics, backing off after failures, metrics, and on shutdown letting
// the round in flight finish and giving every lease up before the database closes, so another
// process takes over at once rather than after the lease expires.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/metrics"
)

// Round is one pass of a loop's work. again asks for the next round at once (work is left over,
// e.g. a watcher behind its chain's head); err is logged and counted. A round failing as a whole
// (its RPC or database away) returns err and the loop backs off; a round that did its work but
// some items of it failed alone wraps the error in Partial and the loop keeps its pace, so one
// stuck payment never slows a whole chain down.
type Round func(ctx context.Context) (again bool, err error)

// Loop is one background loop.
type Loop struct {
	Name     string        // the worker label of its metrics and logs, e.g. watch:eip155:1
	Lease    string        // held while it runs, so one process of a deployment runs it; "": every process does
	Interval time.Duration // between rounds
	Round    Round
	// Skipped, when set, is told of each round skipped because another process holds the lease
	// (the loop's own metrics count those).
	Skipped func()
}

// Leases is the store's lease table (store.Store).
type Leases interface {
	TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	GiveUpLease(ctx context.Context, name, holder string) error
}

// Outcomes of a round: the values of paymentsd_worker_rounds_total's outcome label.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"   // returned an error (Partial ones included)
	OutcomePanic   = "panic"   // panicked; recovered and logged with its stack
	OutcomeSkipped = "skipped" // another process holds the loop's lease
)

// Backoff after a failed round: from minBackoff, doubling to maxBackoff, back to the loop's own
// interval after a success. A failing dependency (an RPC provider, the database) is not hammered,
// and a loop that failed for a minute still tries once a minute.
const (
	minBackoff = time.Second
	maxBackoff = time.Minute
)

// LeaseTTL is the one place a loop's lease lifetime comes from. The holder renews its lease every
// round, so three missed rounds mean it is gone (crashed, kill -9, cut off) and another process
// may take over; never under 15 s, so a slow round of a fast loop (RPC timeouts, a big batch)
// does not lose the lease midway. A graceful stop gives the lease up at once instead.
func LeaseTTL(interval time.Duration) time.Duration { return max(3*interval, 15*time.Second) }

// standbyPoll bounds how long a process that does not hold a loop's lease waits before trying
// again: a released lease is taken over within about a second even for an hourly loop.
const standbyPoll = time.Second

// ReleaseTimeout bounds giving the leases up on the way out (the database may be slow or away:
// the lease then expires on its own).
const ReleaseTimeout = 5 * time.Second

// Runtime runs loops. Its zero value is not usable: Leases (when a loop has a lease), Holder
// and Log are required.
type Runtime struct {
	Leases  Leases
	Holder  string // this process's name in the lease table
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
	// Grace is how long a round in flight may go on once Run's context has ended; its context
	// ends after it. Zero: it ends at once.
	Grace time.Duration
	Now   func() time.Time // nil: time.Now

	// after paces the loops (time.After); tests record the pauses asked for instead.
	after func(time.Duration) <-chan time.Time
}

// Run runs every loop until ctx ends, then lets the rounds in flight finish (at most Grace),
// gives up every lease held and returns once all loops have stopped.
func (r *Runtime) Run(ctx context.Context, loops ...Loop) {
	// Rounds get a context of their own: a stop (ctx ending) is seen between rounds, and the
	// round in flight keeps its context until Grace has passed.
	roundCtx, cancelRounds := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRounds()
	roundCtx = withStop(roundCtx, ctx.Done())
	stop := context.AfterFunc(ctx, func() {
		if r.Grace <= 0 {
			cancelRounds()
			return
		}
		time.AfterFunc(r.Grace, cancelRounds)
	})
	defer stop()
	var wg sync.WaitGroup
	for _, l := range loops {
		r.Metrics.WorkerKnown(l.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(ctx, roundCtx, l)
		}()
	}
	wg.Wait()
}

// run is one loop: rounds until ctx ends, then the lease given up.
func (r *Runtime) run(ctx, roundCtx context.Context, l Loop) {
	log := r.Log.With("worker", l.Name)
	if l.Lease != "" {
		defer r.release(ctx, l, log)
	}
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		outcome, again := r.round(roundCtx, l, log)
		wait := l.Interval
		switch outcome {
		case OutcomeOK:
			backoff = 0
		case OutcomeSkipped:
			backoff, again = 0, false
			wait = min(wait, standbyPoll)
		case OutcomeError, OutcomePanic:
			if backoff == 0 {
				backoff = minBackoff
			} else {
				backoff = min(2*backoff, maxBackoff)
			}
			wait, again = max(wait, backoff), false
		case outcomePartial:
			backoff = 0 // the round did its work: keep the pace
		}
		if again || ctx.Err() != nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-r.pause(wait):
		}
	}
}

// outcomePartial is a round that returned a Partial error: counted as an error, paced as ok.
const outcomePartial = "partial"

// round takes the loop's lease (if it has one) and runs one round, recovering a panic.
func (r *Runtime) round(ctx context.Context, l Loop, log *slog.Logger) (outcome string, again bool) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("background round panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			outcome, again = OutcomePanic, false
		}
		counted := outcome
		if counted == outcomePartial {
			counted = OutcomeError
			// The round did its work (some items failed): the loop is alive and making progress.
			r.Metrics.WorkerProgress(l.Name, r.now())
		}
		r.Metrics.WorkerRound(l.Name, counted, r.now())
	}()
	if l.Lease != "" {
		held, err := r.Leases.TakeLease(ctx, l.Lease, r.Holder, r.now(), LeaseTTL(l.Interval))
		if err != nil {
			log.Error("take the lease", "lease", l.Lease, "err", err)
			return OutcomeError, false
		}
		if !held {
			if l.Skipped != nil {
				l.Skipped()
			}
			return OutcomeSkipped, false
		}
	}
	again, err := l.Round(ctx)
	var p partial
	switch {
	case err == nil:
		return OutcomeOK, again
	case errors.As(err, &p):
		// Before the shutdown check: a round that did its work counts as progress even when the
		// stop came while it finished (which of the two happened first is a race, not a fact).
		log.Error("background round: some items failed", "err", err)
		return outcomePartial, again
	case Stopping(ctx) && ctx.Err() != nil:
		return OutcomeError, false // cut off by the end of the shutdown grace: not worth a line
	}
	log.Error("background round failed", "err", err)
	return OutcomeError, false
}

// release gives the loop's lease up (only if this process holds it).
func (r *Runtime) release(ctx context.Context, l Loop, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
	defer cancel()
	if err := r.Leases.GiveUpLease(ctx, l.Lease, r.Holder); err != nil {
		log.Warn("give the lease up; it expires on its own", "lease", l.Lease, "err", err)
	}
}

func (r *Runtime) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runtime) pause(d time.Duration) <-chan time.Time {
	if r.after != nil {
		return r.after(d)
	}
	return time.After(d)
}
