package tests

import (
	"context"
	"github.com/paymentsd/paymentsd/domain"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
)

// token mints a dashboard token for the merchant with the env's issuer.
func (e *env) token(merchantID uuid.UUID, scope dashauth.Scope) string {
	e.t.Helper()
	return e.modeToken(merchantID, domain.ModeLive, scope)
}

// modeToken mints a dashboard token of the env's issuer acting in mode.
func (e *env) modeToken(merchantID uuid.UUID, mode domain.Mode, scope dashauth.Scope) string {
	e.t.Helper()
	if e.issuer == "oidc" {
		scopes := "read"
		if scope == dashauth.ScopeWrite {
			scopes = "read write"
		}
		return e.idp.token(e.t, []string{merchantID.String()}, scopes, func(c jwt.MapClaims) { c["mode"] = string(mode) })
	}
	tok, _, err := e.app.Tokens.MintMode(context.Background(), merchantID, mode, scope, time.Minute)
	require.NoError(e.t, err)
	return tok
}

func bearerHeader(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// The dashboard's balance and withdrawal configuration by bearer token: for its own merchant
// only, writes with a write token only, every refusal in the documented body; the secret-key
// API and the dashboard never take each other's credentials.
func TestDashboardWithdrawalConfigAndBalance(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
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
		r = e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"chainIds": []string{"eip155:8453", "eip155:8453"}}, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, "a chain named twice is named once: %s", r.Body)
		assert.Equal(t, []any{"eip155:8453"}, r.JSON(t)["chainIds"])

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
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
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

// Withdrawals from the dashboard: the secret-key API's rules (bounds, balance, Idempotency-Key)
// for the token's merchant only; cancel restores the balance once and only while pending.
func TestDashboardWithdrawals(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		b := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "B"})
		e.fund(a.SecretKey, 10_000)
		start := e.balance(a.Merchant.ID)
		read, write := e.token(a.Merchant.ID, dashauth.ScopeRead), e.token(a.Merchant.ID, dashauth.ScopeWrite)
		base := "/v1/merchants/" + a.Merchant.ID.String() + "/withdrawals"

		r := e.do(http.MethodPost, base, "", withdrawal(2_500), bearerHeader(read)...)
		assert.Equal(t, http.StatusForbidden, r.Status, "a read token cannot withdraw")
		r = e.do(http.MethodPost, base, "", withdrawal(99), bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "below the spec's minimum")
		r = e.do(http.MethodPost, base, "", withdrawal(start+1), bearerHeader(write)...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "insufficient_balance", code)

		idem := append(bearerHeader(write), "Idempotency-Key", "dash-w-1")
		r = e.do(http.MethodPost, base, "", withdrawal(2_500), idem...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		w := r.JSON(t)
		id := w["id"].(string)
		replay := e.do(http.MethodPost, base, "", withdrawal(2_500), idem...)
		require.Equal(t, http.StatusCreated, replay.Status)
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(r.Body), string(replay.Body))
		assert.Equal(t, http.StatusConflict, e.do(http.MethodPost, base, "", withdrawal(2_600), idem...).Status, "same key, other body")
		assert.Equal(t, start-2_500, e.balance(a.Merchant.ID), "debited once")

		// Reads: by the read token; the secret-key API sees the same withdrawal.
		r = e.do(http.MethodGet, base+"/"+id, "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "pending", r.JSON(t)["status"])
		r = e.do(http.MethodGet, base+"?status=pending", "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Len(t, r.JSON(t)["data"], 1)
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+id, a.SecretKey, nil).Status)
		// The configuration path is not a withdrawal id.
		r = e.do(http.MethodGet, base+"/config", "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.NotNil(t, r.JSON(t)["backendWalletAddress"])

		// Merchant B's token sees nothing of A's; B's own path does not find A's withdrawal.
		bTok := e.token(b.Merchant.ID, dashauth.ScopeWrite)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodGet, base+"/"+id, "", nil, bearerHeader(bTok)...).Status)
		bBase := "/v1/merchants/" + b.Merchant.ID.String() + "/withdrawals/"
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodGet, bBase+id, "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, bBase+id+"/cancel", "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, bBase+"nope/cancel", "", nil, bearerHeader(bTok)...).Status)

		// Cancel: read token refused; then restored exactly once, replayed with its key; twice is 409.
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base+"/"+id+"/cancel", "", nil, bearerHeader(read)...).Status)
		cancel := append(bearerHeader(write), "Idempotency-Key", "dash-c-1")
		r = e.do(http.MethodPost, base+"/"+id+"/cancel", "", nil, cancel...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "cancelled", r.JSON(t)["status"])
		assert.Equal(t, start, e.balance(a.Merchant.ID), "restored")
		replay = e.do(http.MethodPost, base+"/"+strings.ToUpper(id)+"/cancel", "", nil, cancel...)
		require.Equal(t, http.StatusOK, replay.Status, "a retry spelling the id in upper case is the same request")
		assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
		// The same key on another withdrawal is another request: 409, never the first's replay.
		r = e.do(http.MethodPost, base, "", withdrawal(1_000), bearerHeader(write)...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		other := r.JSON(t)["id"].(string)
		r = e.do(http.MethodPost, base+"/"+other+"/cancel", "", nil, cancel...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "idempotency_key_reused", code)
		r = e.do(http.MethodGet, base+"/"+other, "", nil, bearerHeader(read)...)
		assert.Equal(t, "pending", r.JSON(t)["status"])
		assert.Equal(t, http.StatusOK, e.do(http.MethodPost, base+"/"+other+"/cancel", "", nil, bearerHeader(write)...).Status)

		r = e.do(http.MethodPost, base+"/"+id+"/cancel", "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "invalid_state", code)
		assert.Equal(t, start, e.balance(a.Merchant.ID), "restored once")

		// Withdrawals switched off from the dashboard: 403 withdrawals_disabled.
		r = e.do(http.MethodPatch, base+"/config", "", map[string]any{"withdrawalsEnabled": false}, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		r = e.do(http.MethodPost, base, "", withdrawal(2_500), bearerHeader(write)...)
		require.Equal(t, http.StatusForbidden, r.Status)
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "withdrawals_disabled", code)
	})
}

