package chain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain/chaintest"
	"github.com/paymentsd/paymentsd/internal/testlog"
)

func TestStateOf(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	const window = 30 * time.Second
	for _, tc := range []struct {
		name string
		f    facts
		want State
	}{
		{"never answered", facts{urls: 1}, StateDown},
		{"answered just now", facts{lastOK: now, urls: 1}, StateUp},
		{"answered inside the window", facts{lastOK: ago(29 * time.Second), urls: 1}, StateUp},
		{"no answer for the window", facts{lastOK: ago(window), urls: 1}, StateDown},
		{"failing, last answer inside the window", facts{lastOK: ago(10 * time.Second), lastFail: ago(time.Second), urls: 1}, StateDegraded},
		{"failing, last answer out of the window", facts{lastOK: ago(31 * time.Second), lastFail: now, urls: 1}, StateDown},
		{"a failure within the window, answered since", facts{lastOK: now, lastFail: ago(5 * time.Second), urls: 1}, StateDegraded},
		{"a failure older than the window", facts{lastOK: now, lastFail: ago(window), urls: 1}, StateUp},
		{"answering on a later URL", facts{lastOK: now, urls: 2, fallback: true}, StateDegraded},
		{"one of two URLs on another chain", facts{lastOK: now, urls: 2, wrongID: 1}, StateDegraded},
		{"every URL on another chain", facts{lastOK: now, urls: 2, wrongID: 2}, StateWrongChain},
		{"the only URL on another chain, never answered", facts{urls: 1, wrongID: 1}, StateWrongChain},
		{"one of two on another chain, the other down", facts{lastOK: ago(time.Minute), urls: 2, wrongID: 1}, StateDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.now, tc.f.downAfter = now, window
			assert.Equal(t, tc.want, stateOf(tc.f))
		})
	}
	assert.True(t, StateUp.Serving())
	assert.True(t, StateDegraded.Serving())
	assert.False(t, StateDown.Serving())
	assert.False(t, StateWrongChain.Serving())
}

// The health tests do not run in parallel: their simulated chains would compete for the CPU
// with TestFlakyProxy, whose 200 ms timeouts count on a quiet machine.

// healthOpts are fast options with a short down window.
func healthOpts(buf *testlog.Buffer) Options {
	o := testOpts(buf)
	o.Timeout, o.DownAfter, o.FailoverAfter, o.MaxAttempts = 500*time.Millisecond, 400*time.Millisecond, 1, 2
	return o
}

func TestNewDoesNotCallAndHealthFollowsCalls(t *testing.T) {
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	c, err := New(simChainID, []string{p.URL()}, healthOpts(&buf))
	require.NoError(t, err)
	defer c.Close()
	assert.Zero(t, p.Requests(), "New calls nothing")
	assert.Equal(t, StateDown, c.Health().State, "not known to answer yet")

	ctx := ctxT(t)
	require.NoError(t, c.Probe(ctx))
	h := c.Health()
	assert.Equal(t, StateUp, h.State)
	assert.False(t, h.HeadTime.IsZero(), "the probe reads the head block")
	assert.Equal(t, RedactURL(p.URL()), h.URL)

	p.DropEvery(1)
	_, err = c.BlockNumber(ctx)
	require.ErrorIs(t, err, ErrUnavailable)
	h = c.Health()
	assert.Equal(t, StateDegraded, h.State, "failing, but answered within the window")
	assert.NotEmpty(t, h.LastError)
	require.Eventually(t, func() bool { return c.Health().State == StateDown }, 5*time.Second, 20*time.Millisecond)

	p.DropEvery(0)
	require.NoError(t, c.Probe(ctx))
	assert.True(t, c.Health().State.Serving(), "answering again")
	require.Eventually(t, func() bool { _ = c.Probe(ctx); return c.Health().State == StateUp }, 5*time.Second, 50*time.Millisecond)
}

