package tests

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Contract defects a schemathesis run found once it reached the payment-secret operations with
// a real payment id and secret (issue 21). Every answer here is also checked against the spec by
// the harness, so an undocumented status fails the test.

// If-None-Match is a cache hint: a value that names no current ETag — over-long, not a list,
// not text — is no match (200 with the view), never a 400; a long list that names it is a 304.
func TestCheckoutIfNoneMatchIsOnlyAHint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		tag := r.Header.Get("ETag")
		require.NotEmpty(t, tag)

		for name, hint := range map[string]string{
			"over-long":           strings.Repeat("z", 4000),
			"over-long list":      strings.Repeat(`"0123456789abcdef01234567", `, 150),
			"the tag inside text": "x" + tag,
			"the tag unquoted":    strings.Trim(tag, `"`),
			"not text":            `"` + "\xff\xfe" + `"`,
		} {
			r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret, "If-None-Match", hint)
			assert.Equal(t, http.StatusOK, r.Status, "%s: %s", name, r.Body)
			assert.Equal(t, tag, r.Header.Get("ETag"), name)
		}
		for name, hint := range map[string]string{
			"a long list naming it": strings.Repeat(`"0123456789abcdef01234567", `, 150) + tag,
			"weak":                  "W/" + tag,
			"any":                   "*",
		} {
			r := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret, "If-None-Match", hint)
			assert.Equal(t, http.StatusNotModified, r.Status, "%s: %s", name, r.Body)
		}

		// The list split over two header lines is one list (the binder took one line only: 400).
		req, err := http.NewRequest(http.MethodGet, e.srv.URL+checkoutPath(id), nil)
		require.NoError(t, err)
		req.Header.Set("X-Service-Payment-Secret", secret)
		req.Header.Add("If-None-Match", `"old"`)
		req.Header.Add("If-None-Match", tag)
		res, err := validatingDoer{e}.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusNotModified, res.StatusCode)
	})
}

// A path parameter's maxLength counts the characters of its decoded value, as JSON Schema does:
// sixteen (or sixty-four) é are within quoteId's 64 even though their percent-encoding is six
// bytes each, so the answer is "no such quote" (404), not a 400; sixty-five are over it.
func TestCheckoutPathParameterLengthCountsDecodedCharacters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		qr := func(quoteID string) response {
			return e.do(http.MethodGet, checkoutPath(id, "/quotes/", url.PathEscape(quoteID), "/qr"), "", nil, "X-Service-Payment-Secret", secret)
		}
		for _, n := range []int{16, 64} {
			r := qr(strings.Repeat("é", n))
			require.Equal(t, http.StatusNotFound, r.Status, "%d é: %s", n, r.Body)
			code, typ, param := r.errorFields(t)
			assert.Equal(t, []string{"resource_not_found", "not_found_error", "quoteId"}, []string{code, typ, param})
		}
		r := qr(strings.Repeat("é", 65))
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		code, _, param := r.errorFields(t)
		assert.Equal(t, "parameter_invalid", code)
		assert.Equal(t, "quoteId", param)
		// A real quote's id still draws its code.
		q0 := created["payment"].(map[string]any)["quotes"].([]any)[0].(map[string]any)
		assert.Equal(t, http.StatusOK, qr(q0["id"].(string)).Status)
	})
}

// select-quote with a well-formed id that is none of the payment's quotes — unknown, or another
// payment's — is the documented 404 naming quoteId, the same answer for both.
func TestCheckoutSelectUnknownQuoteIsNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		created := e.createPayment(m.SecretKey, payment(2500))
		other := e.createPayment(m.SecretKey, payment(3000))
		id, secret := created["paymentId"].(string), created["secret"].(string)
		otherQuote := other["payment"].(map[string]any)["quotes"].([]any)[0].(map[string]any)["id"]
		var bodies [][]byte
		for _, quoteID := range []any{"01a200eb-2a40-7c31-9f0e-5b8d3c6a1e01", otherQuote} {
			r := e.do(http.MethodPost, checkoutPath(id, "/select-quote"), "", map[string]any{"quoteId": quoteID}, "X-Service-Payment-Secret", secret)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			code, typ, param := r.errorFields(t)
			assert.Equal(t, []string{"resource_not_found", "not_found_error", "quoteId"}, []string{code, typ, param})
			bodies = append(bodies, r.Body)
		}
		assert.Equal(t, string(bodies[0]), string(bodies[1]), "another payment's quote reads as no quote at all")
		v := e.do(http.MethodGet, checkoutPath(id), "", nil, "X-Service-Payment-Secret", secret).JSON(t)
		assert.Nil(t, v["selectedQuoteId"], "nothing was selected")
		// Not a UUID at all is still a 400 (the body's schema).
		r := e.do(http.MethodPost, checkoutPath(id, "/select-quote"), "", map[string]any{"quoteId": "not-a-uuid"}, "X-Service-Payment-Secret", secret)
		assert.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
	})
}

// Identifiers the service looks up refuse NUL (the databases cannot compare it), so the spec
// says so: a schema-valid id must never be a 400 (a deeper schemathesis run sent
// `eventId=%15%00…` to the deliveries list, which the spec allowed and the service refused).
func TestLookedUpIdentifiersExcludeNULInTheSpec(t *testing.T) {
	for shape, file := range specFiles {
		doc, err := openapi3.NewLoader().LoadFromFile(file)
		require.NoError(t, err, shape)
		for _, c := range []struct{ path, method, param string }{
			{"/v1/merchants/{merchantId}/webhooks/deliveries", http.MethodGet, "eventId"},
			{"/v1/merchants/{merchantId}/webhooks/events/{eventId}/redeliver", http.MethodPost, "eventId"},
			{"/v1/external/payment-secret-auth/payments/{paymentId}/quotes/{quoteId}/qr", http.MethodGet, "quoteId"},
			{"/v1/external/payment-secret-auth/payments/{paymentId}/quotes/{quoteId}/qr", http.MethodGet, "paymentId"},
		} {
			op := doc.Paths.Find(c.path).GetOperation(c.method)
			require.NotNil(t, op, c.path)
			var schema *openapi3.Schema
			for _, p := range op.Parameters {
				if p.Value.Name == c.param {
					schema = p.Value.Schema.Value
				}
			}
			require.NotNil(t, schema, "%s %s", c.path, c.param)
			assert.Error(t, schema.VisitJSON("evt\x00"), "%s: %s %s", shape, c.path, c.param)
			assert.NoError(t, schema.VisitJSON("évt_01"), "%s: %s %s", shape, c.path, c.param)
		}
	}
}
