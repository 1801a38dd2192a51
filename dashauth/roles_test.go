package dashauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Service tokens carry a role (and the older scope beside it); a token with only the older
// scope maps read to viewer and write to admin; a person's token names the user, the session
// and the second factor's time, and never a merchant or a role.
func TestIssuerRolesAndPersons(t *testing.T) {
	ctx := context.Background()
	a, mid := newIssuer(t, testdb.Backends()[0])
	iss := a.Tokens
	for _, r := range []domain.Role{domain.RoleViewer, domain.RoleDeveloper, domain.RoleAdmin, domain.RoleOwner} {
		tok, _, err := iss.MintService(ctx, mid, domain.ModeLive, r, time.Minute)
		require.NoError(t, err)
		p, err := iss.Verify(ctx, tok)
		require.NoError(t, err)
		assert.Equal(t, dashauth.PrincipalService, p.Kind)
		assert.Equal(t, r, p.Role)
		assert.True(t, p.ActsFor(mid))
		assert.Equal(t, mid.String(), p.Subject)
		c := jwt.MapClaims{}
		_, _, err = jwt.NewParser().ParseUnverified(tok, c)
		require.NoError(t, err)
		assert.Equal(t, string(r), c["role"])
		want := "read"
		if r.Includes(domain.RoleAdmin) {
			want = "read write"
		}
		assert.Equal(t, want, c["scope"], "the older scope, for a rolled-back deployment")
	}
	_, _, err := iss.MintService(ctx, mid, domain.ModeLive, "root", time.Minute)
	assert.ErrorIs(t, err, dashauth.ErrBadRole)
	for scope, role := range map[dashauth.Scope]domain.Role{dashauth.ScopeRead: domain.RoleViewer, dashauth.ScopeWrite: domain.RoleAdmin} {
		tok, _, err := iss.MintMode(ctx, mid, domain.ModeTest, scope, time.Minute)
		require.NoError(t, err)
		p, err := iss.Verify(ctx, tok)
		require.NoError(t, err)
		assert.Equal(t, role, p.Role, scope)
	}
	assert.Equal(t, domain.RoleViewer, dashauth.ScopeRole("read"))
	assert.Equal(t, domain.RoleAdmin, dashauth.ScopeRole("read write"))
	assert.Equal(t, domain.RoleAdmin, dashauth.ScopeRole("write read"))
	assert.Equal(t, domain.Role(""), dashauth.ScopeRole("openid profile"))

	uid, sid := uuid.New(), uuid.New()
	sfa := time.Now().Add(-time.Minute).Truncate(time.Second)
	tok, _, err := iss.MintPerson(ctx, uid, "ann@example.com", sid, domain.ModeLive, &sfa, time.Minute)
	require.NoError(t, err)
	p, err := iss.Verify(ctx, tok)
	require.NoError(t, err)
	assert.Equal(t, dashauth.PrincipalPerson, p.Kind)
	assert.Equal(t, uid, p.UserID)
	assert.Equal(t, sid, p.SessionID)
	assert.Equal(t, "ann@example.com", p.Email)
	assert.Equal(t, domain.ModeLive, p.Mode)
	require.NotNil(t, p.SecondFactorAt)
	assert.True(t, sfa.Equal(*p.SecondFactorAt))
	assert.Empty(t, p.MerchantIDs)
	assert.Empty(t, p.Role)
	assert.False(t, p.May(mid, dashauth.ScopeRead), "a person's access is not in the token")

	tok, _, err = iss.MintPerson(ctx, uid, "ann@example.com", sid, domain.ModeTest, nil, time.Minute)
	require.NoError(t, err)
	p, err = iss.Verify(ctx, tok)
	require.NoError(t, err)
	assert.Nil(t, p.SecondFactorAt)
	assert.Equal(t, domain.ModeTest, p.Mode)
	_, _, err = iss.MintPerson(ctx, uid, "ann@example.com", uuid.Nil, domain.ModeTest, nil, time.Minute)
	assert.Error(t, err, "no session")

	// A person's token speaks for the person only: one naming merchants, a role or a scope, or
	// without a user or a session, is not one the issuer makes.
	admin := "admin"
	for name, edit := range map[string]func(*dashauth.Claims){
		"merchants":  func(c *dashauth.Claims) { c.MerchantIDs = []string{mid.String()} },
		"role":       func(c *dashauth.Claims) { c.Role = &admin },
		"scope":      func(c *dashauth.Claims) { c.Scope = "read write" },
		"no session": func(c *dashauth.Claims) { c.SessionID = "" },
		"bad user":   func(c *dashauth.Claims) { c.Subject = "user:nobody" },
		"nil user":   func(c *dashauth.Claims) { c.Subject = "user:" + uuid.Nil.String() },
	} {
		tok, err := dashauth.SignClaims(iss, func(c *dashauth.Claims) {
			c.Subject, c.SessionID = "user:"+uid.String(), sid.String()
			edit(c)
		})
		require.NoError(t, err)
		_, err = iss.Verify(ctx, tok)
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, name)
	}
	// A service token with a role claim naming no role is refused; with neither role nor scope too.
	root := "root"
	for name, edit := range map[string]func(*dashauth.Claims){
		"unknown role":       func(c *dashauth.Claims) { c.Role = &root },
		"no role nor scope":  func(c *dashauth.Claims) {},
		"scope of no access": func(c *dashauth.Claims) { c.Scope = "openid" },
	} {
		tok, err := dashauth.SignClaims(iss, func(c *dashauth.Claims) {
			c.Subject, c.MerchantIDs = mid.String(), []string{mid.String()}
			edit(c)
		})
		require.NoError(t, err)
		_, err = iss.Verify(ctx, tok)
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, name)
	}
}

