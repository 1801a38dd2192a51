package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
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

	// The sign-in (authorization code + PKCE): codes the "user" was given at /authorize, each
	// redeemed once at /token with the verifier of its code_challenge.
	mu    sync.Mutex
	codes map[string]oidcGrant
}

// oidcGrant is an authorization code's sign-in: the PKCE challenge to check and the ID token's claims.
type oidcGrant struct {
	challenge string
	claims    jwt.MapClaims
}

func newOIDCProvider(t testing.TB) *oidcProvider {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p := &oidcProvider{key: key, kid: "test-" + uuid.NewString()[:8], codes: map[string]oidcGrant{}}
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
	mux.HandleFunc("POST /token", p.tokenEndpoint)
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

// authorize is the provider's sign-in page, as a test drives it: the user signed in, a code is
// issued for the request's PKCE challenge with an ID token of these claims (nonce, iss, aud =
// clientID, iat and exp added unless edit sets them).
func (p *oidcProvider) authorize(clientID, challenge, nonce string, claims jwt.MapClaims) string {
	now := time.Now()
	c := jwt.MapClaims{"iss": p.srv.URL, "aud": clientID, "sub": "idp-user-1", "nonce": nonce, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	code := uuid.NewString()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.codes[code] = oidcGrant{challenge: challenge, claims: c}
	return code
}

// tokenEndpoint redeems a code once, checking the PKCE verifier (S256), and answers the ID token.
func (p *oidcProvider) tokenEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	g, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	w.Header().Set("Content-Type", "application/json")
	if !ok || r.PostForm.Get("grant_type") != "authorization_code" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, g.claims)
	tok.Header["kid"] = p.kid
	id, err := tok.SignedString(p.key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + uuid.NewString(), "token_type": "Bearer", "expires_in": 300, "id_token": id})
}
