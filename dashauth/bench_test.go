package dashauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
)

// What verifying one dashboard token costs a request (keys cached; no network, no database read
// after the first): the built-in issuer's Ed25519 and an external issuer's ES256, RS256 and
// EdDSA, through the iss routing the server uses.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	a, merchant := newIssuer(b, "sqlite")
	rk, ek, dk := rsaKey(b, "rsa-1"), ecKey(b, "ec-1"), edKey(b, "ed-1")
	p := newIDP(b, rk, ek, dk)
	o, _ := newOIDC(b, p, time.Minute, 10*time.Second, 10*time.Second)
	require.NoError(b, o.Discover(ctx))
	v, err := dashauth.NewVerifiers(ctx, a.Tokens, o)
	require.NoError(b, err)
	builtin, _, err := a.Tokens.Mint(ctx, merchant, dashauth.ScopeWrite, time.Hour)
	require.NoError(b, err)
	claims := p.claims([]string{merchant.String()}, "read write")
	for _, tc := range []struct{ name, token string }{{"builtin-EdDSA", builtin},
		{"oidc-ES256", ek.sign(b, claims)}, {"oidc-RS256", rk.sign(b, claims)}, {"oidc-EdDSA", dk.sign(b, claims)}} {
		b.Run(tc.name, func(b *testing.B) {
			_, err := v.Verify(ctx, tc.token)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(ctx, tc.token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