// The external issuer's role claim (configurable, paymentsd_role by default) wins over its
// scope; a token without it keeps the scope's role; a role claim naming no role is refused.
func TestOIDCRoleClaim(t *testing.T) {
	ctx := context.Background()
	rk := rsaKey(t, "rsa-1")
	p := newIDP(t, rk)
	o, _ := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))
	m := uuid.New()
	verify := func(edit func(jwt.MapClaims)) (dashauth.Principal, error) {
		c := p.claims(m.String(), "read")
		edit(c)
		return o.Verify(ctx, rk.sign(t, c))
	}
	pr, err := verify(func(c jwt.MapClaims) { c["paymentsd_role"] = "developer" })
	require.NoError(t, err)
	assert.Equal(t, domain.RoleDeveloper, pr.Role, "the role claim wins over the scope")
	assert.Equal(t, dashauth.PrincipalService, pr.Kind)
	assert.Equal(t, "user-1", pr.Subject)
	pr, err = verify(func(c jwt.MapClaims) { c["paymentsd_role"] = "owner"; delete(c, "scope") })
	require.NoError(t, err)
	assert.Equal(t, domain.RoleOwner, pr.Role, "a role needs no scope")
	pr, err = verify(func(c jwt.MapClaims) {})
	require.NoError(t, err)
	assert.Equal(t, domain.RoleViewer, pr.Role, "no role claim: the scope's role")
	for name, v := range map[string]any{"unknown": "root", "empty": "", "number": 3, "null": nil, "list": []any{"admin"}} {
		_, err := verify(func(c jwt.MapClaims) { c["paymentsd_role"] = v })
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, name)
	}

	custom, err := dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: p.srv.URL, Audience: testAudience, MerchantClaim: testMerchantClaim, RoleClaim: "https://example/role"})
	require.NoError(t, err)
	t.Cleanup(custom.Close)
	c := p.claims(m.String(), "read")
	c["https://example/role"] = "admin"
	c["paymentsd_role"] = "owner" // not the configured claim: ignored
	pr, err = custom.Verify(ctx, rk.sign(t, c))
	require.NoError(t, err)
	assert.Equal(t, domain.RoleAdmin, pr.Role)
}
