package lifecycle_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/store"
)

func (f fixture) expirer(holder string) *lifecycle.Expirer {
	return &lifecycle.Expirer{Core: f.core, Interval: time.Second, Batch: 2,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (f fixture) payment(t *testing.T, p domain.Payment) domain.Payment {
	t.Helper()
	got, err := f.st.Read(context.Background()).GetPayment(f.merchant.ID, domain.ModeLive, p.ID, f.cat)
	require.NoError(t, err)
	return got
}

func eventTypes(evs []domain.Event) []domain.EventType {
	out := make([]domain.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// Quotes expire at expiresAt (the payment stays payable until its own expiry); the payment
// expires at its expiry; each exactly at the boundary, not a microsecond before.
func TestExpirySweep(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		var ps []domain.Payment
		for range 5 { // more than one batch
			ps = append(ps, f.newPayment(t))
		}
		done := f.newPayment(t)
		_, err := f.core.UpdatePayment(ctx, done.ID, movePayment(domain.PaymentCompleted))
		require.NoError(t, err)
		e := f.expirer("a")

		*f.clock = t0.Add(15*time.Minute - time.Microsecond)
		res, err := e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.SweepResult{}, res, "nothing is due a microsecond early")

		*f.clock = t0.Add(15 * time.Minute)
		res, err = e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, 10, res.QuotesExpired, "every quote of the five open payments, at expiresAt")
		assert.Zero(t, res.PaymentsExpired)
		for _, p := range ps {
			got := f.payment(t, p)
			assert.Equal(t, domain.PaymentPending, got.Status, "the payment stays open after its quotes expire")
			for _, q := range got.Quotes {
				assert.Equal(t, domain.QuoteExpired, q.Status)
			}
			assert.Equal(t, []domain.EventType{"payment.created", "payment.quotes_expired"}, eventTypes(f.events(t, p.ID)))
		}
		assert.Equal(t, domain.PaymentCompleted, f.payment(t, done).Status, "terminal payments are not touched")

		res, err = e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.SweepResult{}, res, "a second sweep finds nothing: each transition happens once")

		*f.clock = t0.Add(24 * time.Hour)
		res, err = e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, 5, res.PaymentsExpired)
		for _, p := range ps {
			assert.Equal(t, domain.PaymentExpired, f.payment(t, p).Status)
			assert.Equal(t, []domain.EventType{"payment.created", "payment.quotes_expired", "payment.expired"}, eventTypes(f.events(t, p.ID)))
		}
	})
}

// A payment past its expiry whose quotes are still active expires with them in one change.
func TestExpiryOfAPaymentWithActiveQuotes(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		*f.clock = t0.Add(48 * time.Hour) // the process was down for two days
		res, err := f.expirer("a").SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.SweepResult{PaymentsExpired: 1, QuotesExpired: 2}, res)
		got := f.payment(t, p)
		assert.Equal(t, domain.PaymentExpired, got.Status)
		assert.Equal(t, []domain.EventType{"payment.created", "payment.expired"}, eventTypes(f.events(t, p.ID)))
	})
}

// The expiry loop, run by the worker runtime, reports each sweep's outcome to Observe (the
// metrics hook).
func TestExpiryRunObservesSweeps(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		f.newPayment(t)
		*f.clock = t0.Add(48 * time.Hour)
		e := f.expirer("a")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan lifecycle.SweepResult, 1)
		e.Observe = func(res lifecycle.SweepResult, err error) {
			assert.NoError(t, err)
			select {
			case got <- res:
			default:
			}
			cancel()
		}
		done := make(chan struct{})
		rt := &worker.Runtime{Leases: f.st, Holder: "a", Log: e.Log}
		go func() { rt.Run(ctx, e.Loop()); close(done) }()
		select {
		case res := <-got:
			assert.Equal(t, lifecycle.SweepResult{PaymentsExpired: 1, QuotesExpired: 2}, res)
		case <-time.After(10 * time.Second):
			t.Fatal("no sweep observed")
		}
		<-done
	})
}

