package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/gen/client"
	"github.com/paymentsd/paymentsd/idempotency"
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

func (e *env) countWithdrawals() int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.rawDB().Raw("SELECT COUNT(*) FROM withdrawals").Row().Scan(&n))
	return n
}

// concurrently sends n requests at once; body(i) is request i's body.
func (e *env) concurrently(n int, path, key, idem string, body func(i int) any) []response {
	var wg sync.WaitGroup
	res := make([]response, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res[i] = e.do(http.MethodPost, path, key, body(i), "Idempotency-Key", idem)
		}()
	}
	close(start)
	wg.Wait()
	return res
}

// 64 identical keyed requests at once: one effect; every answer is that effect, first sent or
// replayed byte for byte. A duplicate waits for the first and replays it (no "in progress" 409).
func TestIdempotencyUnderConcurrencySameBody(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 100_000)
		start := e.balance(m.Merchant.ID)
		for _, op := range []struct {
			path string
			body any
			id   string
		}{{paymentsPath, payment(2000), "paymentId"}, {withdrawalsPath, withdrawal(700), "id"}} {
			res := e.concurrently(64, op.path, m.SecretKey, "race-"+op.id, func(int) any { return op.body })
			replayed := 0
			for _, r := range res {
				require.Equal(t, 201, r.Status, "%s", r.Body)
				assert.Equal(t, string(res[0].Body), string(r.Body), "every answer is the one effect")
				if r.Header.Get("Idempotent-Replayed") == "true" {
					replayed++
				}
			}
			assert.Equal(t, 63, replayed, "%s: one first answer, 63 replays", op.path)
		}
		assert.EqualValues(t, 2, e.countPayments(), "the funding payment and the raced one")
		assert.EqualValues(t, 1, e.countWithdrawals())
		assert.Equal(t, start-700, e.balance(m.Merchant.ID), "debited once")
	})
}

// 64 requests with one key and 64 different bodies: exactly one takes effect; every other is
// told the key was used for a different request.
func TestIdempotencyUnderConcurrencyDifferentBodies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 100_000)
		start := e.balance(m.Merchant.ID)
		for _, op := range []struct {
			path string
			body func(i int) any
		}{
			{paymentsPath, func(i int) any { return payment(int64(1000 + i)) }},
			{withdrawalsPath, func(i int) any { return withdrawal(int64(100 + i)) }},
		} {
			res := e.concurrently(64, op.path, m.SecretKey, "clash"+op.path, op.body)
			created := 0
			for _, r := range res {
				switch r.Status {
				case 201:
					created++
				case 409:
					code, _, _ := r.errorFields(t)
					assert.EqualValues(t, "idempotency_key_reused", code)
				default:
					t.Fatalf("unexpected %d: %s", r.Status, r.Body)
				}
			}
			assert.Equal(t, 1, created, "%s: exactly one effect", op.path)
		}
		assert.EqualValues(t, 2, e.countPayments(), "the funding payment and the one that won")
		require.EqualValues(t, 1, e.countWithdrawals())
		var amount int64
		require.NoError(t, e.rawDB().Raw("SELECT amount_in_cents FROM withdrawals").Row().Scan(&amount))
		assert.Equal(t, start-amount, e.balance(m.Merchant.ID), "the winner's amount, debited once")
	})
}

// A refusal under a key (the balance cannot cover it) is an answer too: the retry gets the same
// 409, replayed, even after the balance grew — as a client that retried a refused request expects.
func TestIdempotentRefusalReplays(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		first := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500), "Idempotency-Key", "poor")
		require.Equal(t, 409, first.Status)
		code, _, param := first.errorFields(t)
		assert.EqualValues(t, "insufficient_balance", code)
		assert.Equal(t, "amountInCents", param)
		e.fund(m.SecretKey, 10_000)
		again := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500), "Idempotency-Key", "poor")
		require.Equal(t, 409, again.Status)
		assert.EqualValues(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, string(first.Body), string(again.Body))
		fresh := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(500), "Idempotency-Key", "rich")
		require.Equal(t, 201, fresh.Status, "a new key runs afresh")
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

// A key the earlier claim/complete design left "in progress" (a crash, possibly after its effect
// committed) survives the upgrade: it answers 409 in_use until it expires, never a second effect.
func TestLegacyInProgressKeyIsNotRunAgain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		body := payment(1500)
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		hash := idempotency.RequestHash(http.MethodPost+" "+paymentsPath, raw)
		now := time.Now().UTC()
		require.NoError(t, e.rawDB().Exec(`INSERT INTO idempotency_keys (merchant_id, key, operation, request_hash, state, created_at, expires_at)
			VALUES (?, 'legacy', ?, ?, 'in_progress', ?, ?)`, m.Merchant.ID, paymentsPath, hash, now, now.Add(time.Hour)).Error)
		before := e.countPayments()
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, body, "Idempotency-Key", "legacy")
		require.Equal(t, 409, r.Status, "%s", r.Body)
		code, typ, _ := r.errorFields(t)
		assert.EqualValues(t, "idempotency_key_in_use", code)
		assert.EqualValues(t, "idempotency_error", typ)
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1600), "Idempotency-Key", "legacy")
		require.Equal(t, 409, r.Status)
		code, _, _ = r.errorFields(t)
		assert.EqualValues(t, "idempotency_key_reused", code)
		assert.Equal(t, before, e.countPayments(), "nothing ran under the unfinished key")
	})
}

// An answer of the router (no operation ran) does not use the key up.
func TestRoutingErrorsDoNotUseTheKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		r := e.do(http.MethodPost, paymentsPath+"z", m.SecretKey, payment(1000), "Idempotency-Key", "k-404")
		require.Equal(t, 404, r.Status)
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "k-404")
		require.Equal(t, 201, r.Status, "%s", r.Body)
		assert.Empty(t, r.Header.Get("Idempotent-Replayed"))
	})
}
