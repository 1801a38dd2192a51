package dashauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
)

// Tokens are routed by their (unverified) iss to the built-in or the external issuer, which then
// verifies them fully; a token of neither is refused; the external issuer may not take the
// built-in one's name.
func TestVerifiers(t *testing.T) {
	ctx := context.Background()
	a, mid := newIssuer(t, "sqlite")
	k := edKey(t, "ed-1")
	p := newIDP(t, k)
	o, _ := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))

	v, err := dashauth.NewVerifiers(ctx, a.Tokens, o)
	require.NoError(t, err)
	builtIn, _, err := a.Tokens.Mint(ctx, mid, dashauth.ScopeWrite, time.Minute)
	require.NoError(t, err)
	pr, err := v.Verify(ctx, builtIn)
	require.NoError(t, err)
	assert.True(t, pr.May(mid, dashauth.ScopeWrite))
	other := uuid.New()
	pr, err = v.Verify(ctx, k.sign(t, p.claims([]string{other.String()}, "read")))
	require.NoError(t, err)
	assert.True(t, pr.May(other, dashauth.ScopeRead))
	assert.False(t, pr.May(other, dashauth.ScopeWrite))

	refused := func(what, raw string) {
		t.Helper()
		_, err := v.Verify(ctx, raw)
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, what)
	}
	c := p.claims(other.String(), "read")
	c["iss"] = "https://nobody.example"
	refused("an issuer of neither", k.sign(t, c))
	delete(c, "iss")
	refused("no issuer", k.sign(t, c))
	refused("garbage", "not.a.token")
	name, err := a.Tokens.Name(ctx)
	require.NoError(t, err)
	c["iss"] = name
	refused("the built-in issuer's name on a token of the external one's key", k.sign(t, c))
	c["iss"] = p.srv.URL
	c["aud"] = dashauth.Audience
	refused("routed, then verified: the built-in issuer's audience", k.sign(t, c))

	// Either alone.
	only, err := dashauth.NewVerifiers(ctx, a.Tokens, nil)
	require.NoError(t, err)
	_, err = only.Verify(ctx, builtIn)
	assert.NoError(t, err)
	_, err = only.Verify(ctx, k.sign(t, p.claims(other.String(), "read")))
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "no external issuer configured")
	only, err = dashauth.NewVerifiers(ctx, nil, o)
	require.NoError(t, err)
	_, err = only.Verify(ctx, builtIn)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "no built-in issuer")
	_, err = dashauth.NewVerifiers(ctx, nil, nil)
	assert.Error(t, err)

	// The external issuer named as the built-in one.
	same := &dashauth.Issuer{Store: a.Tokens.Store, Sealer: a.Tokens.Sealer, Issuer: p.srv.URL, Audience: a.Tokens.Audience, Now: time.Now}
	_, err = dashauth.NewVerifiers(ctx, same, o)
	assert.ErrorIs(t, err, dashauth.ErrOIDCConfig)
}
