package dashauth_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// signingKey is the built-in issuer's current key, opened as the issuer opens it.
func signingKey(t *testing.T, iss *dashauth.Issuer) (string, ed25519.PrivateKey) {
	t.Helper()
	keys, err := iss.Store.Read(context.Background()).SigningKeys(time.Now().Add(-dashauth.MaxTTL))
	require.NoError(t, err)
	for _, k := range keys {
		if k.RetiredAt == nil {
			seed, err := iss.Sealer.Open(k.PrivateSealed)
			require.NoError(t, err)
			return k.KID, ed25519.NewKeyFromSeed(seed)
		}
	}
	t.Fatal("no signing key")
	return "", nil
}

// Tokens signed with the issuer's real key, valid but for what each case changes, are refused
// when they live longer than MaxTTL, lack iat, expire more than MaxTTL ahead, carry a crit header
// or a mode other than test or live; the mode claim becomes the principal's mode.
func TestBuiltInIssuerLifetimeCritAndMode(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			a, mid := newIssuer(t, backend)
			iss := a.Tokens
			minted, _, err := iss.Mint(ctx, mid, dashauth.ScopeRead, time.Minute) // makes the key
			require.NoError(t, err)
			kid, priv := signingKey(t, iss)
			name, err := iss.Name(ctx)
			require.NoError(t, err)

			claims := func(mutate func(c jwt.MapClaims)) jwt.MapClaims {
				now := time.Now().Truncate(time.Second)
				c := jwt.MapClaims{"iss": name, "sub": mid.String(), "aud": []string{dashauth.Audience}, "iat": now.Unix(),
					"nbf": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": "j", "scope": "read write",
					"merchant_ids": []string{mid.String()}}
				mutate(c)
				return c
			}
			sign := func(c jwt.MapClaims, header map[string]any) string {
				tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
				tok.Header["kid"] = kid
				for k, v := range header {
					tok.Header[k] = v
				}
				s, err := tok.SignedString(priv)
				require.NoError(t, err)
				return s
			}
			accepted := func(what, raw string) dashauth.Principal {
				t.Helper()
				p, err := iss.Verify(ctx, raw)
				require.NoError(t, err, what)
				return p
			}
			refused := func(what, raw string) {
				t.Helper()
				_, err := iss.Verify(ctx, raw)
				assert.ErrorIs(t, err, dashauth.ErrInvalidToken, what)
			}

			// The mode: the claim, test when absent, nothing but test or live.
			p := accepted("the signing key and claims of the test", sign(claims(func(jwt.MapClaims) {}), nil))
			assert.Equal(t, domain.ModeTest, p.Mode, "no mode claim: test")
			p = accepted("live", sign(claims(func(c jwt.MapClaims) { c["mode"] = "live" }), nil))
			assert.Equal(t, domain.ModeLive, p.Mode)
			p = accepted("test", sign(claims(func(c jwt.MapClaims) { c["mode"] = "test" }), nil))
			assert.Equal(t, domain.ModeTest, p.Mode)
			for _, bad := range []any{"", "LIVE", "Live", " live", "prod", 1, true, []string{"live"}, map[string]any{}, nil} {
				refused("mode "+jsonOf(t, bad), sign(claims(func(c jwt.MapClaims) { c["mode"] = bad }), nil))
			}
			p = accepted("Mint", minted)
			assert.Equal(t, domain.ModeTest, p.Mode, "Mint: test mode")
			assert.Equal(t, "test", payload(t, minted)["mode"], "the claim is carried, not left out")
			live, _, err := iss.MintMode(ctx, mid, domain.ModeLive, dashauth.ScopeWrite, time.Minute)
			require.NoError(t, err)
			p = accepted("MintMode live", live)
			assert.Equal(t, domain.ModeLive, p.Mode)
			assert.True(t, p.May(mid, dashauth.ScopeWrite))
			_, _, err = iss.MintMode(ctx, mid, "prod", dashauth.ScopeRead, time.Minute)
			assert.ErrorIs(t, err, dashauth.ErrBadMode)

			// The lifetime: at most MaxTTL, iat required, expiry at most MaxTTL (plus Leeway) ahead.
			accepted("a lifetime of exactly MaxTTL", sign(claims(func(c jwt.MapClaims) {
				c["exp"] = c["iat"].(int64) + int64(dashauth.MaxTTL/time.Second)
			}), nil))
			refused("a lifetime a second over MaxTTL", sign(claims(func(c jwt.MapClaims) {
				c["exp"] = c["iat"].(int64) + int64(dashauth.MaxTTL/time.Second) + 1
			}), nil))
			refused("a lifetime of a year, issued an hour ago", sign(claims(func(c jwt.MapClaims) {
				c["iat"] = time.Now().Add(-time.Hour).Unix()
				c["exp"] = time.Now().Add(365 * 24 * time.Hour).Unix()
			}), nil))
			refused("no iat", sign(claims(func(c jwt.MapClaims) { delete(c, "iat") }), nil))
			refused("expiring more than MaxTTL and the leeway ahead", sign(claims(func(c jwt.MapClaims) {
				c["exp"] = time.Now().Add(dashauth.MaxTTL + dashauth.Leeway + time.Minute).Unix()
			}), nil))

			// crit: no extension is understood, whatever it names.
			for _, crit := range []any{[]string{"exp"}, []string{"b64"}, []string{}, "exp"} {
				refused("crit "+jsonOf(t, crit), sign(claims(func(jwt.MapClaims) {}), map[string]any{"crit": crit}))
			}
			refused("crit on a live token", sign(claims(func(c jwt.MapClaims) { c["mode"] = "live" }), map[string]any{"crit": []string{"exp"}, "exp": 1}))
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// payload is a token's claims, read without verifying.
func payload(t *testing.T, raw string) map[string]any {
	b, err := jwt.NewParser().DecodeSegment(strings.Split(raw, ".")[1])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}
