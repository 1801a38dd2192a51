package dashauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testlog"
)

const (
	testAudience      = "paymentsd-dashboard-oidc"
	testMerchantClaim = "https://paymentsd.example/merchants"
)

// testKey is a signing key of the test identity provider.
type testKey struct {
	kid    string
	method jwt.SigningMethod
	priv   any
	pub    any
}

func rsaKey(t testing.TB, kid string) testKey {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return testKey{kid: kid, method: jwt.SigningMethodRS256, priv: priv, pub: &priv.PublicKey}
}

func ecKey(t testing.TB, kid string) testKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return testKey{kid: kid, method: jwt.SigningMethodES256, priv: priv, pub: &priv.PublicKey}
}

func edKey(t testing.TB, kid string) testKey {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return testKey{kid: kid, method: jwt.SigningMethodEdDSA, priv: priv, pub: pub}
}

// jwk is the key's public JWK (alg and use set).
func (k testKey) jwk(t testing.TB) jwkset.JWKMarshal {
	j, err := jwkset.NewJWKFromKey(k.pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		KID: k.kid, ALG: jwkset.ALG(k.method.Alg()), USE: jwkset.UseSig}})
	require.NoError(t, err)
	return j.Marshal()
}

// sign makes a token of the key with the claims.
func (k testKey) sign(t testing.TB, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	require.NoError(t, err)
	return s
}

// idp is a test OpenID provider on 127.0.0.1: discovery and a mutable JWKS.
type idp struct {
	srv *httptest.Server

	mu            sync.Mutex
	keys          []jwkset.JWKMarshal
	docIssuer     string // "": the server's URL
	jwksURI       string // "": the server's /jwks
	discoveryCode int    // non-zero: discovery answers this status
	jwksCode      int    // non-zero: the JWKS answers this status

	discoveries atomic.Int32
	jwksFetches atomic.Int32
}

func newIDP(t testing.TB, keys ...testKey) *idp {
	p := &idp{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.discoveries.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.discoveryCode != 0 {
			w.WriteHeader(p.discoveryCode)
			return
		}
		iss, jwks := p.docIssuer, p.jwksURI
		if iss == "" {
			iss = p.srv.URL
		}
		if jwks == "" {
			jwks = p.srv.URL + "/jwks"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "jwks_uri": jwks,
			"authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "EdDSA"}})
	})
	mux.HandleFunc("GET /moved/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.com/.well-known/openid-configuration", http.StatusFound)
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		p.jwksFetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.jwksCode != 0 {
			w.WriteHeader(p.jwksCode)
			return
		}
		_ = json.NewEncoder(w).Encode(jwkset.JWKSMarshal{Keys: append([]jwkset.JWKMarshal{}, p.keys...)})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	for _, k := range keys {
		p.publish(t, k)
	}
	return p
}

func (p *idp) publish(t testing.TB, k testKey) {
	j := k.jwk(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, j)
}

func (p *idp) publishRaw(j jwkset.JWKMarshal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, j)
}

func (p *idp) remove(kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.keys[:0]
	for _, k := range p.keys {
		if k.KID != kid {
			keep = append(keep, k)
		}
	}
	p.keys = keep
}

func (p *idp) set(f func(p *idp)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// claims are valid claims of the idp for the merchant claim value and scope.
func (p *idp) claims(merchants any, scope string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": p.srv.URL, "aud": []string{testAudience, "another-client"}, "sub": "user-1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(), testMerchantClaim: merchants}
	if scope != "" {
		c["scope"] = scope
	}
	return c
}

// newOIDC is a verifier of the idp with the given intervals (refresh, unknown kid, retry), closed
// after the test; logs go to the returned buffer.
func newOIDC(t testing.TB, p *idp, refresh, unknownKID, retry time.Duration) (*dashauth.OIDC, *testlog.Buffer) {
	logs := &testlog.Buffer{}
	o, err := dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: p.srv.URL, Audience: testAudience, MerchantClaim: testMerchantClaim,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	dashauth.SetOIDCIntervals(o, refresh, unknownKID, retry)
	t.Cleanup(o.Close)
	return o, logs
}

