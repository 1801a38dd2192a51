package tests

import (
	"context"
	"github.com/paymentsd/paymentsd/domain"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthentication(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		routes := []struct{ method, path string }{
			{http.MethodGet, paymentsPath}, {http.MethodPost, paymentsPath}, {http.MethodGet, paymentsPath + "/x"},
			{http.MethodGet, withdrawalsPath}, {http.MethodPost, withdrawalsPath}, {http.MethodGet, withdrawalsPath + "/x"},
		}
		for _, rt := range routes {
			for _, key := range []string{"", "sk_live_wrong", m.SecretKey + "x"} {
				var body any
				if rt.method == http.MethodPost {
					body = payment(1000)
				}
				r := e.do(rt.method, rt.path, key, body)
				require.Equal(t, 401, r.Status, "%s %s key=%q", rt.method, rt.path, key)
				code, typ, _ := r.errorFields(t)
				assert.EqualValues(t, "invalid_api_key", code)
				assert.EqualValues(t, "authentication_error", typ)
			}
		}
		// The header name is case-insensitive.
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+paymentsPath, nil)
		req.Header["x-service-secret-key"] = []string{m.SecretKey} // raw, non-canonical name on the wire
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, 200, res.StatusCode)

		// A second key works; revoking by prefix stops exactly that key.
		k2, err := e.app.Merchants.CreateKey(context.Background(), m.Merchant.ID, domain.ModeLive)
		require.NoError(t, err)
		require.Equal(t, 200, e.do(http.MethodGet, paymentsPath, k2.SecretKey, nil).Status)
		_, err = e.app.Merchants.RevokeKeys(context.Background(), k2.KeyPrefix)
		require.NoError(t, err)
		assert.Equal(t, 401, e.do(http.MethodGet, paymentsPath, k2.SecretKey, nil).Status)
		assert.Equal(t, 200, e.do(http.MethodGet, paymentsPath, m.SecretKey, nil).Status)
		assert.True(t, strings.HasPrefix(m.SecretKey, "sk_live_"))

		// Only a hash of the key is stored.
		var n int64
		require.NoError(t, e.rawDB().Raw("SELECT COUNT(*) FROM api_keys WHERE key_hash = ?", []byte(m.SecretKey)).Row().Scan(&n))
		assert.Zero(t, n)
	})
}

func TestChainsAndPlumbing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r := e.do(http.MethodGet, chainsPath, "", nil)
		require.Equal(t, 200, r.Status)
		body := r.JSON(t)
		data := body["data"].([]any)
		require.Len(t, data, 11)
		assert.Equal(t, map[string]any{"total": 11.0, "limit": 100.0, "offset": 0.0, "hasMore": false, "totalPages": 1.0, "currentPage": 1.0}, body["pagination"])
		byID := map[string]map[string]any{}
		for _, c := range data {
			c := c.(map[string]any)
			byID[c["chainId"].(string)] = c
		}
		assert.Equal(t, map[string]any{"chainId": "eip155:56", "name": "BNB Smart Chain", "nativeSymbol": "BNB", "nativeDecimals": 18.0, "isEnabled": true, "isTestnet": false}, byID["eip155:56"])
		assert.Equal(t, true, byID["eip155:11155111"]["isTestnet"])
		// The devnet is always listed; this process neither runs it nor has an RPC URL for it, so
		// it is not served (serving unwatched chains never covers the devnet).
		assert.Equal(t, map[string]any{"chainId": "eip155:1337", "name": "Devnet", "nativeSymbol": "ETH", "nativeDecimals": 18.0, "isEnabled": false, "isTestnet": true}, byID["eip155:1337"])
		assert.Equal(t, "eip155:1337", data[4].(map[string]any)["chainId"], "ordered by chain id: after 137, before 8453")
		r = e.do(http.MethodGet, chainsPath+"?limit=1&offset=10", "", nil)
		assert.Len(t, r.JSON(t)["data"], 1)
		r = e.do(http.MethodGet, chainsPath+"?limit=1&offset=11", "", nil)
		assert.Len(t, r.JSON(t)["data"], 0)
		for _, q := range []string{"?limit=0", "?limit=1001", "?offset=-1", "?limit=x"} {
			r := e.do(http.MethodGet, chainsPath+q, "", nil)
			require.Equal(t, 400, r.Status, q)
			_, _, param := r.errorFields(t)
			assert.Contains(t, []string{"limit", "offset"}, param)
		}
		for _, q := range []string{"?limit=1", "?limit=1000", "?offset=0", "?offset=100"} {
			require.Equal(t, 200, e.do(http.MethodGet, chainsPath+q, "", nil).Status, q)
		}

		// Unknown routes, wrong methods and oversized bodies answer in the error body too.
		r = e.do(http.MethodGet, "/v1/nope", "", nil)
		require.Equal(t, 404, r.Status)
		code, _, _ := r.errorFields(t)
		assert.EqualValues(t, "resource_not_found", code)
		r = e.do(http.MethodDelete, chainsPath, "", nil)
		require.Equal(t, 405, r.Status)
		assert.NotEmpty(t, r.Header.Get("Allow"))
		m := e.merchant(merchantOpts{})
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, `{"orderId":"`+strings.Repeat("x", 2<<20)+`"}`)
		require.Equal(t, 413, r.Status)
		r = e.do(http.MethodPost, paymentsPath, m.SecretKey, "amount=1", "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, 415, r.Status, string(r.Body))

		for _, p := range []string{"/healthz", "/readyz"} {
			require.Equal(t, 200, e.do(http.MethodGet, p, "", nil).Status, p)
		}
		r = e.do(http.MethodGet, "/openapi.yaml", "", nil)
		require.Equal(t, 200, r.Status)
		assert.Contains(t, string(r.Body), "openapi: 3.0.3")
	})
}
