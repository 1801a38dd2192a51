package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/metrics"
)

// syncBuffer is a log sink the loops' goroutines write to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// pauses records the pauses a runtime asks for between rounds, and does not make it wait.
type pauses struct {
	mu   sync.Mutex
	seen []time.Duration
}

func (p *pauses) after(d time.Duration) <-chan time.Time {
	p.mu.Lock()
	p.seen = append(p.seen, d)
	p.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Now()
	return c
}

func (p *pauses) list() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.seen...)
}

func newMetrics(t *testing.T) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	return m, reg
}

// rounds reads paymentsd_worker_rounds_total{worker,outcome} from the registry.
func rounds(t *testing.T, reg *prometheus.Registry, worker, outcome string) float64 {
	t.Helper()
	return sample(t, reg, "paymentsd_worker_rounds_total", worker, outcome)
}

// sample reads a worker metric's value (outcome "" for the gauge, which has none); 0 when absent.
func sample(t *testing.T, reg *prometheus.Registry, name, worker, outcome string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["worker"] == worker && labels["outcome"] == outcome {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A round that panics is logged with its stack, counted, and the loop goes on after a backoff;
// the other loops never notice.
func TestPanicIsRecoveredCountedAndRetried(t *testing.T) {
	var logs syncBuffer
	m, reg := newMetrics(t)
	p := &pauses{}
	rt := &Runtime{Holder: "test", Log: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: m, after: p.after}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var flaky, steady atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Run(ctx,
			Loop{Name: "flaky", Interval: time.Millisecond, Round: func(context.Context) (bool, error) {
				if n := flaky.Add(1); n <= 2 {
					panic("boom")
				}
				return false, nil
			}},
			Loop{Name: "steady", Interval: time.Millisecond, Round: func(context.Context) (bool, error) {
				steady.Add(1)
				return false, nil
			}})
	}()
	require.Eventually(t, func() bool { return flaky.Load() >= 4 && steady.Load() >= 4 }, 5*time.Second, time.Millisecond)
	cancel()
	<-done
	assert.Contains(t, logs.String(), "background round panicked")
	assert.Contains(t, logs.String(), "boom")
	assert.Contains(t, logs.String(), "worker_test.go", "the stack is logged")
	assert.Equal(t, 2.0, rounds(t, reg, "flaky", OutcomePanic))
	assert.GreaterOrEqual(t, rounds(t, reg, "flaky", OutcomeOK), 1.0)
	assert.Zero(t, rounds(t, reg, "steady", OutcomePanic))
	assert.Contains(t, p.list(), minBackoff, "the first panic backs off a second")
	assert.Contains(t, p.list(), 2*minBackoff, "the second doubles it")
}

// Failed rounds back off from 1 s, doubling to a minute; a success brings the loop back to its
// interval; a Partial failure is counted as an error but keeps the pace.
func TestErrorsBackOffAndSuccessResets(t *testing.T) {
	m, reg := newMetrics(t)
	p := &pauses{}
	rt := &Runtime{Holder: "test", Log: discard(), Metrics: m, after: p.after}
	ctx, cancel := context.WithCancel(context.Background())
	// Rounds 1–9 fail, 10 succeeds, 11 fails in part, 12 fails, then the test ends.
	var n atomic.Int32
	rt.Run(ctx, Loop{Name: "failing", Interval: 10 * time.Millisecond, Round: func(context.Context) (bool, error) {
		switch i := n.Add(1); {
		case i <= 9:
			return true, errors.New("rpc away") // asking for more does not skip the backoff
		case i == 10:
			return false, nil
		case i == 11:
			return false, Partial(errors.New("one payment without a price"))
		case i == 12:
			return false, errors.New("rpc away again")
		default:
			cancel()
			return false, nil
		}
	}})
	s := time.Second
	want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, time.Minute, time.Minute, time.Minute,
		10 * time.Millisecond, 10 * time.Millisecond, s}
	assert.Equal(t, want, p.list()[:len(want)])
	assert.Equal(t, 11.0, rounds(t, reg, "failing", OutcomeError), "Partial failures count as errors")
	assert.Equal(t, 2.0, rounds(t, reg, "failing", OutcomeOK), "round 10 and the last")
	assert.Len(t, p.list(), len(want), "no pause after the last round: the context ended")
}

// A round asking for more runs again at once; a successful round sets the last-success gauge.
func TestAgainRunsAtOnceAndSuccessIsStamped(t *testing.T) {
	m, reg := newMetrics(t)
	p := &pauses{}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rt := &Runtime{Holder: "test", Log: discard(), Metrics: m, after: p.after, Now: func() time.Time { return at }}
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	rt.Run(ctx, Loop{Name: "behind", Interval: time.Hour, Round: func(context.Context) (bool, error) {
		if n.Add(1) == 3 {
			cancel()
			return false, nil
		}
		return true, nil
	}})
	assert.Empty(t, p.list(), "no pause while behind")
	assert.Equal(t, 3.0, rounds(t, reg, "behind", OutcomeOK))
	assert.Equal(t, float64(at.Unix()), sample(t, reg, "paymentsd_worker_last_success_timestamp_seconds", "behind", ""))
}

// A round that did its work though some items failed (Partial) is counted as an error but stamps
// the last success: the loop is alive, and an alert on a stale gauge must not fire.
func TestPartialRoundStampsProgress(t *testing.T) {
	m, reg := newMetrics(t)
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	rt := &Runtime{Holder: "test", Log: discard(), Metrics: m, after: (&pauses{}).after, Now: func() time.Time { return at }}
	ctx, cancel := context.WithCancel(context.Background())
	rt.Run(ctx, Loop{Name: "partial", Interval: time.Hour, Round: func(context.Context) (bool, error) {
		cancel()
		return false, Partial(errors.New("one payment without a price"))
	}})
	assert.Equal(t, 1.0, rounds(t, reg, "partial", OutcomeError))
	assert.Equal(t, float64(at.Unix()), sample(t, reg, "paymentsd_worker_last_success_timestamp_seconds", "partial", ""))
}

// On stop the round in flight keeps its context and finishes; no new round starts.
func TestStopLetsTheRoundInFlightFinish(t *testing.T) {
	rt := &Runtime{Holder: "test", Log: discard(), Grace: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	var sawStop, ctxAlive atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Run(ctx, Loop{Name: "slow", Interval: time.Millisecond, Round: func(rctx context.Context) (bool, error) {
			if n.Add(1) > 1 {
				return false, nil
			}
			close(started)
			<-release
			sawStop.Store(Stopping(rctx))
			ctxAlive.Store(rctx.Err() == nil)
			return true, nil
		}})
	}()
	<-started
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while a round was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done
	assert.True(t, sawStop.Load(), "the round is told the runtime is stopping")
	assert.True(t, ctxAlive.Load(), "the round's context outlives the stop within the grace")
	assert.Equal(t, int32(1), n.Load(), "no round after the stop, even one asked for")
}

// A round still running when the grace has passed has its context ended.
func TestGraceEndsTheRoundsContext(t *testing.T) {
	rt := &Runtime{Holder: "test", Log: discard(), Grace: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Run(ctx, Loop{Name: "stuck", Interval: time.Millisecond, Round: func(rctx context.Context) (bool, error) {
			close(started)
			<-rctx.Done()
			return false, rctx.Err()
		}})
	}()
	<-started
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the grace did not end the round")
	}
}
