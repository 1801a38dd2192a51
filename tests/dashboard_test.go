package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
)

func (e *env) token(merchantID uuid.UUID, scope dashauth.Scope) string {
	e.t.Helper()
	tok, _, err := e.app.Tokens.Mint(context.Background(), merchantID, scope, time.Minute)
	require.NoError(e.t, err)
	return tok
}

func bearerHeader(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// The dashboard's balance and withdrawal configuration by bearer token: for its own merchant
// only, writes with a write token only, every refusal in the documented body; the secret-key
// API and the dashboard never take each other's credentials.
func TestDashboardWithdrawalConfigAndBalance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{withdrawals: true, name: "A"})
		b := e.merchant(merchantOpts{withdrawals: true, name: "B"})
		read, write := e.token(a.Merchant.ID, dashauth.ScopeRead), e.token(a.Merchant.ID, dashauth.ScopeWrite)
		base := "/v1/merchants/" + a.Merchant.ID.String()

		r := e.do(http.MethodGet, base+"/withdrawals/config", "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		cfg := r.JSON(t)
		assert.Equal(t, true, cfg["withdrawalsEnabled"])
		assert.NotEmpty(t, cfg["backendWalletAddress"])

		r = e.do(http.MethodGet, base+"/balance", "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.EqualValues(t, 0, r.JSON(t)["availableInCents"])

		patch := map[string]any{"minAmountInCents": 1000, "maxAmountInCents": 200000, "withdrawalsEnabled": false}
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", patch, bearerHeader(read)...)
		assert.Equal(t, http.StatusForbidden, r.Status, "a read token cannot write")
		code, typ, _ := r.errorFields(t)
		assert.Equal(t, "forbidden", code)
		assert.Equal(t, "permission_error", typ)
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", patch, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		cfg = r.JSON(t)
		assert.EqualValues(t, 1000, cfg["minAmountInCents"])
		assert.EqualValues(t, 200000, cfg["maxAmountInCents"])
		assert.Equal(t, false, cfg["withdrawalsEnabled"])
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"minAmountInCents": 9000000, "maxAmountInCents": 1000},
			bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "min above max")
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"chainIds": []string{"eip155:999999"}}, bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "a chain not served")

		// Merchant A's token on merchant B: 403.
		r = e.do(http.MethodGet, "/v1/merchants/"+b.Merchant.ID.String()+"/balance", "", nil, bearerHeader(write)...)
		assert.Equal(t, http.StatusForbidden, r.Status)
		// Missing, malformed, forged tokens: 401 authentication_error.
		for _, hdr := range [][]string{nil, {"Authorization", "Bearer"}, {"Authorization", "Basic abc"},
			bearerHeader("not.a.jwt"), bearerHeader(read[:len(read)-4] + "AAAA")} {
			r = e.do(http.MethodGet, base+"/balance", "", nil, hdr...)
			assert.Equal(t, http.StatusUnauthorized, r.Status, "%v", hdr)
			code, typ, _ = r.errorFields(t)
			assert.Equal(t, "invalid_token", code)
			assert.Equal(t, "authentication_error", typ)
		}
		// Credentials never cross: the merchant key is no bearer token, a token is no secret key.
		r = e.do(http.MethodGet, base+"/balance", a.SecretKey, nil)
		assert.Equal(t, http.StatusUnauthorized, r.Status)
		r = e.do(http.MethodGet, base+"/balance", "", nil, "Authorization", "Bearer "+a.SecretKey)
		assert.Equal(t, http.StatusUnauthorized, r.Status)
		r = e.do(http.MethodGet, "/v1/external/secretkey-auth/payments", "", nil, bearerHeader(write)...)
		assert.Equal(t, http.StatusUnauthorized, r.Status)
		// The issuer's keys are published.
		r = e.do(http.MethodGet, "/.well-known/jwks.json", "", nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.True(t, strings.Contains(string(r.Body), `"EdDSA"`))
	})
}

// Accepted assets from the dashboard: read by default, chosen by chain and symbol or token id,
// refused when not served, back to the default; a read token cannot change them.
func TestDashboardAcceptedAssets(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		read, write := e.token(m.Merchant.ID, dashauth.ScopeRead), e.token(m.Merchant.ID, dashauth.ScopeWrite)
		path := "/v1/merchants/" + m.Merchant.ID.String() + "/accepted-assets"
		r := e.do(http.MethodGet, path, "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, true, r.JSON(t)["default"])
		body := map[string]any{"assets": []string{"eip155:8453/USDC"}}
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPut, path, "", body, bearerHeader(read)...).Status)
		r = e.do(http.MethodPut, path, "", body, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		v := r.JSON(t)
		assert.Equal(t, false, v["default"])
		assets := v["assets"].([]any)
		require.Len(t, assets, 1)
		assert.Equal(t, "USDC", assets[0].(map[string]any)["symbol"])
		// Payments are now quoted in USDC on Base only.
		created := e.createPayment(m.SecretKey, payment(2500))
		quotes := created["payment"].(map[string]any)["quotes"].([]any)
		require.Len(t, quotes, 1)
		r = e.do(http.MethodPut, path, "", map[string]any{"assets": []string{"eip155:8453/NOPE"}}, bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status)
		r = e.do(http.MethodPut, path, "", map[string]any{"default": true}, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, true, r.JSON(t)["default"])
	})
}
