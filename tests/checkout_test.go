package tests

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/qrtest"
	"github.com/paymentsd/paymentsd/payments"
)

// The QR code answer is an SVG document: the response validator reads it as text.
func init() { openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.FileBodyDecoder) }

// checkoutPath is a payment's path in the payment-secret API.
func checkoutPath(id string, rest ...string) string {
	return "/v1/external/payment-secret-auth/payments/" + id + strings.Join(rest, "")
}

// The checkout view by the payment's own secret: every quote with its exact amount, deposit
// address and EIP-681 URI; no-store; an ETag answered 304. A wrong secret and an unknown payment
// are the same 404; a merchant key is refused.
func TestCheckoutView(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{name: "Checkout Cafe"})
		created := e.createPayment(m.SecretKey, payment(2500, "redirectUrl", "https://shop.example/done", "customMetadata", `{"order":7}`))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		assert.True(t, strings.HasSuffix(created["paymentUrl"].(string), "/pay/"+id+"#secret="+secret))

		r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		v := r.JSON(t)
		assert.Equal(t, "Checkout Cafe", v["merchantName"])
		assert.EqualValues(t, 2500, v["amountInCents"])
		assert.Nil(t, v["redirectUrl"], "not before completion")
		quotes := v["quotes"].([]any)
		require.NotEmpty(t, quotes)
		for _, q := range quotes {
			q := q.(map[string]any)
			units, addr := q["amountAsset"].(string), q["depositAddress"].(string)
			uri := q["paymentUri"].(string)
			chainID := q["evmChainId"].(float64)
			if q["assetType"] == "erc20" {
				assert.Equal(t, "ethereum:"+q["contractAddress"].(string)+"@"+formatInt(chainID)+"/transfer?address="+addr+"&uint256="+units, uri)
			} else {
				assert.Nil(t, q["contractAddress"])
				assert.Equal(t, "ethereum:"+addr+"@"+formatInt(chainID)+"?value="+units, uri)
			}
			assert.NotContains(t, uri, "e+", "integers, never exponents")
		}
		// The QR code of a quote decodes to exactly its payment URI.
		q0 := quotes[0].(map[string]any)
		qr := e.do(http.MethodGet, checkoutPath(id, "/quotes/", q0["id"].(string), "/qr"), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, qr.Status)
		assert.Equal(t, "image/svg+xml", qr.Header.Get("Content-Type"))
		assert.Equal(t, q0["paymentUri"], qrtest.DecodeSVG(t, qr.Body))
		// The page: a static shell under a strict CSP; the secret never reaches the server.
		page := e.do(http.MethodGet, "/pay/"+id, "", nil)
		require.Equal(t, http.StatusOK, page.Status)
		assert.Contains(t, page.Header.Get("Content-Security-Policy"), "default-src 'none'")
		assert.Equal(t, "no-referrer", page.Header.Get("Referrer-Policy"))
		assert.Contains(t, string(page.Body), `data-payment-id="`+id+`"`)
		assert.NotContains(t, string(page.Body), secret)
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, "/pay/assets/checkout.js", "", nil).Status)
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, "/pay/assets/amounts.js", "", nil).Status, "the amounts' formatter, loaded before it")
		assert.Contains(t, string(page.Body), `<script src="/pay/assets/amounts.js" defer></script>
<script src="/pay/assets/checkout.js" defer></script>`, "deferred scripts run in order: the formatter first")
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, "/pay/assets/..%2fpage.go", "", nil).Status)
		tag := r.Header.Get("ETag")
		require.NotEmpty(t, tag)
		r = e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret, "If-None-Match", tag)
		assert.Equal(t, http.StatusNotModified, r.Status)

		wrong := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret+"x")
		unknown := e.do(http.MethodGet, checkoutPath("01a200eb-2a40-7c31-9f0e-5b8d3c6a1e01"), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusNotFound, wrong.Status)
		assert.Equal(t, wrong.Body, unknown.Body, "a wrong secret and an unknown payment answer the same")
		for _, bad := range []string{m.SecretKey, ""} {
			r = e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", bad)
			assert.Equal(t, http.StatusUnauthorized, r.Status)
			code, typ, _ := r.errorFields(t)
			assert.Equal(t, "invalid_payment_secret", code)
			assert.Equal(t, "authentication_error", typ)
		}
		r = e.do(http.MethodGet, checkoutPath(id), m.SecretKey, nil)
		assert.Equal(t, http.StatusUnauthorized, r.Status, "the merchant key is not a payment secret")
	})
}

func formatInt(f float64) string { return strconv.FormatInt(int64(f), 10) }