// Secret keys from the dashboard: listed by prefix (never the key), created with the key shown
// once and working at once, revoked (then refused by the secret-key API), another merchant's
// key unknown.
func TestDashboardAPIKeys(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{name: "A"})
		b := e.merchant(merchantOpts{name: "B"})
		read, write := e.token(a.Merchant.ID, dashauth.ScopeRead), e.token(a.Merchant.ID, dashauth.ScopeWrite)
		base := "/v1/merchants/" + a.Merchant.ID.String() + "/api-keys"

		// Keys are developers' business (developers:read): a viewer (an older read token) sees none.
		r := e.do(http.MethodGet, base, "", nil, bearerHeader(read)...)
		require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
		r = e.do(http.MethodGet, base, "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		keys := r.JSON(t)["data"].([]any)
		require.Len(t, keys, 1)
		assert.Equal(t, a.KeyPrefix, keys[0].(map[string]any)["prefix"])
		assert.NotContains(t, string(r.Body), a.SecretKey)

		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base, "", nil, bearerHeader(read)...).Status)
		// Keys are made in test mode unless the body says live (and the token acts live); each
		// mode's token lists and revokes its own mode's keys.
		r = e.do(http.MethodPost, base, "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		testKey := r.JSON(t)
		assert.Equal(t, "test", testKey["key"].(map[string]any)["mode"])
		assert.True(t, strings.HasPrefix(testKey["secretKey"].(string), "sk_test_"))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		testTok := e.modeToken(a.Merchant.ID, domain.ModeTest, dashauth.ScopeWrite)
		r = e.do(http.MethodPost, base, "", map[string]any{"mode": "live"}, bearerHeader(testTok)...)
		require.Equal(t, http.StatusForbidden, r.Status, "a test-mode token never makes a live key: %s", r.Body)
		r = e.do(http.MethodGet, base, "", nil, bearerHeader(testTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		require.Len(t, r.JSON(t)["data"], 1, "test mode lists its own key only")
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, base+"/"+keys[0].(map[string]any)["id"].(string), "", nil, bearerHeader(testTok)...).Status,
			"a live key is unknown to a test-mode token")
		r = e.do(http.MethodDelete, base+"/"+testKey["key"].(map[string]any)["id"].(string), "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, "the live token that made a test key revokes it: %s", r.Body)

		r = e.do(http.MethodPost, base, "", map[string]any{"mode": "live"}, bearerHeader(write)...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		created := r.JSON(t)
		assert.True(t, strings.HasPrefix(created["secretKey"].(string), "sk_live_"))
		secret := created["secretKey"].(string)
		newKey := created["key"].(map[string]any)
		assert.True(t, strings.HasPrefix(secret, newKey["prefix"].(string)))
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/external/secretkey-auth/payments", secret, nil).Status, "the new key works")
		r = e.do(http.MethodGet, base, "", nil, bearerHeader(write)...)
		assert.Len(t, r.JSON(t)["data"], 3, "a live token lists (and may revoke) the keys of both modes: the first, the test one and the new one")
		assert.NotContains(t, string(r.Body), secret, "the key is shown once")

		// B cannot revoke A's key, on its own path or on A's.
		bTok := e.token(b.Merchant.ID, dashauth.ScopeWrite)
		keyID := newKey["id"].(string)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, "/v1/merchants/"+b.Merchant.ID.String()+"/api-keys/"+keyID, "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodDelete, base+"/"+keyID, "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodDelete, base+"/"+keyID, "", nil, bearerHeader(read)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, base+"/"+uuid.NewString(), "", nil, bearerHeader(write)...).Status)

		r = e.do(http.MethodDelete, base+"/"+keyID, "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.NotNil(t, r.JSON(t)["revokedAt"])
		assert.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/external/secretkey-auth/payments", secret, nil).Status, "revoked")
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/external/secretkey-auth/payments", a.SecretKey, nil).Status, "the other key still works")
		again := e.do(http.MethodDelete, base+"/"+keyID, "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, again.Status)
		assert.Equal(t, r.JSON(t)["revokedAt"], again.JSON(t)["revokedAt"], "revoking twice changes nothing")
	})
}

