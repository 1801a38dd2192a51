package tests

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
)

// servedAgain serves e's application again with its configuration edited first (a fresh server:
// fresh rate limits), e.g. trusting the test client's loopback address as a proxy.
func (e *env) servedAgain(edit func(*config.Config)) *env {
	e.t.Helper()
	edit(&e.app.Cfg)
	h, err := e.app.Handler()
	require.NoError(e.t, err)
	srv := httptest.NewServer(h)
	e.t.Cleanup(srv.Close)
	sub := *e
	sub.srv = srv
	return &sub
}

// trustLoopback makes the test client (127.0.0.1) a trusted proxy: X-Forwarded-For names the client.
func trustLoopback(c *config.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
}

// assertLimited checks a 429 of the payment-secret guard: Retry-After and the documented body.
func assertLimited(t *testing.T, r response) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	code, typ, _ := r.errorFields(t)
	assert.Equal(t, "rate_limited", code)
	assert.Equal(t, "rate_limit_error", typ)
}

// forwarded is a fresh client address behind the proxy.
func forwarded(i int) string { return "198.51.100." + strconv.Itoa(i%250+1) }

// Failed payment secrets are limited per client and per payment id; a correct secret is always
// answered. Without trusted proxies X-Forwarded-For is ignored (even from loopback): a client
// cannot pick a fresh budget with it. Behind a trusted proxy each forwarded client has its own
// budget, and fresh client addresses do not buy more failures on one payment.
func TestCheckoutFailedSecretLimits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		wrong := func(e *env, id, xff string) response {
			return e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", "ps_wrong", "X-Forwarded-For", xff)
		}

		// No trusted proxies: every request is the one client 127.0.0.1, whatever it forwards.
		for i := range 20 {
			require.Equal(t, http.StatusNotFound, wrong(e, uuid.NewString(), forwarded(i)).Status, "failure %d", i+1)
		}
		assertLimited(t, wrong(e, uuid.NewString(), forwarded(99)))
		assertLimited(t, wrong(e, id, forwarded(98)))
		r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, "a correct secret from a client out of failures: %s", r.Body)

		// Behind a trusted proxy (the test client's address).
		p := e.servedAgain(trustLoopback)
		for i := range 30 {
			require.Equal(t, http.StatusNotFound, wrong(p, uuid.NewString(), forwarded(i)).Status,
				"failure %d: each forwarded client has a budget of its own", i+1)
		}
		for i := range 20 {
			require.Equal(t, http.StatusNotFound, wrong(p, id, forwarded(100+i)).Status, "failure %d on the payment", i+1)
		}
		assertLimited(t, wrong(p, id, forwarded(200)))
		r = p.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret, "X-Forwarded-For", forwarded(200))
		require.Equal(t, http.StatusOK, r.Status, "the payment's own secret still opens it: %s", r.Body)
		// An unknown payment id has the same budget: nothing tells it from a wrong secret.
		unknown := uuid.NewString()
		for i := range 20 {
			require.Equal(t, http.StatusNotFound, wrong(p, unknown, forwarded(300+i)).Status)
		}
		assertLimited(t, wrong(p, unknown, forwarded(400)))
	})
}

// The devnet test wallet's POST /pay/{id}/devnet-pay is opened by the same guard: its failures
// count against the same budgets as the API's (and are limited the same way), and a correct
// secret is subject to its payment's request budget.
func TestCheckoutDevnetPayIsGuarded(t *testing.T) {
	e := newEnv(t, "sqlite").servedAgain(func(c *config.Config) {
		trustLoopback(c)
		// A devnet RPC URL makes the test wallet's route exist; no test here reaches the payer's
		// network (it refuses a quote id the payment does not have before dialling).
		c.Chains.RPCURLs = map[int64][]string{devnet.ChainID: {"http://127.0.0.1:9"}}
	})
	m := e.merchant(merchantOpts{})
	created := e.createPayment(m.SecretKey, payment(2500))
	id, secret := created["paymentId"].(string), created["secret"].(string)
	pay := func(secret, xff string) response {
		return e.do(http.MethodPost, "/pay/"+id+"/devnet-pay", "", map[string]any{"quoteId": uuid.NewString()},
			"X-Service-Payment-Secret", secret, "X-Forwarded-For", xff)
	}
	r := pay(secret, forwarded(0))
	require.Equal(t, http.StatusBadRequest, r.Status, "opened; the quote is not the payment's: %s", r.Body)
	assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))

	for i := range 20 {
		require.Equal(t, http.StatusNotFound, pay("ps_wrong", forwarded(i+1)).Status, "failure %d", i+1)
	}
	assertLimited(t, pay("ps_wrong", forwarded(50)))
	assertLimited(t, e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", "ps_wrong", "X-Forwarded-For", forwarded(51)))
	require.Equal(t, http.StatusBadRequest, pay(secret, forwarded(52)).Status, "a correct secret is answered")

	// One client's failures on the test wallet spend its budget for the API too.
	for i := range 20 {
		r := e.do(http.MethodPost, "/pay/"+uuid.NewString()+"/devnet-pay", "", map[string]any{"quoteId": uuid.NewString()},
			"X-Service-Payment-Secret", "ps_wrong", "X-Forwarded-For", "203.0.113.9")
		require.Equal(t, http.StatusNotFound, r.Status, "failure %d", i+1)
	}
	assertLimited(t, e.do(http.MethodGet, checkoutPath(uuid.NewString()), "", nil, "X-Service-Payment-Secret", "ps_wrong", "X-Forwarded-For", "203.0.113.9"))

	// The payment's request budget: a button pressed in a loop is limited like a page polling too fast.
	limited := 0
	for range 30 {
		if r := pay(secret, forwarded(60)); r.Status == http.StatusTooManyRequests {
			assertLimited(t, r)
			limited++
		}
	}
	assert.Positive(t, limited)
}
