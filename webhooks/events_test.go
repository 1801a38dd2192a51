package webhooks_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/withdrawals"
)

func eventTypes(t *testing.T, r *receiver) []string {
	var out []string
	for _, g := range r.requests() {
		var b struct{ Type string }
		require.NoError(t, json.Unmarshal(g.Body, &b))
		out = append(out, b.Type)
	}
	return out
}

// Each endpoint gets the event types it subscribed to; withdrawals' events are delivered too,
// and their object is what GET answers.
func TestSubscriptionsAndWithdrawalEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		all := newReceiver(t)
		completedOnly := newReceiver(t)
		f.endpoint(all.srv.URL)
		f.endpoint(completedOnly.srv.URL, "payment.completed", "withdrawal.cancelled")
		p := f.pay(10_000)
		var q domain.Quote
		for _, x := range p.Quotes {
			if x.Token.Symbol == "USDC" {
				q = x
			}
		}
		_, err := f.a.Payments.Settle(f.ctx, payments.SettleInput{PaymentID: p.ID, QuoteID: &q.ID, TxHash: "0xabababababababababababababababababababababababababababababababab"}, nil)
		require.NoError(t, err)
		w, err := f.a.Withdrawals.Create(f.ctx, f.merchant, withdrawals.CreateInput{AmountInCents: 1000, ChainID: q.Token.Chain.ID,
			RecipientAddress: "0x5aeda56215b167893e80b4fe645ba6d5bab767de", Currency: "USD"}, nil)
		require.NoError(t, err)
		_, err = f.a.Withdrawals.Cancel(f.ctx, uuid.Nil, domain.ModeTest, w.ID, nil)
		require.NoError(t, err)
		f.rounds(4)
		assert.ElementsMatch(t, []string{"payment.created", "payment.completed", "withdrawal.created", "withdrawal.cancelled"}, eventTypes(t, all))
		assert.ElementsMatch(t, []string{"payment.completed", "withdrawal.cancelled"}, eventTypes(t, completedOnly))
		for _, g := range completedOnly.requests() {
			var b struct {
				Type string
				Data struct{ Object json.RawMessage }
			}
			require.NoError(t, json.Unmarshal(g.Body, &b))
			if b.Type == "withdrawal.cancelled" {
				assert.JSONEq(t, string(f.get("/v1/external/secretkey-auth/withdrawals/"+w.ID.String())), string(b.Data.Object))
			}
		}
	})
}

// Two dispatchers on one database (two serve processes) make each attempt once.
func TestTwoDispatchersDeliverEachAttemptOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		r := newReceiver(t)
		f.endpoint(r.srv.URL, "payment.created")
		const n = 40
		for range n {
			f.pay(2500)
		}
		other := f.dispatcher("another-process", f.a.Dispatcher.Guard)
		var wg sync.WaitGroup
		deadline := time.Now().Add(20 * time.Second)
		for _, run := range []func() (int, error){func() (int, error) { return f.a.Dispatcher.Round(f.ctx) }, func() (int, error) { return other.Round(f.ctx) }} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for len(r.requests()) < n && time.Now().Before(deadline) {
					_, _ = run()
				}
			}()
		}
		wg.Wait()
		time.Sleep(100 * time.Millisecond)
		_, _ = f.a.Dispatcher.Round(f.ctx)
		_, _ = other.Round(f.ctx)
		seen := map[string]int{}
		for _, g := range r.requests() {
			seen[g.ID]++
		}
		assert.Len(t, seen, n, "every event delivered")
		for id, c := range seen {
			assert.Equal(t, 1, c, "event %s delivered %d times", id, c)
		}
	})
}
