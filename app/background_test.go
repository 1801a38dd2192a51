package app

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A loop that panics is logged and restarted, not fatal; once the context ends every loop is
// joined by WaitBackground (and one still running past the timeout is reported).
func TestBackgroundLoopsAreSupervisedAndJoined(t *testing.T) {
	var logs bytes.Buffer
	a := &App{Log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	a.goLoop(ctx, "flaky", func(ctx context.Context) {
		if runs.Add(1) == 1 {
			panic("boom")
		}
		<-ctx.Done()
	})
	require.Eventually(t, func() bool { return runs.Load() == 2 }, 5*time.Second, 10*time.Millisecond, "restarted after the panic")
	assert.Contains(t, logs.String(), "background loop panicked")
	assert.Contains(t, logs.String(), "boom")
	assert.False(t, a.WaitBackground(50*time.Millisecond), "still running while the context lives")
	cancel()
	assert.True(t, a.WaitBackground(2*time.Second), "joined once the context ended")
}