// Selecting a quote is remembered; an unknown quote is a 404, a final payment a 409. Refreshing
// replaces expired quotes while the payment is live and keeps the selection on the token.
func TestCheckoutSelectAndRefresh(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		hdr := []string{"X-Service-Payment-Secret", secret}
		v := e.do(http.MethodGet, checkoutPath(id), "", nil, hdr...).JSON(t)
		q0 := v["quotes"].([]any)[0].(map[string]any)
		r := e.do(http.MethodPost, checkoutPath(id, "/select-quote"), "", map[string]any{"quoteId": q0["id"]}, hdr...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, q0["id"], r.JSON(t)["selectedQuoteId"])
		r = e.do(http.MethodPost, checkoutPath(id, "/select-quote"), "", map[string]any{"quoteId": "01a200eb-2a40-7c31-9f0e-5b8d3c6a1e01"}, hdr...)
		assert.Equal(t, http.StatusNotFound, r.Status)

		// 20 minutes later the quotes (15 min) have expired; the payment (24 h) is live.
		later := func() time.Time { return time.Now().UTC().Add(20 * time.Minute).Truncate(time.Microsecond) }
		e.app.Checkout.Now, e.app.Payments.Now, e.app.Core.Now = later, later, later
		r = e.do(http.MethodPost, checkoutPath(id, "/select-quote"), "", map[string]any{"quoteId": q0["id"]}, hdr...)
		assert.Equal(t, http.StatusConflict, r.Status, "an expired quote cannot be chosen")
		r = e.do(http.MethodPost, checkoutPath(id, "/refresh-quotes"), "", nil, hdr...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		v = r.JSON(t)
		active, sel := 0, v["selectedQuoteId"]
		for _, q := range v["quotes"].([]any) {
			q := q.(map[string]any)
			if q["status"] == "active" {
				active++
				if q["id"] == sel {
					assert.Equal(t, q0["tokenSymbol"], q["tokenSymbol"], "the selection moved to its token's fresh quote")
					assert.Equal(t, q0["chainId"], q["chainId"])
				}
			}
		}
		assert.Equal(t, len(v["quotes"].([]any))/2, active, "one fresh quote per expired one")
		assert.NotEqual(t, q0["id"], sel)

		// Settled: final; nothing changes any more.
		_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(id),
			TxHash: "0x" + strings.Repeat("ce", 32)}, nil)
		require.NoError(t, err)
		r = e.do(http.MethodPost, checkoutPath(id, "/refresh-quotes"), "", nil, hdr...)
		assert.Equal(t, http.StatusConflict, r.Status)
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "payment_not_open", code)
	})
}

// Requests are rate-limited per payment: a burst beyond the limit gets 429 with Retry-After and
// the documented error body; the page's own polling (a request every few seconds) never does.
func TestCheckoutRateLimit(t *testing.T) {
	e := newEnv(t, "sqlite")
	m := e.merchant(merchantOpts{})
	created := e.createPayment(m.SecretKey, payment(2500))
	id, secret := created["paymentId"].(string), created["secret"].(string)
	limited := 0
	for range 40 {
		r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		if r.Status == http.StatusTooManyRequests {
			limited++
			assert.NotEmpty(t, r.Header.Get("Retry-After"))
			code, typ, _ := r.errorFields(t)
			assert.Equal(t, "rate_limited", code)
			assert.Equal(t, "rate_limit_error", typ)
		}
	}
	assert.Greater(t, limited, 0, "a burst of 40 is limited")
	assert.Less(t, limited, 40, "the first ones pass")
}

// Refreshes at once add one set of fresh quotes (decided under the payment's lock), and a fresh
// quote never outlives the payment.
func TestCheckoutRefreshesAtOnceAndNearExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		hdr := []string{"X-Service-Payment-Secret", secret}
		tokens := len(created["payment"].(map[string]any)["quotes"].([]any))
		// 5 minutes before the payment's own expiry (24 h): the quotes (15 min) long expired.
		late := func() time.Time { return time.Now().UTC().Add(24*time.Hour - 5*time.Minute).Truncate(time.Microsecond) }
		e.app.Checkout.Now, e.app.Payments.Now, e.app.Core.Now = late, late, late
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.do(http.MethodPost, checkoutPath(id, "/refresh-quotes"), "", nil, hdr...)
			}()
		}
		wg.Wait()
		v := e.do(http.MethodGet, checkoutPath(id), "", nil, hdr...).JSON(t)
		expires, err := time.Parse(time.RFC3339Nano, v["expiresAt"].(string))
		require.NoError(t, err)
		active := map[string]int{}
		for _, q := range v["quotes"].([]any) {
			q := q.(map[string]any)
			if q["status"] != "active" {
				continue
			}
			active[q["chainId"].(string)+"/"+q["tokenSymbol"].(string)]++
			qe, err := time.Parse(time.RFC3339Nano, q["expiresAt"].(string))
			require.NoError(t, err)
			assert.False(t, qe.After(expires), "a fresh quote expires with the payment at the latest")
		}
		assert.Len(t, active, tokens, "every token has a fresh quote")
		for k, n := range active {
			assert.Equal(t, 1, n, "%s has %d active quotes", k, n)
		}
	})
}

// Authentication follows each operation's declared security scheme, not its path: a merchant key
// opens no payment-secret operation, a payment secret no merchant operation, and a method an
// operation does not have is a 405 before any credential is asked for.
func TestAuthenticationFollowsTheDeclaredScheme(t *testing.T) {
	e := newEnv(t, "sqlite")
	m := e.merchant(merchantOpts{})
	created := e.createPayment(m.SecretKey, payment(2500))
	id, secret := created["paymentId"].(string), created["secret"].(string)
	r := e.do(http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "", nil, "X-Service-Payment-Secret", secret)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a payment secret is no merchant key")
	r = e.do(http.MethodGet, checkoutPath(id), m.SecretKey, nil)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "a merchant key is no payment secret")
	r = e.do(http.MethodDelete, "/v1/external/secretkey-auth/payments/"+id, "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.Status)
	r = e.do(http.MethodGet, "/v1/external/chains?limit=1", "", nil)
	assert.Equal(t, http.StatusOK, r.Status, "a public operation asks for nothing")
}
