package dashauth_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
)

func newIssuer(t testing.TB, backend string) (*app.App, uuid.UUID) {
	cfg := onchaintest.Config(testdb.URL(t, backend), config.Chains{Devnet: "off", ServeUnwatched: true, Passive: true}, time.Hour, 15*time.Minute)
	cfg.Webhooks.SecretsKey = strings.Repeat("ab", 32)
	a, err := app.Open(context.Background(), cfg, onchaintest.Logger("DASHAUTH_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	m, err := a.Merchants.Create(context.Background(), merchants.CreateInput{Name: "Dash", ShortName: "Dash"})
	require.NoError(t, err)
	return a, m.Merchant.ID
}

// Tokens of the built-in issuer verify for their merchant and scope; every forgery, expiry,
// wrong issuer or audience, and algorithm confusion is refused; a rotation keeps the tokens of
// the previous key valid and publishes both keys.
func TestBuiltInIssuer(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			a, mid := newIssuer(t, backend)
			iss := a.Tokens
			_, _, err := iss.Mint(ctx, mid, dashauth.ScopeRead, 0)
			assert.ErrorIs(t, err, dashauth.ErrBadTTL)
			tok, exp, err := iss.Mint(ctx, mid, dashauth.ScopeRead, dashauth.DefaultTTL)
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now().Add(dashauth.DefaultTTL), exp, 2*time.Second)
			p, err := iss.Verify(ctx, tok)
			require.NoError(t, err)
			assert.True(t, p.May(mid, dashauth.ScopeRead))
			assert.False(t, p.May(mid, dashauth.ScopeWrite), "a read token cannot write")
			assert.False(t, p.May(uuid.New(), dashauth.ScopeRead), "another merchant")
			_, _, err = iss.Mint(ctx, uuid.New(), dashauth.ScopeRead, time.Minute)
			assert.Error(t, err, "no such merchant")

			refused := func(what, raw string) {
				t.Helper()
				_, err := iss.Verify(ctx, raw)
				assert.ErrorIs(t, err, dashauth.ErrInvalidToken, what)
			}
			parts := strings.Split(tok, ".")
			refused("a tampered signature", parts[0]+"."+parts[1]+"."+strings.Repeat("A", len(parts[2])))
			refused("garbage", "not.a.token")
			claims := dashauth.Claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: "https://pay.example.test", Subject: mid.String(),
				Audience: jwt.ClaimStrings{dashauth.Audience}, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
				IssuedAt: jwt.NewNumericDate(time.Now())}, Scope: "read write", MerchantIDs: []string{mid.String()}}
			none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
			require.NoError(t, err)
			refused("alg none", none)
			jwks, err := iss.JWKS(ctx)
			require.NoError(t, err)
			pub, err := base64.RawURLEncoding.DecodeString(jwks["keys"][0].X)
			require.NoError(t, err)
			hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
			hs.Header["kid"] = jwks["keys"][0].Kid
			confused, err := hs.SignedString(pub)
			require.NoError(t, err)
			refused("HS256 keyed with the public key", confused)
			_, other, _ := ed25519.GenerateKey(nil)
			forged := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
			forged.Header["kid"] = jwks["keys"][0].Kid
			f, err := forged.SignedString(other)
			require.NoError(t, err)
			refused("another key", f)

			// Expired (past the leeway), not yet valid, another issuer, another audience.
			variant := func(issuer, audience string, now func() time.Time) *dashauth.Issuer {
				return &dashauth.Issuer{Store: iss.Store, Sealer: iss.Sealer, Issuer: issuer, DefaultIssuer: iss.DefaultIssuer, Audience: audience, Now: now}
			}
			later := variant("", iss.Audience, func() time.Time { return time.Now().Add(dashauth.DefaultTTL + dashauth.Leeway + time.Minute) })
			_, err = later.Verify(ctx, tok)
			assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "expired")
			early := variant("", iss.Audience, func() time.Time { return time.Now().Add(-10 * time.Minute) })
			_, err = early.Verify(ctx, tok)
			assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "not yet valid")
			otherIss := variant("https://elsewhere.example", iss.Audience, time.Now)
			_, err = otherIss.Verify(ctx, tok)
			assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "another issuer")
			otherAud := variant("", "someone-else", time.Now)
			_, err = otherAud.Verify(ctx, tok)
			assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "another audience")

			// Rotation: the old token still verifies; both keys are published.
			_, err = iss.Rotate(ctx)
			require.NoError(t, err)
			w, _, err := iss.Mint(ctx, mid, dashauth.ScopeWrite, time.Minute)
			require.NoError(t, err)
			pw, err := iss.Verify(ctx, w)
			require.NoError(t, err)
			assert.True(t, pw.May(mid, dashauth.ScopeWrite))
			_, err = iss.Verify(ctx, tok)
			assert.NoError(t, err, "a token of the previous key stays valid until it expires")
			jwks, err = iss.JWKS(ctx)
			require.NoError(t, err)
			assert.Len(t, jwks["keys"], 2)
		})
	}
}