// Tokens of the external issuer verify for their merchants and scope (array or single-string
// merchant claim, RSA, ECDSA and Ed25519 keys); every forgery, expiry, wrong issuer or audience,
// algorithm confusion and malformed claim is refused with ErrInvalidToken.
func TestOIDCVerify(t *testing.T) {
	ctx := context.Background()
	rk, ek, dk := rsaKey(t, "rsa-1"), ecKey(t, "ec-1"), edKey(t, "ed-1")
	p := newIDP(t, rk, ek, dk)
	o, logs := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))
	require.NoError(t, o.Discover(ctx), "a second discovery is a no-op")
	assert.Equal(t, int32(1), p.discoveries.Load())
	m1, m2 := uuid.New(), uuid.New()

	pr, err := o.Verify(ctx, rk.sign(t, p.claims([]string{m1.String(), m2.String()}, "read")))
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{m1, m2}, pr.MerchantIDs)
	assert.Equal(t, domain.RoleViewer, pr.Role)
	assert.True(t, pr.May(m2, dashauth.ScopeRead))
	assert.False(t, pr.May(m1, dashauth.ScopeWrite), "a read token cannot write")
	assert.False(t, pr.May(uuid.New(), dashauth.ScopeRead), "another merchant")

	pr, err = o.Verify(ctx, ek.sign(t, p.claims(m1.String(), "openid read write")))
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{m1}, pr.MerchantIDs, "a single string is one merchant")
	assert.Equal(t, domain.RoleAdmin, pr.Role)
	assert.True(t, pr.May(m1, dashauth.ScopeWrite))

	pr, err = o.Verify(ctx, dk.sign(t, p.claims([]any{m2.String()}, "write")))
	require.NoError(t, err)
	assert.True(t, pr.May(m2, dashauth.ScopeRead), "write includes read")

	c := p.claims(m1.String(), "read")
	c["exp"] = time.Now().Add(-10 * time.Second).Unix()
	_, err = o.Verify(ctx, rk.sign(t, c))
	assert.NoError(t, err, "expired within the leeway")

	refused := func(what, raw string) {
		t.Helper()
		_, err := o.Verify(ctx, raw)
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken, what)
	}
	with := func(mutate func(jwt.MapClaims)) jwt.MapClaims {
		c := p.claims([]string{m1.String()}, "read write")
		mutate(c)
		return c
	}
	refused("garbage", "not.a.token")
	refused("empty", "")
	refused("another issuer", rk.sign(t, with(func(c jwt.MapClaims) { c["iss"] = "https://elsewhere.example" })))
	refused("the issuer with a trailing slash", rk.sign(t, with(func(c jwt.MapClaims) { c["iss"] = p.srv.URL + "/" })))
	refused("no issuer", rk.sign(t, with(func(c jwt.MapClaims) { delete(c, "iss") })))
	refused("another audience", rk.sign(t, with(func(c jwt.MapClaims) { c["aud"] = "someone-else" })))
	refused("no audience", rk.sign(t, with(func(c jwt.MapClaims) { delete(c, "aud") })))
	refused("expired", ek.sign(t, with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() })))
	refused("no expiry", ek.sign(t, with(func(c jwt.MapClaims) { delete(c, "exp") })))
	refused("not yet valid", dk.sign(t, with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() })))
	refused("issued in the future", dk.sign(t, with(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(5 * time.Minute).Unix() })))
	refused("no scope", rk.sign(t, with(func(c jwt.MapClaims) { delete(c, "scope") })))
	refused("an unknown scope", rk.sign(t, with(func(c jwt.MapClaims) { c["scope"] = "admin openid" })))
	refused("a scope array", rk.sign(t, with(func(c jwt.MapClaims) { c["scope"] = []string{"read"} })))
	refused("no merchant claim", rk.sign(t, with(func(c jwt.MapClaims) { delete(c, testMerchantClaim) })))
	refused("an empty merchant claim", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = []string{} })))
	refused("an empty merchant string", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = "" })))
	refused("a malformed merchant id", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = []string{m1.String(), "acme"} })))
	refused("space-separated ids are not a list", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = m1.String() + " " + m2.String() })))
	refused("a non-string merchant id", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = []any{m1.String(), 7} })))
	refused("a merchant object", rk.sign(t, with(func(c jwt.MapClaims) { c[testMerchantClaim] = map[string]any{"id": m1.String()} })))

	good := rk.sign(t, with(func(jwt.MapClaims) {}))
	parts := strings.Split(good, ".")
	tampered, err := json.Marshal(with(func(c jwt.MapClaims) { c[testMerchantClaim] = []string{m2.String()} }))
	require.NoError(t, err)
	refused("a tampered payload", parts[0]+"."+(&jwt.Token{}).EncodeSegment(tampered)+"."+parts[2])
	refused("a tampered signature", parts[0]+"."+parts[1]+"."+strings.Repeat("A", len(parts[2])))

	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, with(func(jwt.MapClaims) {})).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	refused("alg none", none)

	// HS256 keyed with the RSA public key (PEM, DER and its JWK), and with an oct key the JWKS publishes.
	der, err := x509.MarshalPKIXPublicKey(rk.pub)
	require.NoError(t, err)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	jwkJSON, err := json.Marshal(rk.jwk(t))
	require.NoError(t, err)
	for name, secret := range map[string][]byte{"pem": pemKey, "der": der, "jwk": jwkJSON} {
		hs := jwt.NewWithClaims(jwt.SigningMethodHS256, with(func(jwt.MapClaims) {}))
		hs.Header["kid"] = rk.kid
		s, err := hs.SignedString(secret)
		require.NoError(t, err)
		refused("HS256 keyed with the RSA public key's "+name, s)
	}
	secret := []byte("a shared secret the JWKS should never have held")
	p.publishRaw(jwkset.JWKMarshal{KTY: jwkset.KtyOct, KID: "oct-1", ALG: jwkset.AlgHS256, K: base64.RawURLEncoding.EncodeToString(secret)})
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, with(func(jwt.MapClaims) {}))
	hs.Header["kid"] = "oct-1"
	s, err := hs.SignedString(secret)
	require.NoError(t, err)
	refused("HS256 with an oct key of the JWKS", s)

	// A key the JWKS does not hold (an unknown kid, or a published kid with another key), and a
	// key whose JWK names another algorithm.
	refused("a key not in the JWKS", rsaKey(t, "ghost").sign(t, with(func(jwt.MapClaims) {})))
	forged := rsaKey(t, rk.kid)
	refused("another key under a published kid", forged.sign(t, with(func(jwt.MapClaims) {})))
	ps := jwt.NewWithClaims(jwt.SigningMethodPS256, with(func(jwt.MapClaims) {}))
	ps.Header["kid"] = rk.kid
	s, err = ps.SignedString(rk.priv)
	require.NoError(t, err)
	refused("PS256 with a key published for RS256", s)
	noKid := jwt.NewWithClaims(jwt.SigningMethodES256, with(func(jwt.MapClaims) {}))
	s, err = noKid.SignedString(ek.priv)
	require.NoError(t, err)
	_, err = o.Verify(ctx, s)
	assert.NoError(t, err, "without a kid, every published key is tried")

	assert.NotContains(t, logs.String(), parts[2], "no token is logged")
}

