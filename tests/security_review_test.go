package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/webauthntest"
	"github.com/paymentsd/paymentsd/store"
)

// Regression tests of the security review of the merchant dashboard: a live key needs the admin
// role; changing one's second factors, and the team, need a recent second factor.

// tokenWithFactorAt mints a person's access token in a new live session whose second factor was
// given at sfa (nil: never) — a stale one stands for a stolen access token.
func tokenWithFactorAt(e *env, userID uuid.UUID, email string, sfa *time.Time) []string {
	e.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	sid := uuid.New()
	require.NoError(e.t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertSession(store.Session{ID: sid, UserID: userID, RefreshTokenHash: sid.String(), Mode: domain.ModeLive,
			CreatedAt: now, LastUsedAt: now, ExpiresAt: now.Add(time.Hour), SecondFactorAt: sfa})
	}))
	tok, _, err := e.app.Tokens.MintPerson(ctx, userID, email, sid, domain.ModeLive, sfa, time.Minute)
	require.NoError(e.t, err)
	return bearerHdr(tok)
}

// staleHour is a second factor given an hour ago: far older than RecentSecondFactor.
func staleHour() *time.Time { t := time.Now().Add(-time.Hour); return &t }

// passkeyUser makes a member of the merchant with role who signs in and registers a passkey
// (their only second factor); it answers the user's id and the authenticator.
func passkeyUser(e *env, merchantID uuid.UUID, email string, role domain.Role) (uuid.UUID, *webauthntest.Authenticator) {
	e.t.Helper()
	c, err := e.app.People.CreateUser(context.Background(), email, merchantID, role, testPassword)
	require.NoError(e.t, err)
	s := login(e, email, testPassword)
	require.Equal(e.t, http.StatusOK, s.res.Status, string(s.res.Body))
	au, err := webauthntest.New(passkeyOrigin)
	require.NoError(e.t, err)
	registerPasskey(e, s.access, au, "Key")
	return c.User.ID, au
}

// stepUpWithPasskey steps the session of hdr up with the authenticator: the new token's header.
func stepUpWithPasskey(e *env, hdr []string, au *webauthntest.Authenticator) []string {
	e.t.Helper()
	begin := e.do(http.MethodPost, "/v1/auth/step-up/passkey/begin", "", nil, hdr...)
	require.Equal(e.t, http.StatusOK, begin.Status, string(begin.Body))
	cred, err := au.Assert(begin.Body)
	require.NoError(e.t, err)
	fin := e.do(http.MethodPost, "/v1/auth/step-up/passkey/finish", "", map[string]any{"credential": json.RawMessage(cred)}, hdr...)
	require.Equal(e.t, http.StatusOK, fin.Status, string(fin.Body))
	return bearerHdr(fin.JSON(e.t)["accessToken"].(string))
}

func requireStepUp(t *testing.T, r response, what string) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", what, r.Body)
	code, typ, _ := r.errorFields(t)
	require.Equal(t, "step_up_required", code, what)
	require.Equal(t, "permission_error", typ, what)
}

// A developer — a person in a live session or a service token — makes test keys only: a live key
// can withdraw through the secret-key API, so it is 403 forbidden below admin. An admin (and an
// owner) still makes one.
func TestLiveKeyNeedsAdminRole(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		base := "/v1/merchants/" + a.Merchant.ID.String()
		live := map[string]any{"mode": "live"}
		refused := func(r response, who string) {
			t.Helper()
			require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", who, r.Body)
			code, typ, _ := r.errorFields(t)
			require.Equal(t, "forbidden", code, who)
			require.Equal(t, "permission_error", typ, who)
			require.Contains(t, r.JSON(t)["error"].(map[string]any)["message"], "admin role", who)
		}

		// The review's path: a developer signs in, switches the session to live, asks for a live key.
		_, err := e.app.People.CreateUser(context.Background(), "dev@example.com", a.Merchant.ID, domain.RoleDeveloper, testPassword)
		require.NoError(t, err)
		s := login(e, "dev@example.com", testPassword)
		require.Equal(t, http.StatusOK, s.res.Status, string(s.res.Body))
		r := e.auth("/v1/auth/refresh", map[string]string{"mode": "live"}, "Cookie", "paymentsd_refresh="+s.refresh)
		require.Equal(t, http.StatusOK, r.res.Status, string(r.res.Body))
		devPerson := bearerHdr(r.access)
		refused(e.do(http.MethodPost, base+"/api-keys", "", live, devPerson...), "developer person, live key")
		require.Equal(t, http.StatusCreated, e.do(http.MethodPost, base+"/api-keys", "", map[string]any{"mode": "test"}, devPerson...).Status,
			"a developer still makes test keys")

		devService := bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleDeveloper))
		refused(e.do(http.MethodPost, base+"/api-keys", "", live, devService...), "developer service token, live key")
		require.Equal(t, http.StatusCreated, e.do(http.MethodPost, base+"/api-keys", "", nil, devService...).Status, "default test key")

		// No live key was made by either developer.
		keys := e.do(http.MethodGet, base+"/api-keys", "", nil, bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleAdmin))...)
		require.Equal(t, http.StatusOK, keys.Status, string(keys.Body))
		var list struct {
			Data []struct{ Prefix, Mode string }
		}
		require.NoError(t, json.Unmarshal(keys.Body, &list))
		for _, k := range list.Data {
			if k.Prefix != a.Key.Prefix { // the merchant's first key, made by the operator
				require.Equal(t, "test", k.Mode, "a developer made a live key: %+v", k)
			}
		}

		for _, role := range []domain.Role{domain.RoleAdmin, domain.RoleOwner} {
			k := e.do(http.MethodPost, base+"/api-keys", "", live, bearerHeader(e.roleToken(a.Merchant.ID, role))...)
			require.Equal(t, http.StatusCreated, k.Status, "%s: %s", role, k.Body)
			require.Contains(t, k.JSON(t)["secretKey"], "sk_live_", role)
		}
	})
}

