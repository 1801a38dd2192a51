package tests

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/gen/client"
)

func (e *env) countPayments() int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.rawDB().Raw("SELECT COUNT(*) FROM payments").Row().Scan(&n))
	return n
}

func TestIdempotentCreatePayment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		amount, key := int64(1234), "k-1"
		typed, err := e.api(m.SecretKey).CreatePaymentWithResponse(context.Background(), &client.CreatePaymentParams{IdempotencyKey: &key},
			client.CreatePaymentJSONRequestBody{Amount: &amount, Currency: client.CurrencyUSD, OrderId: "order-1"})
		require.NoError(t, err)
		require.NotNil(t, typed.JSON201, string(typed.Body))
		assert.Empty(t, typed.HTTPResponse.Header.Get("Idempotent-Replayed"))
		first := response{Status: typed.StatusCode(), Body: typed.Body}

		// Same key, same body (keys reordered, whitespace differs): the same response, replayed.
		again := e.do(http.MethodPost, paymentsPath, m.SecretKey, `{ "orderId":"order-1", "currency":"USD", "amount":1234 }`, "Idempotency-Key", "k-1")
		require.Equal(t, 201, again.Status)
		assert.EqualValues(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(first.Body), string(again.Body))
		assert.EqualValues(t, 1, e.countPayments())

		// Same key, different body: 409 reused, nothing created.
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(9999), "Idempotency-Key", "k-1")
		require.Equal(t, 409, r.Status)
		code, typ, _ := r.errorFields(t)
		assert.EqualValues(t, "idempotency_key_reused", code)
		assert.EqualValues(t, "idempotency_error", typ)
		assert.EqualValues(t, 1, e.countPayments())

		// Keys are scoped to the merchant: another merchant may use the same key.
		other := e.merchant(merchantOpts{name: "Other"})
		r = e.do(http.MethodPost, paymentsPath, other.SecretKey, payment(1234), "Idempotency-Key", "k-1")
		require.Equal(t, 201, r.Status)
		assert.Empty(t, r.Header.Get("Idempotent-Replayed"))

		// A validation failure is not stored: the corrected retry with the same key succeeds.
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1), "Idempotency-Key", "k-2")
		require.Equal(t, 400, r.Status)
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "k-2")
		require.Equal(t, 201, r.Status)

		// A key of the wrong form is refused.
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "has space")
		require.Equal(t, 400, r.Status)
	})
}

// TestIdempotencyUnderConcurrency sends the same keyed request many times at once: one payment
// is created; every other answer is a replay of it or a 409 "in use", never a second payment.
func TestIdempotencyUnderConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		const n = 16
		var wg sync.WaitGroup
		res := make([]response, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(2000), "Idempotency-Key", "race")
			}()
		}
		wg.Wait()
		var ids []string
		for _, r := range res {
			switch r.Status {
			case 201:
				ids = append(ids, r.JSON(t)["paymentId"].(string))
			case 409:
				code, _, _ := r.errorFields(t)
				assert.EqualValues(t, "idempotency_key_in_use", code)
			default:
				t.Fatalf("unexpected %d: %s", r.Status, r.Body)
			}
		}
		require.NotEmpty(t, ids)
		for _, id := range ids {
			assert.Equal(t, ids[0], id, "every success is the same payment")
		}
		assert.EqualValues(t, 1, e.countPayments())
		// After the race, the key replays.
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(2000), "Idempotency-Key", "race")
		require.Equal(t, 201, r.Status)
		assert.EqualValues(t, "true", r.Header.Get("Idempotent-Replayed"))
	})
}

func TestIdempotentCreateWithdrawal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 1_000)
		start := e.balance(m.Merchant.ID)
		first := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(300), "Idempotency-Key", "w-1")
		require.Equal(t, 201, first.Status)
		again := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(300), "Idempotency-Key", "w-1")
		require.Equal(t, 201, again.Status)
		assert.EqualValues(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(first.Body), string(again.Body))
		assert.Equal(t, start-300, e.balance(m.Merchant.ID), "a retried withdrawal is paid once")
		// The same key on the other create operation is a different request.
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "w-1")
		require.Equal(t, 409, r.Status)
	})
}