// A key the issuer publishes after the JWKS was read verifies on first use (one re-read); more
// unknown kids are rate-limited, and the periodic refresh picks new keys up and drops removed ones.
func TestOIDCKeyRotation(t *testing.T) {
	ctx := context.Background()
	a := rsaKey(t, "a")
	p := newIDP(t, a)
	m := uuid.New()
	claims := func() jwt.MapClaims { return p.claims([]string{m.String()}, "read") }

	// Without a periodic refresh: only the re-read for an unknown kid can find a new key.
	o, _ := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))
	_, err := o.Verify(ctx, a.sign(t, claims()))
	require.NoError(t, err)
	require.Equal(t, int32(1), p.jwksFetches.Load())
	b := ecKey(t, "b")
	p.publish(t, b)
	_, err = o.Verify(ctx, b.sign(t, claims()))
	require.NoError(t, err, "a key published seconds after the JWKS was read verifies on first use")
	assert.Equal(t, int32(2), p.jwksFetches.Load())
	for range 20 {
		_, err = o.Verify(ctx, edKey(t, uuid.NewString()).sign(t, claims()))
		assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
	}
	assert.Equal(t, int32(2), p.jwksFetches.Load(), "unknown kids re-read the JWKS at most once per interval")

	// With a short periodic refresh: a removed key stops verifying, a new one starts, even while
	// the unknown-kid re-reads are exhausted.
	o2, _ := newOIDC(t, p, 200*time.Millisecond, time.Hour, time.Hour)
	require.NoError(t, o2.Discover(ctx))
	tokA := a.sign(t, claims())
	_, err = o2.Verify(ctx, tokA)
	require.NoError(t, err)
	_, err = o2.Verify(ctx, edKey(t, "ghost").sign(t, claims()))
	require.ErrorIs(t, err, dashauth.ErrInvalidToken) // spends the re-read
	c := edKey(t, "c")
	p.publish(t, c)
	tokC := c.sign(t, claims())
	_, err = o2.Verify(ctx, tokC)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "rate-limited: no re-read, refused at once")
	p.remove("a")
	assert.Eventually(t, func() bool {
		_, errA := o2.Verify(ctx, tokA)
		_, errC := o2.Verify(ctx, tokC)
		return errA != nil && errC == nil
	}, 2*time.Second, 20*time.Millisecond, "the periodic refresh drops key a and adds key c")
	_, err = o2.Verify(ctx, tokA)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
}

