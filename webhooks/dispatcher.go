package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
)

// DefaultSchedule is when attempts are made: the first at once, then after each delay in turn
// (10 attempts over about 3 days), each delay ±10 % jitter.
var DefaultSchedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// Timeout bounds one attempt; a slower answer counts as a failure.
const Timeout = 15 * time.Second

// Retention is how long the delivery log is kept.
const Retention = 30 * 24 * time.Hour

// maxRetryAfter caps how far a receiver's Retry-After can push the next attempt.
const maxRetryAfter = 24 * time.Hour

// Dispatcher makes due delivery attempts: claimed with a lease on the row, so each attempt is
// made by one process; signed with the endpoint's secret (and, during a rotation, the previous
// one); logged; the next one scheduled.
type Dispatcher struct {
	Store    *store.Store
	Sealer   Sealer
	Guard    Guard
	Holder   string
	Schedule []time.Duration // DefaultSchedule unless a test shortens it
	Interval time.Duration   // between looks for due attempts
	Workers  int             // attempts in flight at once
	Log      *slog.Logger
	Now      func() time.Time
	Observe  func(outcome string) // delivered | retry | failed | disabled

	client    *http.Client
	once      sync.Once
	lastPurge time.Time
}

func (d *Dispatcher) httpClient() *http.Client {
	d.once.Do(func() {
		dialer := d.Guard.Dialer()
		d.client = &http.Client{
			Timeout: Timeout,
			Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConnsPerHost: 4,
				TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: Timeout, IdleConnTimeout: 90 * time.Second},
			// A redirect is an answer, not a new target: following it could lead anywhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	})
	return d.client
}

// Loop is the dispatcher as a background loop (internal/worker). It holds no lease: every
// process delivers, each attempt claimed on its row, so delivery scales with the processes and
// goes on in the others when one stops.
func (d *Dispatcher) Loop() worker.Loop {
	return worker.Loop{Name: "webhooks", Interval: d.Interval,
		Round: func(ctx context.Context) (bool, error) {
			n, err := d.Round(ctx)
			return n > 0 && err == nil, err // more may be due
		}}
}

// lease is how long a claimed delivery is this process's: one attempt (at most Timeout) and its
// record, with margin. A worker claims a delivery only when it is about to make the attempt, so
// the lease never runs out while the attempt waits its turn.
const lease = Timeout + 15*time.Second

// Round makes the attempts due now, each worker claiming one at a time until none is due; it
// returns how many it made.
func (d *Dispatcher) Round(ctx context.Context) (int, error) {
	if now := d.Now(); now.Sub(d.lastPurge) > time.Hour {
		d.lastPurge = now
		if err := d.Store.InTx(ctx, func(tx *store.Tx) error {
			n, err := tx.PurgeDeliveryLog(now.Add(-Retention))
			if n > 0 {
				d.Log.Info("webhook delivery log purged", "rows", n, "older_than", Retention.String())
			}
			return err
		}); err != nil {
			return 0, err
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		made  int
		first error
	)
	for range max(d.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !worker.Stopping(ctx) { // on shutdown the attempt in hand is finished, no new one claimed
				var due []store.Due
				err := d.Store.InTx(ctx, func(tx *store.Tx) error {
					var err error
					due, err = tx.ClaimDue(d.Holder, d.Now(), lease, 1)
					return err
				})
				if err != nil || len(due) == 0 {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				if err := d.attempt(ctx, due[0]); err != nil && ctx.Err() == nil {
					d.Log.Error("webhook attempt", "delivery", due[0].Delivery.ID, "event", due[0].Event.ID, "err", err)
				}
				mu.Lock()
				made++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return made, first
}

// attempt makes one attempt of a claimed delivery and records it.
func (d *Dispatcher) attempt(ctx context.Context, x store.Due) error {
	body, err := EncodeBody(x.Event.ID, string(x.Event.Type), x.Event.CreatedAt, x.Event.Object)
	if err != nil {
		return err
	}
	started := d.Now()
	var code int
	var head string
	var retryAfter time.Duration
	sig, sendErr := d.sign(x.Endpoint, x.Event.ID, started, body)
	if sendErr == nil {
		code, head, retryAfter, sendErr = d.post(ctx, x.Endpoint.URL, x.Event.ID, started, sig, body)
		if code == 0 && ctx.Err() != nil {
			return nil // shut down mid-request: the lease runs out and the attempt is made again
		}
	}
	// An answer received is recorded even while shutting down: a redeploy must not resend it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	n := x.Delivery.Attempts + 1
	a := store.Attempt{ID: uuid.Must(uuid.NewV7()), DeliveryID: x.Delivery.ID, Attempt: n, StartedAt: started,
		LatencyMS: d.Now().Sub(started).Milliseconds()}
	if code > 0 {
		c, h := int64(code), text(head)
		a.StatusCode, a.ResponseHead = &c, &h
	}
	if sendErr != nil {
		msg := text(recordedError(sendErr, x.Endpoint.URL))
		a.Error = &msg
	}
	out, outcome := d.next(n, code, retryAfter)
	if code > 0 && (code < 200 || code > 299) && a.Error == nil {
		msg := fmt.Sprintf("HTTP %d", code)
		a.Error = &msg
	}
	record := func(a store.Attempt) error {
		return d.Store.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.RecordAttempt(d.Holder, a, out, d.Now()); err != nil {
				return err
			}
			if outcome == "disabled" {
				return tx.DisableEndpoint(x.Endpoint.ID, "410 Gone: the receiver asked for no more deliveries", d.Now())
			}
			return nil
		})
	}
	err = record(a)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		// Whatever the database refused of the answer, the attempt itself is recorded: an
		// attempt that cannot be logged must not be made again and again.
		d.Log.Warn("webhook attempt logged without the answer's text", "delivery", x.Delivery.ID, "err", err)
		a.ResponseHead = nil
		err = record(a)
	}
	if errors.Is(err, store.ErrConflict) {
		d.Log.Warn("webhook attempt outlived its lease; another process owns the delivery now", "delivery", x.Delivery.ID)
		return nil
	}
	if err != nil {
		return err
	}
	if d.Observe != nil {
		d.Observe(outcome)
	}
	lvl := slog.LevelInfo
	if outcome != "delivered" {
		lvl = slog.LevelWarn
	}
	d.Log.Log(ctx, lvl, "webhook attempt", "event", x.Event.ID, "type", x.Event.Type, "endpoint", x.Endpoint.ID,
		"attempt", n, "status", code, "outcome", outcome, "next", out.Next, "err", a.Error)
	return nil
}

// next decides what follows attempt n: delivered on a 2xx, disabled on 410, else the next
// attempt of the schedule (not before the receiver's Retry-After), or failed when it ran out.
func (d *Dispatcher) next(n int64, code int, retryAfter time.Duration) (store.AttemptOutcome, string) {
	now := d.Now()
	switch {
	case code >= 200 && code <= 299:
		return store.AttemptOutcome{Status: store.DeliveryDelivered}, "delivered"
	case code == http.StatusGone:
		return store.AttemptOutcome{Status: store.DeliveryDisabled}, "disabled"
	}
	schedule := d.Schedule
	if len(schedule) == 0 {
		schedule = DefaultSchedule
	}
	if n >= int64(len(schedule)) {
		return store.AttemptOutcome{Status: store.DeliveryFailed}, "failed"
	}
	delay := schedule[n]
	if delay > 0 {
		delay += time.Duration((rand.Float64()*0.2 - 0.1) * float64(delay)) // ±10 %
	}
	delay = max(delay, min(retryAfter, maxRetryAfter))
	return store.AttemptOutcome{Status: store.DeliveryPending, Next: now.Add(delay)}, "retry"
}