func TestNewWithDeadURLIsDownNotAnError(t *testing.T) {
	var buf testlog.Buffer
	c, err := New(simChainID, []string{deadURL(t)}, healthOpts(&buf))
	require.NoError(t, err)
	defer c.Close()
	require.ErrorIs(t, c.Probe(ctxT(t)), ErrUnavailable)
	h := c.Health()
	assert.Equal(t, StateDown, h.State)
	assert.Contains(t, h.LastError, "refused")
	assert.NotContains(t, h.LastError, "DEADSECRET", "URLs are redacted in the health too")
}

func TestWrongChainIDUntilItAnswersTheRightOne(t *testing.T) {
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	p.AnswerChainID(8453)
	var buf testlog.Buffer
	c, err := New(simChainID, []string{p.URL()}, healthOpts(&buf))
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxT(t)

	require.ErrorIs(t, c.Probe(ctx), ErrChainIDMismatch)
	assert.Equal(t, StateWrongChain, c.Health().State)
	before := p.Requests()
	_, err = c.BlockNumber(ctx)
	require.Error(t, err)
	assert.Equal(t, before, p.Requests(), "a URL on another chain is not called")

	p.AnswerChainID(0) // the right node is back behind the URL
	require.NoError(t, c.Probe(ctx))
	assert.True(t, c.Health().State.Serving())
	_, err = c.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Contains(t, buf.String(), "answers the right chain id again")
}

func TestDownChainChecksChainIDWhenItReturns(t *testing.T) {
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	var buf testlog.Buffer
	c, err := New(simChainID, []string{p.URL()}, healthOpts(&buf))
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxT(t)
	require.NoError(t, c.Probe(ctx))

	p.DropEvery(1)
	require.Eventually(t, func() bool { _ = c.Probe(ctx); return c.Health().State == StateDown }, 5*time.Second, 50*time.Millisecond)
	// Another chain's node now answers at the URL: its blocks must not be read as this chain's.
	p.DropEvery(0)
	p.AnswerChainID(1)
	require.ErrorIs(t, c.Probe(ctx), ErrChainIDMismatch)
	assert.Equal(t, StateWrongChain, c.Health().State)
}

func TestFailoverOneTimeoutThenStickyAndBack(t *testing.T) {
	s := newSim(t)
	first := chaintest.NewFlakyProxy(s.url)
	defer first.Close()
	second := chaintest.NewFlakyProxy(s.url)
	defer second.Close()
	var buf testlog.Buffer
	opts := healthOpts(&buf)
	first.DelayEvery(1, 10*opts.Timeout) // a dead first URL: every request times out
	c, err := New(simChainID, []string{first.URL(), second.URL()}, opts)
	require.NoError(t, err)
	defer c.Close()
	ctx := ctxT(t)

	_, err = c.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, first.Requests(), "the dead first URL cost one timeout")
	for range 5 {
		_, err = c.BlockNumber(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, first.Requests(), "the second URL is preferred from then on")
	h := c.Health()
	assert.Equal(t, StateDegraded, h.State, "failing over")
	assert.Equal(t, RedactURL(second.URL()), h.URL)

	// The second one fails, the first answers again: calls go back to it.
	first.DelayEvery(0, 0)
	second.DropEvery(1)
	_, err = c.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, RedactURL(first.URL()), c.Health().URL)
	assert.Greater(t, first.Requests(), 1)
}

func TestStartProbingReportsStateChanges(t *testing.T) {
	s := newSim(t)
	p := chaintest.NewFlakyProxy(s.url)
	defer p.Close()
	p.DropEvery(1)
	var buf testlog.Buffer
	opts := healthOpts(&buf)
	opts.ProbeEvery = 50 * time.Millisecond
	c, err := New(simChainID, []string{p.URL()}, opts)
	require.NoError(t, err)
	states := make(chan State, 64)
	c.StartProbing(func(h Health) { states <- h.State })
	c.StartProbing(nil) // a second start does nothing
	assert.Equal(t, StateDown, <-states)
	p.DropEvery(0)
	// Back: answered again (degraded while the failures are recent), then up.
	assert.Equal(t, StateDegraded, <-states)
	assert.Equal(t, StateUp, <-states)
	c.Close() // stops the loop
	n := p.Requests()
	time.Sleep(5 * opts.ProbeEvery)
	assert.Equal(t, n, p.Requests(), "no probe after Close")
}
