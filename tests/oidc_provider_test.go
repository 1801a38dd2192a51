package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// The external OIDC issuer of the dashboard tests: an identity provider on loopback serving its
// discovery document and JWKS (one ES256 key), minting tokens the way an IdP would — the
// merchants in a namespaced claim, the scope in `scope`.
const (
	oidcAudience      = "paymentsd-dashboard-test"
	oidcMerchantClaim = "https://paymentsd.example/merchants"
)

type oidcProvider struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
	kid string
}

func newOIDCProvider(t testing.TB) *oidcProvider {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p := &oidcProvider{key: key, kid: "test-" + uuid.NewString()[:8]}
	jwk, err := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		KID: p.kid, ALG: jwkset.AlgES256, USE: jwkset.UseSig}})
	require.NoError(t, err)
	jwks, err := json.Marshal(map[string]any{"keys": []any{jwk.Marshal()}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks",
			"authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// token mints an access token; edit changes its claims before signing.
func (p *oidcProvider) token(t testing.TB, merchants []string, scope string, edit func(jwt.MapClaims)) string {
	now := time.Now()
	c := jwt.MapClaims{"iss": p.srv.URL, "aud": oidcAudience, "sub": "user-1", "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "openid " + scope, oidcMerchantClaim: merchants}
	if edit != nil {
		edit(c)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = p.kid
	s, err := tok.SignedString(p.key)
	require.NoError(t, err)
	return s
}
