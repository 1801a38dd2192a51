package tests

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// roleToken mints a live-mode service token with a role, of the env's issuer (the external one
// says it in its role claim, paymentsd_role by default, without a scope).
func (e *env) roleToken(merchantID uuid.UUID, role domain.Role) string {
	e.t.Helper()
	if e.issuer == "oidc" {
		return e.idp.token(e.t, []string{merchantID.String()}, "", func(c jwt.MapClaims) {
			c["mode"], c["paymentsd_role"] = "live", string(role)
			delete(c, "scope")
		})
	}
	tok, _, err := e.app.Tokens.MintService(context.Background(), merchantID, domain.ModeLive, role, time.Minute)
	require.NoError(e.t, err)
	return tok
}

// Each role, by service token of either issuer, does what its permissions allow and is refused
// the rest with 403 forbidden: a viewer reads but neither withdraws nor sees keys, a developer
// makes keys but does not withdraw, an admin withdraws and changes settings, an owner does all.
func TestDashboardRoles(t *testing.T) {
	forEachBackendAndIssuer(t, func(t *testing.T, e *env) {
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		e.fund(a.SecretKey, 20_000)
		base := "/v1/merchants/" + a.Merchant.ID.String()
		forbidden := func(r response, what string) {
			t.Helper()
			require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", what, r.Body)
			code, typ, _ := r.errorFields(t)
			assert.Equal(t, "forbidden", code, what)
			assert.Equal(t, "permission_error", typ, what)
		}
		allowed := func(r response, status int, what string) {
			t.Helper()
			require.Equal(t, status, r.Status, "%s: %s", what, r.Body)
		}

		viewer := bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleViewer))
		allowed(e.do(http.MethodGet, base+"/withdrawals", "", nil, viewer...), http.StatusOK, "viewer lists withdrawals")
		allowed(e.do(http.MethodGet, base+"/balance", "", nil, viewer...), http.StatusOK, "viewer reads the balance")
		allowed(e.do(http.MethodGet, base+"/accepted-assets", "", nil, viewer...), http.StatusOK, "viewer reads settings")
		forbidden(e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), viewer...), "viewer withdraws")
		forbidden(e.do(http.MethodGet, base+"/api-keys", "", nil, viewer...), "viewer lists keys")
		forbidden(e.do(http.MethodPatch, base+"/withdrawals/config", "", map[string]any{"chainIds": []string{"eip155:8453"}}, viewer...), "viewer changes settings")

		dev := bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleDeveloper))
		allowed(e.do(http.MethodPost, base+"/api-keys", "", nil, dev...), http.StatusCreated, "developer makes a key")
		allowed(e.do(http.MethodGet, base+"/webhooks", "", nil, dev...), http.StatusOK, "developer lists webhooks")
		forbidden(e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), dev...), "developer withdraws")
		forbidden(e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"default": true}, dev...), "developer changes settings")

		admin := bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleAdmin))
		r := e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), admin...)
		allowed(r, http.StatusCreated, "admin withdraws")
		wid := r.JSON(t)["id"].(string)
		allowed(e.do(http.MethodPut, base+"/accepted-assets", "", map[string]any{"default": true}, admin...), http.StatusOK, "admin changes settings")
		allowed(e.do(http.MethodPost, base+"/api-keys", "", nil, admin...), http.StatusCreated, "admin makes a key")

		owner := bearerHeader(e.roleToken(a.Merchant.ID, domain.RoleOwner))
		allowed(e.do(http.MethodPost, base+"/withdrawals/"+wid+"/cancel", "", nil, owner...), http.StatusOK, "owner cancels")
		allowed(e.do(http.MethodGet, base+"/api-keys", "", nil, owner...), http.StatusOK, "owner lists keys")
		allowed(e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), owner...), http.StatusCreated, "owner withdraws")
	})
}

// Persons, by the built-in issuer's person tokens: the role is the membership of the path's
// merchant, read at each request — a changed role counts at once, a removed membership is 403,
// a disabled user is 401; a person with no second factor on a merchant not requiring one is not
// asked for one.
func TestDashboardPersonRoles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.merchant(merchantOpts{deposits: true, withdrawals: true, name: "A"})
		b := e.merchant(merchantOpts{name: "B"})
		e.fund(a.SecretKey, 20_000)
		base := "/v1/merchants/" + a.Merchant.ID.String()
		u, err := e.app.People.CreateUser(ctx, "Ann@Example.com", a.Merchant.ID, domain.RoleViewer, "")
		require.NoError(t, err)
		tok := e.personToken(u.User.ID, "ann@example.com")
		ann := bearerHeader(tok)

		require.Equal(t, http.StatusOK, e.do(http.MethodGet, base+"/withdrawals", "", nil, ann...).Status)
		r := e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), ann...)
		require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "forbidden", code)
		r = e.do(http.MethodGet, "/v1/merchants/"+b.Merchant.ID.String()+"/balance", "", nil, ann...)
		assert.Equal(t, http.StatusForbidden, r.Status, "not a member of B: %s", r.Body)

		// Made an admin: the same token withdraws now (no second factor anywhere: none asked).
		require.NoError(t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetMembership(u.User.ID, a.Merchant.ID, domain.RoleAdmin, time.Now())
		}))
		r = e.do(http.MethodPost, base+"/withdrawals", "", withdrawal(2_500), ann...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))

		// The membership removed: 403 at once.
		removeMemberships(t, e, u.User.ID)
		r = e.do(http.MethodGet, base+"/withdrawals", "", nil, ann...)
		require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "forbidden", code)

		// Disabled: 401 at once, whatever the merchant.
		require.NoError(t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetMembership(u.User.ID, a.Merchant.ID, domain.RoleOwner, time.Now())
		}))
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, base+"/withdrawals", "", nil, ann...).Status)
		require.NoError(t, e.app.People.Disable(ctx, "ann@example.com"))
		r = e.do(http.MethodGet, base+"/withdrawals", "", nil, ann...)
		require.Equal(t, http.StatusUnauthorized, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "invalid_token", code)

		// A person who does not exist: 401.
		ghost, _, err := e.app.Tokens.MintPerson(ctx, uuid.New(), "ghost@example.com", uuid.New(), domain.ModeLive, nil, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, base+"/withdrawals", "", nil, bearerHeader(ghost)...).Status)
	})
}

// removeMemberships deletes a user's memberships (the team's endpoints come with issue 22's
// team work; the test goes to the table).
func removeMemberships(t *testing.T, e *env, userID uuid.UUID) {
	t.Helper()
	db, err := e.app.Store.SQLDB()
	require.NoError(t, err)
	_, err = db.Exec("DELETE FROM memberships WHERE user_id = $1", userID.String()) // $1: both drivers
	require.NoError(t, err)
}

// personToken mints a person's access token in a new live session of theirs (the sessions' own
// sign-in is tested in auth_sessions_test.go).
func (e *env) personToken(userID uuid.UUID, email string) string {
	e.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	sid := uuid.New()
	require.NoError(e.t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertSession(store.Session{ID: sid, UserID: userID, RefreshTokenHash: sid.String(), Mode: domain.ModeLive,
			CreatedAt: now, LastUsedAt: now, ExpiresAt: now.Add(time.Hour)})
	}))
	tok, _, err := e.app.Tokens.MintPerson(ctx, userID, email, sid, domain.ModeLive, nil, time.Minute)
	require.NoError(e.t, err)
	return tok
}