// Webhook endpoints from the dashboard: created (secret once; unsafe URLs refused), listed,
// rotated, their delivery log read, an event redelivered, deleted; another merchant's endpoint
// and event are unknown.
func TestDashboardWebhooks(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{name: "A"})
		b := e.merchant(merchantOpts{name: "B"})
		read, write := e.token(a.Merchant.ID, dashauth.ScopeRead), e.token(a.Merchant.ID, dashauth.ScopeWrite)
		base := "/v1/merchants/" + a.Merchant.ID.String() + "/webhooks"
		require.Equal(t, http.StatusForbidden, e.do(http.MethodGet, base, "", nil, bearerHeader(read)...).Status, "developers:read: not a viewer's")

		// (http itself is allowed on the embedded default; tested in the webhooks package.)
		for _, u := range []string{"https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/x"} {
			r := e.do(http.MethodPost, base, "", map[string]any{"url": u}, bearerHeader(write)...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", u, r.Body)
			_, _, param := r.errorFields(t)
			assert.Equal(t, "url", param)
		}
		assert.Equal(t, http.StatusBadRequest, e.do(http.MethodPost, base, "", map[string]any{"url": "https://93.184.215.14/hook", "events": []string{"payment.nope"}}, bearerHeader(write)...).Status)
		body := map[string]any{"url": "https://93.184.215.14/hook", "events": []string{"payment.created", "payment.completed"}}
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base, "", body, bearerHeader(read)...).Status)
		r := e.do(http.MethodPost, base, "", body, bearerHeader(write)...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		created := r.JSON(t)
		secret := created["secret"].(string)
		assert.True(t, strings.HasPrefix(secret, "whsec_"))
		ep := created["endpoint"].(map[string]any)
		epID := ep["id"].(string)
		assert.Len(t, ep["events"], 2)

		r = e.do(http.MethodGet, base, "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Len(t, r.JSON(t)["data"], 1)
		assert.NotContains(t, string(r.Body), secret)

		// An event for A: its delivery is in the log; redelivered with the same event id.
		e.createPayment(a.SecretKey, payment(2500))
		r = e.do(http.MethodGet, base+"/deliveries", "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		ds := r.JSON(t)["data"].([]any)
		require.Len(t, ds, 1)
		eventID := ds[0].(map[string]any)["eventId"].(string)
		assert.Equal(t, epID, ds[0].(map[string]any)["endpointId"])
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base+"/events/"+eventID+"/redeliver", "", nil, bearerHeader(read)...).Status)
		// Still pending (no dispatcher runs here): redelivering makes it due, never doubles it.
		for range 3 {
			r = e.do(http.MethodPost, base+"/events/"+eventID+"/redeliver?endpointId="+epID, "", nil, bearerHeader(write)...)
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			assert.Len(t, r.JSON(t)["data"], 1)
		}
		r = e.do(http.MethodGet, base+"/deliveries?eventId="+eventID+"&limit=10", "", nil, bearerHeader(write)...)
		assert.Len(t, r.JSON(t)["data"], 1, "one pending delivery per endpoint and event")
		r = e.do(http.MethodGet, base+"/deliveries?eventId=evt%00x", "", nil, bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status, "NUL in a parameter: 400, not the database's 500")
		r = e.do(http.MethodPost, base+"/events/evt%00x/redeliver", "", nil, bearerHeader(write)...)
		assert.Equal(t, http.StatusBadRequest, r.Status)

		// B: its own paths do not find A's endpoint or event; A's paths are forbidden.
		bTok := e.token(b.Merchant.ID, dashauth.ScopeWrite)
		bBase := "/v1/merchants/" + b.Merchant.ID.String() + "/webhooks"
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, bBase+"/events/"+eventID+"/redeliver", "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodPost, bBase+"/"+epID+"/rotate-secret", "", nil, bearerHeader(bTok)...).Status)
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, bBase+"/"+epID, "", nil, bearerHeader(bTok)...).Status)
		r = e.do(http.MethodGet, bBase+"/deliveries", "", nil, bearerHeader(bTok)...)
		assert.Len(t, r.JSON(t)["data"], 0)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodGet, base+"/deliveries", "", nil, bearerHeader(bTok)...).Status)

		r = e.do(http.MethodPost, base+"/"+epID+"/rotate-secret", "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		rotated := r.JSON(t)
		assert.NotEqual(t, secret, rotated["secret"])
		assert.NotNil(t, rotated["endpoint"].(map[string]any)["secretRotationEndsAt"])
		// A second rotation during the overlap would drop the secret the receiver holds: 409.
		r = e.do(http.MethodPost, base+"/"+epID+"/rotate-secret", "", nil, bearerHeader(write)...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "invalid_state", code)

		// A method the spec's path lacks is 405 before any handler or credential check (Echo
		// alone would run DELETE …/webhooks/{endpointId} with endpointId "deliveries").
		r = e.do(http.MethodDelete, base+"/deliveries", "", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, r.Status, string(r.Body))
		assert.Contains(t, r.Header.Get("Allow"), "GET")

		assert.Equal(t, http.StatusForbidden, e.do(http.MethodDelete, base+"/"+epID, "", nil, bearerHeader(read)...).Status)
		assert.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/"+epID, "", nil, bearerHeader(write)...).Status)
		// At most 16 endpoints (deleted ones not counted).
		for i := range 16 {
			r = e.do(http.MethodPost, base, "", map[string]any{"url": "https://93.184.215.14/hook/" + strconv.Itoa(i)}, bearerHeader(write)...)
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		}
		r = e.do(http.MethodPost, base, "", map[string]any{"url": "https://93.184.215.14/hook/17"}, bearerHeader(write)...)
		require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "limit_reached", code)
		for _, ep := range e.do(http.MethodGet, base, "", nil, bearerHeader(write)...).JSON(t)["data"].([]any) {
			id := ep.(map[string]any)["id"].(string)
			require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/"+id, "", nil, bearerHeader(write)...).Status)
		}
		assert.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, base+"/"+epID, "", nil, bearerHeader(write)...).Status)
		r = e.do(http.MethodGet, base, "", nil, bearerHeader(write)...)
		assert.Len(t, r.JSON(t)["data"], 0, "deleted endpoints are not listed")
		r = e.do(http.MethodGet, base+"/deliveries?endpointId="+epID, "", nil, bearerHeader(write)...)
		assert.Len(t, r.JSON(t)["data"], 1, "their delivery log stays")
	})
}

