package watcher_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain/chaintest"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
)

// startDevnet runs a devnet of its own (as `paymentsd devnet` would), reached by URL.
func startDevnet(t *testing.T) *devnet.Devnet {
	t.Helper()
	dn, err := devnet.Start(context.Background(), devnet.Config{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dn.Close() })
	return dn
}

// settleAll runs rounds, tolerating the errors a flaky RPC causes, until every payment is
// completed.
func (f *fixture) settleAll(ids ...uuid.UUID) (rounds, failed int) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		rounds++
		if _, err := f.w.Round(f.ctx); err != nil {
			failed++
		}
		done := true
		for _, id := range ids {
			done = done && f.payment(id).Status == domain.PaymentCompleted
		}
		if done {
			return rounds, failed
		}
	}
	f.t.Fatalf("payments not completed after %d rounds (%d failed)", rounds, failed)
	return
}

// RPC errors, timeouts, dropped connections, 429s and "range too large" answers from a flaky
// proxy in front of the devnet lose no block and count nothing twice.
func TestFlakyRPC(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		dn := startDevnet(t)
		proxy := chaintest.NewFlakyProxy(dn.URL())
		t.Cleanup(proxy.Close)
		f := newFixture(t, backend, fixtureOpts{dn: dn, rpcURL: proxy.URL(), rpcTimeout: 200 * time.Millisecond})
		f.sync()
		proxy.Fail429Every(7)
		proxy.FailMinus32005Every(11)
		proxy.DropEvery(13)
		proxy.DelayEvery(17, 600*time.Millisecond) // past the client's 200 ms timeout
		proxy.Fail5xxEvery(19)
		proxy.RangeLimit(2) // eth_getLogs over more than 2 blocks: "query returned more than 10000 results"

		var ids []uuid.UUID
		for i, sym := range []string{"USDC", "USDT", "ETH", "USDC"} {
			p := f.create(int64(1000 + i))
			q := f.quote(p, sym)
			f.pay(i, p, q, q.ExpectedAmountAsset)
			f.mine(3) // spread over blocks: the ranges must be split
			ids = append(ids, p.ID)
		}
		f.mine(2)
		rounds, failed := f.settleAll(ids...)
		t.Logf("%d rounds, %d failed on RPC errors, %d requests through the proxy", rounds, failed, proxy.Requests())
		want := int64(0)
		for _, id := range ids {
			got := f.payment(id)
			assert.Len(t, f.transfers(id), 1)
			assertSettledOnce(t, f.events(id))
			want += got.AmountMerchantNetCents
		}
		assert.Equal(t, want, f.balance())
	})
}

// A watcher stopped mid-scan (its round cancelled while the RPC stalls) commits nothing of
// the round; the next process resumes from the cursor: nothing missed, nothing doubled.
func TestRestartMidScan(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		dn := startDevnet(t)
		proxy := chaintest.NewFlakyProxy(dn.URL())
		t.Cleanup(proxy.Close)
		f := newFixture(t, backend, fixtureOpts{dn: dn, rpcURL: proxy.URL()})
		f.sync()
		p1, p2 := f.create(1000), f.create(2000)
		f.pay(0, p1, f.quote(p1, "USDC"), f.quote(p1, "USDC").ExpectedAmountAsset)
		f.mine(1)
		f.pay(1, p2, f.quote(p2, "ETH"), f.quote(p2, "ETH").ExpectedAmountAsset)
		f.mine(3)

		// The first process dies in the middle of its round: every request stalls, and its
		// context ends meanwhile.
		proxy.DelayEvery(1, 2*time.Second)
		ctx, cancel := context.WithTimeout(f.ctx, 300*time.Millisecond)
		_, err := f.w.Round(ctx)
		cancel()
		require.Error(t, err)
		f.a.Close()
		proxy.DelayEvery(0, 0)

		g := f.reopen(t, proxy.URL())
		g.settleAll(p1.ID, p2.ID)
		g.mine(5)
		g.sync()
		for _, id := range []uuid.UUID{p1.ID, p2.ID} {
			assert.Len(t, g.transfers(id), 1)
			assert.Equal(t, "payment.completed", last(g.events(id)))
		}
		assert.Equal(t, int64(990+1980), g.balance())
	})
}

// Two serve processes on one PostgreSQL, both running their watchers against one devnet,
// credit every payment once.
func TestTwoProcessesCreditOnce(t *testing.T) {
	dn := startDevnet(t)
	f := newFixture(t, "postgres", fixtureOpts{dn: dn, rpcURL: dn.URL()})
	g := f.reopen(t, dn.URL())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, x := range []*fixture{f, g} {
		rt := &worker.Runtime{Leases: x.a.Store, Holder: fmt.Sprintf("process-%d", i), Log: x.w.Log}
		wg.Add(1)
		go func() { defer wg.Done(); rt.Run(ctx, x.w.Loop()) }()
	}
	var ids []uuid.UUID
	for i := range 6 {
		p := f.create(int64(1000 + i))
		q := f.quote(p, []string{"USDC", "USDT", "ETH"}[i%3])
		f.pay(i, p, q, q.ExpectedAmountAsset)
		ids = append(ids, p.ID)
		f.mine(1)
		if i == 3 {
			g.a.Close() // one process goes away mid-way; the other takes over
		}
	}
	require.Eventually(t, func() bool {
		f.mine(1)
		for _, id := range ids {
			if f.payment(id).Status != domain.PaymentCompleted {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond)
	cancel()
	wg.Wait()
	want := int64(0)
	for _, id := range ids {
		p := f.payment(id)
		want += p.AmountMerchantNetCents
		assert.Len(t, f.transfers(id), 1)
		assertSettledOnce(t, f.events(id))
	}
	assert.Equal(t, want, f.balance())
}

// assertSettledOnce checks a payment's events: created, possibly processing, completed once.
// (A watcher that first sees a transfer already confirmed goes from pending to completed.)
func assertSettledOnce(t *testing.T, events []string) {
	t.Helper()
	if len(events) == 2 {
		assert.Equal(t, []string{"payment.created", "payment.completed"}, events)
		return
	}
	assert.Equal(t, []string{"payment.created", "payment.processing", "payment.completed"}, events)
}
