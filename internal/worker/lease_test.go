package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

func openStore(t *testing.T, backend string) *store.Store {
	t.Helper()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(context.Background(), discard()))
	return st
}

// counting is a loop on the lease "job" that counts its rounds and its skipped rounds.
type counting struct{ ran, skipped atomic.Int32 }

func (c *counting) loop(interval time.Duration) Loop {
	return Loop{Name: "job", Lease: "job", Interval: interval,
		Round:   func(context.Context) (bool, error) { c.ran.Add(1); return false, nil },
		Skipped: func() { c.skipped.Add(1) }}
}

// Two processes on one database: the lease lets one run the loop; the other skips (counted) and,
// once the first stops, takes over within about a second — even for an hourly loop — because the
// first gave its lease up on the way out.
func TestLeaseRunsOneProcessAndIsHandedOverOnStop(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			mb, reg := newMetrics(t)
			a := &Runtime{Leases: st, Holder: "a", Log: discard()}
			b := &Runtime{Leases: st, Holder: "b", Log: discard(), Metrics: mb}
			var ca, cb counting
			actx, stopA := context.WithCancel(context.Background())
			aDone := make(chan struct{})
			go func() { defer close(aDone); a.Run(actx, ca.loop(time.Hour)) }()
			require.Eventually(t, func() bool { return ca.ran.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
			bctx, stopB := context.WithCancel(context.Background())
			bDone := make(chan struct{})
			go func() { defer close(bDone); b.Run(bctx, cb.loop(time.Hour)) }()
			require.Eventually(t, func() bool { return cb.skipped.Load() >= 2 }, 5*time.Second, 5*time.Millisecond,
				"the other process polls the lease (about every second) and skips")
			assert.Zero(t, cb.ran.Load())
			assert.GreaterOrEqual(t, rounds(t, reg, "job", OutcomeSkipped), 2.0)

			stopped := time.Now()
			stopA()
			<-aDone
			require.Eventually(t, func() bool { return cb.ran.Load() == 1 }, 3*time.Second, 5*time.Millisecond,
				"taken over once the first process stopped")
			t.Logf("taken over %v after the stop", time.Since(stopped).Round(time.Millisecond))
			assert.Equal(t, int32(1), ca.ran.Load(), "the hourly loop ran once in the first process")

			stopB()
			<-bDone
			held, err := st.TakeLease(context.Background(), "job", "c", time.Now(), time.Minute)
			require.NoError(t, err)
			assert.True(t, held, "the lease was given up on the way out")
		})
	}
}

// A lease whose holder died without giving it up (kill -9) is taken over once its TTL has run.
func TestLeaseOfADeadProcessIsTakenAfterItsTTL(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			st := openStore(t, backend)
			interval := 100 * time.Millisecond
			start := time.Now()
			held, err := st.TakeLease(context.Background(), "job", "dead", start, LeaseTTL(interval))
			require.NoError(t, err)
			require.True(t, held)
			var clock atomic.Int64
			clock.Store(start.UnixNano())
			rt := &Runtime{Leases: st, Holder: "b", Log: discard(), Now: func() time.Time { return time.Unix(0, clock.Load()) }}
			var c counting
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); rt.Run(ctx, c.loop(interval)) }()
			require.Eventually(t, func() bool { return c.skipped.Load() >= 3 }, 5*time.Second, 5*time.Millisecond)
			assert.Zero(t, c.ran.Load(), "not while the dead holder's lease runs")
			clock.Store(start.Add(LeaseTTL(interval)).UnixNano())
			require.Eventually(t, func() bool { return c.ran.Load() >= 1 }, 5*time.Second, 5*time.Millisecond)
			cancel()
			<-done
		})
	}
}

// The lease TTL is derived from the interval in one place: three rounds, at least 15 s.
func TestLeaseTTL(t *testing.T) {
	assert.Equal(t, 15*time.Second, LeaseTTL(100*time.Millisecond))
	assert.Equal(t, 15*time.Second, LeaseTTL(5*time.Second))
	assert.Equal(t, 3*time.Minute, LeaseTTL(time.Minute))
	assert.Equal(t, 3*time.Hour, LeaseTTL(time.Hour))
}