// A processing payment is the watcher's to decide (it knows whether the amount seen is complete).
func TestExpiryLeavesProcessingPayments(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(domain.PaymentProcessing))
		require.NoError(t, err)
		*f.clock = t0.Add(48 * time.Hour)
		res, err := f.expirer("a").SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, lifecycle.SweepResult{}, res)
		assert.Equal(t, domain.PaymentProcessing, f.payment(t, p).Status)
	})
}

// Several processes: the lease (held by the worker runtime, tested there) lets one sweep at a
// time, and without the lease the row lock and the transition table still make each expiry
// happen once.
func TestExpiryAcrossProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		*f.clock = t0.Add(24 * time.Hour)

		a, b := f.expirer("process-a"), f.expirer("process-b")
		ra, err := a.SweepOnce(ctx)
		require.NoError(t, err)
		rb, err := b.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, ra.PaymentsExpired)
		assert.Equal(t, lifecycle.SweepResult{}, rb, "expired once")

		// Eight concurrent expiries of one payment, as if every process had the lease.
		q := f.newPayment(t)
		*f.clock = f.clock.Add(48 * time.Hour)
		var wg sync.WaitGroup
		var mu sync.Mutex
		changed := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.core.UpdatePayment(ctx, q.ID, func(p *domain.Payment) error {
					n, _ := lifecycle.Expire(p, *f.clock)
					mu.Lock()
					changed += n
					mu.Unlock()
					return nil
				})
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		assert.Equal(t, 1, changed, "one of the eight saw the payment pending")
		assert.Equal(t, []domain.EventType{"payment.created", "payment.expired"}, eventTypes(f.events(t, q.ID)))
		assert.Len(t, f.events(t, p.ID), 2)
	})
}

func TestLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		try := func(holder string, at time.Time) bool {
			var ok bool
			require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = tx.TryLease("job", holder, at, time.Minute)
				return err
			}))
			return ok
		}
		assert.True(t, try("a", t0), "free lease taken")
		assert.True(t, try("a", t0.Add(30*time.Second)), "the holder renews")
		assert.False(t, try("b", t0.Add(89*time.Second)), "renewed until t0+90s")
		assert.True(t, try("b", t0.Add(90*time.Second)), "expired at exactly its end: taken over")
		assert.False(t, try("a", t0.Add(91*time.Second)))
	})
}

// A chain not scanned up to a payment's expiry holds back only the payments quoted on it: a
// transfer mined there in time may still be unread. Payments quoted elsewhere expire on time,
// even when a batch of held-back ones comes first.
func TestExpiryWaitsOnlyForTheChainsAPaymentWasQuotedOn(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		var held []domain.Payment
		for range 3 { // more than a batch (2), each expiring before the others
			held = append(held, f.newPaymentOn(t, 8453))
		}
		*f.clock = t0.Add(time.Minute)
		both := f.newPaymentOn(t, 1, 8453)
		onEthereum := f.newPaymentOn(t, 1)
		horizon := map[int64]time.Time{1: t0.Add(48 * time.Hour), 8453: t0.Add(24*time.Hour + 30*time.Second)}
		e := f.expirer("a")
		e.Horizon = func(context.Context) (map[int64]time.Time, error) { return horizon, nil }

		*f.clock = t0.Add(25 * time.Hour)
		_, err := e.SweepOnce(ctx)
		require.NoError(t, err)
		for _, p := range held {
			assert.Equal(t, domain.PaymentExpired, f.payment(t, p).Status, "Base is scanned past its expiry")
		}
		assert.Equal(t, domain.PaymentPending, f.payment(t, both).Status, "Base is not scanned up to its expiry yet")
		assert.Equal(t, domain.PaymentExpired, f.payment(t, onEthereum).Status, "quoted on Ethereum only, scanned past it")

		horizon[8453] = time.Time{} // as if Base were never scanned: only its payments wait
		later := f.newPaymentOn(t, 1)
		*f.clock = t0.Add(50 * time.Hour)
		horizon[1] = *f.clock
		_, err = e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, domain.PaymentPending, f.payment(t, both).Status)
		assert.Equal(t, domain.PaymentExpired, f.payment(t, later).Status)

		horizon[8453] = *f.clock
		_, err = e.SweepOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, domain.PaymentExpired, f.payment(t, both).Status, "once both chains are scanned past it")
	})
}
