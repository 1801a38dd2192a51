package tests

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/dashauth"
)

// storedAnswer reads an idempotency key's stored response as the database holds it.
func (e *env) storedAnswer(key string) []byte {
	e.t.Helper()
	var body []byte
	require.NoError(e.t, e.rawDB().Raw("SELECT response_body FROM idempotency_keys WHERE key = ?", key).Row().Scan(&body))
	return body
}

// withSecretsKey is another process on e's database configured with another PAYMENTS_SECRETS_KEY
// (a key changed across a restart).
func (e *env) withSecretsKey(key string) *env {
	e.t.Helper()
	cfg := e.app.Cfg
	cfg.Webhooks.SecretsKey = key
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(e.t, err)
	e.t.Cleanup(a.Close)
	h, err := a.Handler()
	require.NoError(e.t, err)
	srv := httptest.NewServer(h)
	e.t.Cleanup(srv.Close)
	other := *e
	other.app, other.srv = a, srv
	return &other
}

// A payment creation's stored answer (replayed for 24 h) carries the payment secret: the
// database holds it sealed with the deployment's secrets key, and the replay still gives the
// same secret. A server whose key cannot open it answers the documented 409, every time, and
// creates nothing.
func TestIdempotentReplayOfAPaymentSecretIsSealed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		first := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1234), "Idempotency-Key", "sealed-1")
		require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
		secret := first.JSON(t)["secret"].(string)
		require.True(t, strings.HasPrefix(secret, "ps_"))

		stored := e.storedAnswer("sealed-1")
		require.NotEmpty(t, stored)
		assert.False(t, bytes.Contains(stored, []byte("ps_")), "no payment secret in clear")
		assert.False(t, bytes.Contains(stored, []byte(secret[3:])), "no payment secret in clear")
		assert.False(t, bytes.Contains(stored, []byte("paymentId")), "the whole answer is sealed")

		again := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1234), "Idempotency-Key", "sealed-1")
		require.Equal(t, http.StatusCreated, again.Status, string(again.Body))
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, string(first.Body), string(again.Body), "byte for byte, the same secret")

		// The secrets key changed: the replay cannot be opened. The request took effect, so it
		// neither runs again nor fails with a 500 — a 409 the client acts on, as often as asked.
		changed := e.withSecretsKey(strings.Repeat("a7", 32))
		for range 2 {
			r := changed.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1234), "Idempotency-Key", "sealed-1")
			require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
			code, typ, param := r.errorFields(t)
			assert.Equal(t, "idempotency_key_in_use", code)
			assert.Equal(t, "idempotency_error", typ)
			assert.Equal(t, "Idempotency-Key", param)
			assert.Contains(t, r.JSON(t)["error"].(map[string]any)["message"], "secrets key changed")
			assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		}
		assert.EqualValues(t, 1, e.countPayments(), "never a second payment")
		// A new key works under the new secrets key, and its answer opens there.
		r := changed.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1234), "Idempotency-Key", "sealed-2")
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		r2 := changed.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1234), "Idempotency-Key", "sealed-2")
		require.Equal(t, http.StatusCreated, r2.Status, string(r2.Body))
		assert.Equal(t, string(r.Body), string(r2.Body))
	})
}

// Every answer carrying a secret shown once — sk_…, ps_…, whsec_… — is Cache-Control: no-store,
// replays included; other answers are not marked.
func TestSecretBearingResponsesAreNoStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		noStore := func(what string, r response, status int, secretPrefix string) {
			t.Helper()
			require.Equal(t, status, r.Status, "%s: %s", what, r.Body)
			assert.Contains(t, string(r.Body), secretPrefix, what)
			assert.Equal(t, "no-store", r.Header.Get("Cache-Control"), what)
		}

		noStore("payment", e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000)), http.StatusCreated, `"ps_`)
		noStore("keyed payment", e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "ns"), http.StatusCreated, `"ps_`)
		replay := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "ns")
		noStore("replayed payment", replay, http.StatusCreated, `"ps_`)
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))

		write := bearerHeader(e.token(m.Merchant.ID, dashauth.ScopeWrite))
		base := "/v1/merchants/" + m.Merchant.ID.String()
		noStore("secret key", e.do(http.MethodPost, base+"/api-keys", "", nil, write...), http.StatusCreated, `"sk_`)
		created := e.do(http.MethodPost, base+"/webhooks", "", map[string]any{"url": "https://93.184.215.14/hook"}, write...)
		noStore("webhook endpoint", created, http.StatusCreated, `"whsec_`)
		epID := created.JSON(t)["endpoint"].(map[string]any)["id"].(string)
		noStore("rotated webhook secret", e.do(http.MethodPost, base+"/webhooks/"+epID+"/rotate-secret", "", nil, write...), http.StatusOK, `"whsec_`)

		list := e.do(http.MethodGet, paymentsPath, m.SecretKey, nil)
		require.Equal(t, http.StatusOK, list.Status)
		assert.NotEqual(t, "no-store", list.Header.Get("Cache-Control"), "answers without a secret are not marked")
	})
}