// Tokens of the external OIDC issuer over HTTP: the merchant claim may list several merchants;
// every refusal (audience, expiry, not-before, no merchant, no scope, unsigned, signed by a key
// the issuer does not publish, an issuer nobody configured) is 401 invalid_token; a read scope
// cannot write.
func TestDashboardOIDCTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{name: "A"})
		b := e.merchant(merchantOpts{name: "B"})
		c := e.merchant(merchantOpts{name: "C"})
		both := e.idp.token(t, []string{a.Merchant.ID.String(), b.Merchant.ID.String()}, "read write", nil)
		for _, m := range []uuid.UUID{a.Merchant.ID, b.Merchant.ID} {
			r := e.do(http.MethodGet, "/v1/merchants/"+m.String()+"/balance", "", nil, bearerHeader(both)...)
			assert.Equal(t, http.StatusOK, r.Status, string(r.Body))
		}
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodGet, "/v1/merchants/"+c.Merchant.ID.String()+"/balance", "", nil, bearerHeader(both)...).Status)
		readOnly := e.idp.token(t, []string{a.Merchant.ID.String()}, "read", nil)
		base := "/v1/merchants/" + a.Merchant.ID.String()
		assert.Equal(t, http.StatusOK, e.do(http.MethodGet, base+"/withdrawals", "", nil, bearerHeader(readOnly)...).Status)
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodGet, base+"/api-keys", "", nil, bearerHeader(readOnly)...).Status, "read is a viewer")
		assert.Equal(t, http.StatusForbidden, e.do(http.MethodPost, base+"/api-keys", "", nil, bearerHeader(readOnly)...).Status)

		ids := []string{a.Merchant.ID.String()}
		now := time.Now()
		other := newOIDCProvider(t) // a key and an issuer nobody configured
		refused := map[string]string{
			"wrong audience":           e.idp.token(t, ids, "read", func(c jwt.MapClaims) { c["aud"] = "another-app" }),
			"expired":                  e.idp.token(t, ids, "read", func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }),
			"no expiry":                e.idp.token(t, ids, "read", func(c jwt.MapClaims) { delete(c, "exp") }),
			"not yet valid":            e.idp.token(t, ids, "read", func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }),
			"no merchant":              e.idp.token(t, ids, "read", func(c jwt.MapClaims) { delete(c, oidcMerchantClaim) }),
			"no scope":                 e.idp.token(t, ids, "read", func(c jwt.MapClaims) { c["scope"] = "openid profile" }),
			"other issuer":             other.token(t, ids, "read", nil),
			"issuer's name, other key": other.token(t, ids, "read", func(c jwt.MapClaims) { c["iss"] = e.idp.srv.URL }),
		}
		unsigned := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": e.idp.srv.URL, "aud": oidcAudience,
			"exp": now.Add(time.Hour).Unix(), "scope": "read write", oidcMerchantClaim: ids})
		none, err := unsigned.SignedString(jwt.UnsafeAllowNoneSignatureType)
		require.NoError(t, err)
		refused["alg none"] = none
		for name, tok := range refused {
			r := e.do(http.MethodGet, base+"/balance", "", nil, bearerHeader(tok)...)
			assert.Equal(t, http.StatusUnauthorized, r.Status, name)
			code, typ, _ := r.errorFields(t)
			assert.Equal(t, "invalid_token", code, name)
			assert.Equal(t, "authentication_error", typ, name)
		}
	})
}
