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
)

// The external issuer's mode claim (named by OIDCConfig.ModeClaim, default "mode"): test or
// live, test when absent, anything else refused; and a crit header is refused.
func TestOIDCModeAndCrit(t *testing.T) {
	ctx := context.Background()
	k := edKey(t, "ed-1")
	p := newIDP(t, k)
	m := uuid.New()
	claims := func(mutate func(jwt.MapClaims)) jwt.MapClaims {
		c := p.claims([]string{m.String()}, "read write")
		mutate(c)
		return c
	}

	o, _ := newOIDC(t, p, time.Hour, time.Hour, time.Hour) // ModeClaim not set: "mode"
	require.NoError(t, o.Discover(ctx))
	mode := func(o *dashauth.OIDC, c jwt.MapClaims) (domain.Mode, error) {
		pr, err := o.Verify(ctx, k.sign(t, c))
		return pr.Mode, err
	}
	got, err := mode(o, claims(func(jwt.MapClaims) {}))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeTest, got, "no mode claim: test")
	got, err = mode(o, claims(func(c jwt.MapClaims) { c["mode"] = "live" }))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeLive, got)
	got, err = mode(o, claims(func(c jwt.MapClaims) { c["mode"] = "test" }))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeTest, got)
	for _, bad := range []any{"", "LIVE", "production", 1, false, nil, []string{"live"}} {
		_, err := mode(o, claims(func(c jwt.MapClaims) { c["mode"] = bad }))
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "mode %v", bad)
	}

	// crit, on an otherwise valid token.
	for _, crit := range []any{[]string{"exp"}, []string{}, "b64"} {
		tok := jwt.NewWithClaims(k.method, claims(func(jwt.MapClaims) {}))
		tok.Header["kid"] = k.kid
		tok.Header["crit"] = crit
		s, err := tok.SignedString(k.priv)
		require.NoError(t, err)
		_, err = o.Verify(ctx, s)
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "crit %v", crit)
	}

	// Another claim name: only it is read.
	const claim = "https://paymentsd.example/mode"
	named, err := dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: p.srv.URL, Audience: testAudience, MerchantClaim: testMerchantClaim,
		ModeClaim: claim})
	require.NoError(t, err)
	t.Cleanup(named.Close)
	require.NoError(t, named.Discover(ctx))
	got, err = mode(named, claims(func(c jwt.MapClaims) { c[claim] = "live"; c["mode"] = "test" }))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeLive, got)
	got, err = mode(named, claims(func(c jwt.MapClaims) { c["mode"] = "live" }))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeTest, got, "the default claim name is not read when another is configured")
	_, err = mode(named, claims(func(c jwt.MapClaims) { c[claim] = "sandbox" }))
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)

	// Through the iss routing, with the built-in issuer beside it.
	a, mid := newIssuer(t, "sqlite")
	v, err := dashauth.NewVerifiers(ctx, a.Tokens, o)
	require.NoError(t, err)
	live, _, err := a.Tokens.MintMode(ctx, mid, domain.ModeLive, dashauth.ScopeRead, time.Minute)
	require.NoError(t, err)
	pr, err := v.Verify(ctx, live)
	require.NoError(t, err)
	assert.Equal(t, domain.ModeLive, pr.Mode)
	pr, err = v.Verify(ctx, k.sign(t, claims(func(c jwt.MapClaims) { c["mode"] = "live" })))
	require.NoError(t, err)
	assert.Equal(t, domain.ModeLive, pr.Mode)
}
