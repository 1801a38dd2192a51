package watcher_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
)

// A running watcher reports its rounds, blocks, transfers, head and cursor on /metrics.
func TestWatcherMetrics(t *testing.T) {
	f := newFixture(t, "sqlite", fixtureOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rt := &worker.Runtime{Leases: f.a.Store, Holder: "test", Log: f.w.Log, Metrics: f.a.Metrics}
	go func() { defer close(done); rt.Run(ctx, f.w.Loop()) }()
	p := f.create(1000)
	q := f.quote(p, "USDC")
	f.pay(0, p, q, q.ExpectedAmountAsset)
	require.Eventually(t, func() bool {
		f.mine(1)
		return f.payment(p.ID).Status == domain.PaymentCompleted
	}, 20*time.Second, 50*time.Millisecond)
	cancel()
	<-done
	rec := httptest.NewRecorder()
	f.a.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`paymentsd_watcher_rounds_total{chain="eip155:1337",result="scanned"}`,
		`paymentsd_watcher_transfers_total{chain="eip155:1337"} 1`,
		`paymentsd_watcher_payment_changes_total{chain="eip155:1337",kind="payment"}`,
		`paymentsd_watcher_cursor_block{chain="eip155:1337"}`,
		`paymentsd_watcher_head_block{chain="eip155:1337"}`,
	} {
		assert.True(t, strings.Contains(text, want), "metrics lack %s", want)
	}
	assert.NotContains(t, text, `paymentsd_watcher_blocks_scanned_total{chain="eip155:1337"} 0`)
	assert.Contains(t, text, `paymentsd_worker_rounds_total{outcome="ok",worker="watch:eip155:1337"}`)
	assert.NotContains(t, text, `paymentsd_worker_last_success_timestamp_seconds{worker="watch:eip155:1337"} 0`)
}