// An unreachable JWKS keeps the keys last read; a token with an unknown kid is then refused
// with ErrInvalidToken, and the failure is logged without the token.
func TestOIDCUnreachableJWKS(t *testing.T) {
	ctx := context.Background()
	a := rsaKey(t, "a")
	p := newIDP(t, a)
	m := uuid.New()
	o, logs := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))
	p.set(func(p *idp) { p.jwksCode = http.StatusServiceUnavailable })
	b := ecKey(t, "b")
	p.publish(t, b)
	tokB := b.sign(t, p.claims(m.String(), "read"))
	_, err := o.Verify(ctx, tokB)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
	_, err = o.Verify(ctx, a.sign(t, p.claims(m.String(), "read")))
	assert.NoError(t, err, "the keys last read stay in use")
	assert.Contains(t, logs.String(), "JWKS refresh failed")
	assert.NotContains(t, logs.String(), strings.Split(tokB, ".")[1], "no token is logged")
	assert.NotContains(t, logs.String(), a.jwk(t).N, "no key is logged")
}

// The configuration: https, or http on loopback only; an audience and a merchant claim.
func TestOIDCConfig(t *testing.T) {
	cfg := func(issuer string) dashauth.OIDCConfig {
		return dashauth.OIDCConfig{Issuer: issuer, Audience: testAudience, MerchantClaim: testMerchantClaim}
	}
	for _, iss := range []string{"https://idp.example.com", "https://idp.example.com/realms/pay", "http://127.0.0.1:8080",
		"http://127.9.9.9", "http://localhost:5556/dex", "http://[::1]:9000"} {
		o, err := dashauth.NewOIDC(cfg(iss))
		if assert.NoError(t, err, iss) {
			assert.Equal(t, iss, o.Issuer())
			o.Close()
		}
	}
	for _, iss := range []string{"", "http://example.com", "http://10.0.0.1", "http://localhost.example.com", "http://[::2]",
		"ftp://idp.example.com", "idp.example.com", "/realms/pay", "https://idp.example.com?x=1", "https://idp.example.com#f",
		"https://user:pw@idp.example.com", "https://"} {
		_, err := dashauth.NewOIDC(cfg(iss))
		assert.ErrorIs(t, err, dashauth.ErrOIDCConfig, iss)
	}
	_, err := dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: "https://idp.example.com", MerchantClaim: testMerchantClaim})
	assert.ErrorIs(t, err, dashauth.ErrOIDCConfig, "no audience")
	_, err = dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: "https://idp.example.com", Audience: testAudience})
	assert.ErrorIs(t, err, dashauth.ErrOIDCConfig, "no merchant claim")
}

