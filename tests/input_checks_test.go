package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/merchants"
)

// Text that would not show as what it looks like, and URLs without a host, are refused by the
// services (so by the API and the CLI alike): 400 parameter_invalid naming the field.
func TestCreateRefusesControlAndBidiTextAndHostlessURLs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		deposit := func(extra ...any) map[string]any {
			b := map[string]any{"type": "deposit", "currency": "USD", "orderId": "d-1"}
			for i := 0; i+1 < len(extra); i += 2 {
				b[extra[i].(string)] = extra[i+1]
			}
			return b
		}
		cases := []struct {
			path  string
			body  map[string]any
			param string
		}{
			{paymentsPath, payment(1000, "orderId", "invoice-\u202e3pm.exe"), "orderId"}, // RIGHT-TO-LEFT OVERRIDE
			{paymentsPath, payment(1000, "orderId", "a\u2066b"), "orderId"},              // LEFT-TO-RIGHT ISOLATE
			{paymentsPath, payment(1000, "orderId", "a\u200fb"), "orderId"},              // RIGHT-TO-LEFT MARK
			{paymentsPath, payment(1000, "orderId", "a\u061cb"), "orderId"},              // ARABIC LETTER MARK
			{paymentsPath, payment(1000, "orderId", "a\x07b"), "orderId"},
			{paymentsPath, payment(1000, "orderId", "line\nbreak"), "orderId"},
			{paymentsPath, payment(1000, "orderId", "tab\there"), "orderId"},
			{paymentsPath, payment(1000, "orderId", "c1\u0085"), "orderId"},
			{paymentsPath, payment(1000, "orderId", "del\x7f"), "orderId"},
			{paymentsPath, deposit("customerRefId", "alice\u202c"), "customerRefId"},
			{paymentsPath, deposit("customerRefId", "alice\x1b[31m"), "customerRefId"},
			{paymentsPath, payment(1000, "customerRefId", "x\u202d"), "customerRefId"}, // ignored by a payment, refused all the same
			{paymentsPath, deposit("orderId", "d\u2069"), "orderId"},
			{paymentsPath, payment(1000, "redirectUrl", "https:///thanks"), "redirectUrl"},
			{paymentsPath, payment(1000, "redirectUrl", "https://:443/thanks"), "redirectUrl"},
			{paymentsPath, payment(1000, "redirectUrl", "http:shop.example"), "redirectUrl"},
			{paymentsPath, payment(1000, "redirectUrl", "https://shop.example@evil.example/"), "redirectUrl"},
			{withdrawalsPath, withdrawal(500, "orderId", "payout-\u202e1"), "orderId"},
			{withdrawalsPath, withdrawal(500, "orderId", "payout\x00"), "orderId"},
			{withdrawalsPath, withdrawal(500, "orderId", "payout\r\n1"), "orderId"},
		}
		for _, c := range cases {
			r := e.do(http.MethodPost, c.path, m.SecretKey, c.body)
			require.Equal(t, 400, r.Status, "%v: %s", c.body, r.Body)
			code, typ, param := r.errorFields(t)
			assert.Equal(t, "parameter_invalid", code, "%v", c.body)
			assert.Equal(t, "invalid_request_error", typ)
			assert.Equal(t, c.param, param, "%v", c.body)
		}
		// Text in any script, emoji and joiners are text; a redirect URL with a host passes.
		r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000, "orderId", "caf\u00e9-\u4e2d-\u0639\u0631\u0628\u064a-\U0001F600-\u200d",
			"redirectUrl", "HTTPS://Shop.Example:8443/thanks?o=1"))
		require.Equal(t, 201, r.Status, string(r.Body))
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, deposit("customerRefId", "cust\u00e9 42"))
		require.Equal(t, 201, r.Status, string(r.Body))
	})
}

// A merchant's logo is shown by the checkout page: an https URL with a host, or nothing.
func TestMerchantLogoURLMustBeHTTPS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bad := range []string{"http://acme.example/logo.png", "https:///logo.png", "https:logo.png", "javascript:alert(1)",
			"data:image/png;base64,AAAA", "file:///etc/passwd", "/logo.png", "", "https://acme.example/\u202elogo.png"} {
			_, err := e.app.Merchants.Create(context.Background(), merchants.CreateInput{Name: "Acme", LogoURL: &bad})
			var in *domain.InvalidInputError
			require.True(t, errors.As(err, &in), "%q: %v", bad, err)
			assert.Equal(t, domain.CodeParameterInvalid, in.Code)
			assert.Equal(t, "logoUrl", in.Param)
		}
		good := "https://acme.example/logo.png"
		c, err := e.app.Merchants.Create(context.Background(), merchants.CreateInput{Name: "Acme", LogoURL: &good})
		require.NoError(t, err)
		require.NotNil(t, c.Merchant.LogoURL)
		assert.Equal(t, good, *c.Merchant.LogoURL)
	})
}

// The test server answers net/http's own refusals with the documented body, as `serve` does.
func TestTransportRefusalIsJSON(t *testing.T) {
	e := newEnv(t, "sqlite")
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, "POST "+paymentsPath+" HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"+
		"Content-Length: 2\r\nContent-Length: 20\r\n\r\n{}")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, 400, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.NotEmpty(t, res.Header.Get("X-Request-Id"))
	var body struct {
		Error struct{ Type, Code, Message string }
	}
	require.NoError(t, json.Unmarshal(raw, &body), string(raw))
	assert.Equal(t, "invalid_request_error", body.Error.Type)
	assert.Equal(t, "parameter_invalid", body.Error.Code)
}
