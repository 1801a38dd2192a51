package watcher_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/watcher"
)

// logRecorder remembers the eth_getLogs queries the watcher makes.
type logRecorder struct {
	watcher.TxReader
	mu      sync.Mutex
	queries []ethereum.FilterQuery
}

func (r *logRecorder) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	r.mu.Lock()
	r.queries = append(r.queries, q)
	r.mu.Unlock()
	return r.TxReader.FilterLogs(ctx, q)
}

// With 2,000 open payments the address topics are split into queries of at most 1,000
// (geth's default limit), and transfers to addresses in every batch are found.
func TestTwoThousandOpenQuotes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		rec := &logRecorder{TxReader: f.w.Chain.(watcher.TxReader)}
		f.w.Chain = rec
		f.sync()
		var ps []domain.Payment
		for range 2000 {
			ps = append(ps, f.create(1000))
		}
		// Pay a few spread over the sorted address space (whichever query batch they fall in).
		paid := []domain.Payment{ps[0], ps[999], ps[1000], ps[1999]}
		for i, p := range paid {
			q := f.quote(p, []string{"USDC", "USDT", "ETH", "USDC"}[i])
			f.pay(i, p, q, q.ExpectedAmountAsset)
		}
		f.mine(2)
		rec.mu.Lock()
		rec.queries = nil
		rec.mu.Unlock()
		f.sync()
		for _, p := range paid {
			assert.Equal(t, domain.PaymentCompleted, f.payment(p.ID).Status)
		}
		assert.Equal(t, domain.PaymentPending, f.payment(ps[500].ID).Status)
		assert.Equal(t, int64(4*990), f.balance())

		rec.mu.Lock()
		defer rec.mu.Unlock()
		require.NotEmpty(t, rec.queries)
		topics := 0
		for _, q := range rec.queries {
			require.Len(t, q.Topics, 3)
			assert.LessOrEqual(t, len(q.Topics[2]), 1000, "at most 1,000 addresses per query")
			topics += len(q.Topics[2])
		}
		assert.GreaterOrEqual(t, len(rec.queries), 2, "2,000 addresses need two queries per range")
		assert.GreaterOrEqual(t, topics, 2000, "every open address is watched")
	})
}