// Discovery: the document's issuer must be the configured one and its jwks_uri https or
// loopback; a failed discovery refuses tokens and is retried, not more often than the interval.
func TestOIDCDiscovery(t *testing.T) {
	ctx := context.Background()
	a := rsaKey(t, "a")
	m := uuid.New()

	p := newIDP(t, a)
	p.set(func(p *idp) { p.docIssuer = "https://impostor.example" })
	o, _ := newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	err := o.Discover(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "https://impostor.example")
	_, err = o.Verify(ctx, a.sign(t, p.claims(m.String(), "read")))
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken, "an issuer whose discovery failed verifies nothing")

	p = newIDP(t, a)
	p.set(func(p *idp) { p.jwksURI = "http://example.com/jwks" })
	o, _ = newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	assert.ErrorIs(t, o.Discover(ctx), dashauth.ErrOIDCConfig, "a plain-http jwks_uri off loopback")

	p = newIDP(t, a)
	p.set(func(p *idp) { p.jwksCode = http.StatusNotFound })
	o, _ = newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	assert.Error(t, o.Discover(ctx), "an unreadable JWKS fails the discovery")

	// Down at first: refused, retried on use after the interval, then verifying.
	p = newIDP(t, a)
	p.set(func(p *idp) { p.discoveryCode = http.StatusServiceUnavailable })
	o, logs := newOIDC(t, p, time.Hour, time.Hour, time.Second)
	tok := a.sign(t, p.claims(m.String(), "read"))
	_, err = o.Verify(ctx, tok)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
	_, err = o.Verify(ctx, tok)
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
	assert.Equal(t, int32(1), p.discoveries.Load(), "no retry within the interval")
	assert.Contains(t, logs.String(), "discovery failed")
	p.set(func(p *idp) { p.discoveryCode = 0 })
	assert.Eventually(t, func() bool { _, err := o.Verify(ctx, tok); return err == nil }, 3*time.Second, 50*time.Millisecond)
	assert.Equal(t, int32(2), p.discoveries.Load())

	// A redirect to plain http off loopback is not followed.
	p = newIDP(t, a)
	o, err = dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: p.srv.URL + "/moved", Audience: testAudience, MerchantClaim: testMerchantClaim})
	require.NoError(t, err)
	t.Cleanup(o.Close)
	assert.ErrorIs(t, o.Discover(ctx), dashauth.ErrOIDCConfig)

	// Nothing listening.
	p = newIDP(t, a)
	p.srv.Close()
	o, _ = newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	assert.Error(t, o.Discover(ctx))

	// Closed.
	p = newIDP(t, a)
	o, _ = newOIDC(t, p, time.Hour, time.Hour, time.Hour)
	require.NoError(t, o.Discover(ctx))
	o.Close()
	_, err = o.Verify(ctx, a.sign(t, p.claims(m.String(), "read")))
	assert.ErrorIs(t, err, dashauth.ErrInvalidToken)
}