// A stolen access token (a session whose second factor is stale) cannot remove the person's
// passkey — which would turn step-up off for them — nor set up a TOTP of its own to step up with:
// 403 step_up_required. After a fresh step-up both work.
func TestSecondFactorChangesNeedRecentFactor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		e.fund(a.SecretKey, 20_000)
		uid, au := passkeyUser(e, a.Merchant.ID, "adm@example.com", domain.RoleAdmin)
		stale := tokenWithFactorAt(e, uid, "adm@example.com", staleHour())
		base := "/v1/merchants/" + a.Merchant.ID.String()

		requireStepUp(t, e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), stale...), "withdraw with a stale token")

		list := e.do(http.MethodGet, "/v1/auth/passkeys", "", nil, stale...)
		require.Equal(t, http.StatusOK, list.Status, string(list.Body))
		keyID := list.JSON(t)["data"].([]any)[0].(map[string]any)["id"].(string)
		requireStepUp(t, e.do(http.MethodDelete, "/v1/auth/passkeys/"+keyID, "", nil, stale...), "delete the passkey with a stale token")
		requireStepUp(t, e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, stale...), "enroll TOTP (passkey-only user) with a stale token")
		requireStepUp(t, e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": "123456"}, stale...), "confirm TOTP with a stale token")
		// A session that never gave a second factor is stale too.
		never := tokenWithFactorAt(e, uid, "adm@example.com", nil)
		requireStepUp(t, e.do(http.MethodDelete, "/v1/auth/passkeys/"+keyID, "", nil, never...), "delete the passkey without a factor")
		requireStepUp(t, e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, never...), "enroll TOTP without a factor")

		// Nothing changed: the passkey is there and step-up is still asked.
		list = e.do(http.MethodGet, "/v1/auth/passkeys", "", nil, stale...)
		require.Len(t, list.JSON(t)["data"], 1)
		requireStepUp(t, e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), stale...), "withdraw still asks for step-up")

		// With a fresh step-up (the passkey) the person sets up TOTP and removes the passkey.
		fresh := stepUpWithPasskey(e, stale, au)
		en := e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, fresh...)
		require.Equal(t, http.StatusOK, en.Status, string(en.Body))
		secret := en.JSON(t)["secret"].(string)
		cf := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": totpCode(t, secret, time.Now())}, fresh...)
		require.Equal(t, http.StatusOK, cf.Status, string(cf.Body))
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/v1/auth/passkeys/"+keyID, "", nil, fresh...).Status)
		require.Len(t, e.do(http.MethodGet, "/v1/auth/passkeys", "", nil, fresh...).JSON(t)["data"], 0)
	})
}

// A person without any second factor is not asked for one to set up the first.
func TestFirstSecondFactorNeedsNoStepUp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("new@example.com")
		s := login(e, "new@example.com", testPassword)
		require.Equal(t, http.StatusOK, s.res.Status, string(s.res.Body))
		en := e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, bearerHdr(s.access)...)
		require.Equal(t, http.StatusOK, en.Status, string(en.Body))
		secret := en.JSON(t)["secret"].(string)
		cf := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": totpCode(t, secret, time.Now())}, bearerHdr(s.access)...)
		require.Equal(t, http.StatusOK, cf.Status, string(cf.Body))
	})
}

// Team changes need a recent second factor: an owner with a passkey whose token is stale cannot
// invite (an owner, say), change a role, remove a member or revoke an invitation (403
// step_up_required); after a step-up each works.
func TestTeamChangesNeedRecentFactor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{name: "A"})
		base := "/v1/merchants/" + a.Merchant.ID.String()
		uid, au := passkeyUser(e, a.Merchant.ID, "own@example.com", domain.RoleOwner)
		stale := tokenWithFactorAt(e, uid, "own@example.com", staleHour())
		other := e.member(a.Merchant.ID, "viewer@example.com", domain.RoleViewer)

		// A pending invitation to revoke, made by a service token (never asked for a second factor).
		inv := e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "later@example.com", "role": "viewer"}, bearerHeader(e.teamToken(a.Merchant.ID))...)
		require.Equal(t, http.StatusCreated, inv.Status, string(inv.Body))
		invID := inv.JSON(t)["invitation"].(map[string]any)["id"].(string)

		requireStepUp(t, e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "mallory@evil.example", "role": "owner"}, stale...), "invite an owner")
		requireStepUp(t, e.do(http.MethodPatch, base+"/members/"+other.String(), "", map[string]any{"role": "owner"}, stale...), "change a role")
		requireStepUp(t, e.do(http.MethodDelete, base+"/members/"+other.String(), "", nil, stale...), "remove a member")
		requireStepUp(t, e.do(http.MethodDelete, base+"/invitations/"+invID, "", nil, stale...), "revoke an invitation")
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, base+"/members", "", nil, stale...).Status, "reading the team is not a change")

		fresh := stepUpWithPasskey(e, stale, au)
		r := e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": "second-owner@example.com", "role": "owner"}, fresh...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		r = e.do(http.MethodPatch, base+"/members/"+other.String(), "", map[string]any{"role": "developer"}, fresh...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/invitations/"+invID, "", nil, fresh...).Status)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/members/"+other.String(), "", nil, fresh...).Status)
	})
}
