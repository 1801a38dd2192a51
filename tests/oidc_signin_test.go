package tests

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/internal/webauthntest"
)

const oidcClientID = "paymentsd-web-test"

// get sends a GET without following redirects (the OIDC sign-in answers 302s), the response
// validated against the spec like every other.
func (e *env) get(path string, cookies ...*http.Cookie) (response, []*http.Cookie) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	require.NoError(e.t, err)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	e.validate(req, res, raw)
	return response{Status: res.StatusCode, Header: res.Header, Body: raw}, res.Cookies()
}

func cookieNamed(cs []*http.Cookie, name string) *http.Cookie {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// oidcStart begins a sign-in: the provider's authorize query and the state cookie.
func oidcStart(e *env) (url.Values, *http.Cookie) {
	e.t.Helper()
	r, cs := e.get("/v1/auth/oidc/start")
	require.Equal(e.t, http.StatusFound, r.Status, string(r.Body))
	loc, err := url.Parse(r.Header.Get("Location"))
	require.NoError(e.t, err)
	require.Equal(e.t, e.idp.srv.URL+"/authorize", loc.Scheme+"://"+loc.Host+loc.Path)
	q := loc.Query()
	require.Equal(e.t, oidcClientID, q.Get("client_id"))
	require.Equal(e.t, "S256", q.Get("code_challenge_method"))
	require.Equal(e.t, "code", q.Get("response_type"))
	require.Equal(e.t, "https://pay.example.test/v1/auth/oidc/callback", q.Get("redirect_uri"))
	require.NotEmpty(e.t, q.Get("nonce"))
	require.NotEmpty(e.t, q.Get("code_challenge"))
	ck := cookieNamed(cs, "paymentsd_oidc")
	require.NotNil(e.t, ck)
	require.True(e.t, ck.HttpOnly)
	require.Equal(e.t, http.SameSiteLaxMode, ck.SameSite)
	require.Equal(e.t, "/v1/auth/oidc", ck.Path)
	require.Equal(e.t, q.Get("state"), ck.Value)
	return q, ck
}

// oidcSignIn runs a whole sign-in whose ID token has claims: the callback's Location and cookies.
func oidcSignIn(e *env, claims jwt.MapClaims) (*url.URL, []*http.Cookie) {
	e.t.Helper()
	q, ck := oidcStart(e)
	code := e.idp.authorize(oidcClientID, q.Get("code_challenge"), q.Get("nonce"), claims)
	return oidcCallback(e, code, q.Get("state"), ck)
}

func oidcCallback(e *env, code, state string, cookies ...*http.Cookie) (*url.URL, []*http.Cookie) {
	e.t.Helper()
	r, cs := e.get("/v1/auth/oidc/callback?"+url.Values{"code": {code}, "state": {state}}.Encode(), cookies...)
	require.Equal(e.t, http.StatusFound, r.Status, string(r.Body))
	loc, err := url.Parse(r.Header.Get("Location"))
	require.NoError(e.t, err)
	return loc, cs
}

// signInError is the error code of a redirect to the sign-in page ("" none).
func signInQuery(t *testing.T, loc *url.URL) url.Values {
	t.Helper()
	require.Equal(t, "/dashboard/", loc.Path)
	frag, ok := strings.CutPrefix(loc.Fragment, "/sign-in?")
	require.True(t, ok, "not the sign-in page: %s", loc)
	q, err := url.ParseQuery(frag)
	require.NoError(t, err)
	return q
}

func verified(email string, extra ...any) jwt.MapClaims {
	c := jwt.MapClaims{"email": email, "email_verified": true}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

func TestOIDCSignIn(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, b, func(c *config.Config) { c.Dashboard.OIDCClientID, c.Dashboard.OIDCName = oidcClientID, "Acme SSO" })
			e.person("olga@example.com")

			prov := e.do(http.MethodGet, "/v1/auth/providers", "", nil)
			require.Equal(t, http.StatusOK, prov.Status)
			require.Equal(t, map[string]any{"enabled": true, "name": "Acme SSO"}, prov.JSON(t)["oidc"])

			// Happy path: signed in, the refresh cookie set, the state cookie cleared.
			loc, cs := oidcSignIn(e, verified("Olga@Example.com"))
			require.Equal(t, "/dashboard/", loc.String())
			refresh := cookieNamed(cs, "paymentsd_refresh")
			require.NotNil(t, refresh)
			require.Equal(t, "/v1/auth", refresh.Path)
			require.Equal(t, -1, cookieNamed(cs, "paymentsd_oidc").MaxAge)
			r := e.do(http.MethodPost, "/v1/auth/refresh", "", nil, "Cookie", "paymentsd_refresh="+refresh.Value)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.Equal(t, "signed_in", r.JSON(t)["status"])

			// Bad state: another browser's cookie, no cookie, a state used already.
			q, ck := oidcStart(e)
			code := e.idp.authorize(oidcClientID, q.Get("code_challenge"), q.Get("nonce"), verified("olga@example.com"))
			loc, _ = oidcCallback(e, code, q.Get("state"), &http.Cookie{Name: "paymentsd_oidc", Value: "someone-else"})
			require.Equal(t, "invalid_state", signInQuery(t, loc).Get("error"))
			loc, _ = oidcCallback(e, code, q.Get("state"))
			require.Equal(t, "invalid_state", signInQuery(t, loc).Get("error"))
			loc, _ = oidcCallback(e, code, q.Get("state"), ck) // still unspent: this one works
			require.Equal(t, "/dashboard/", loc.String())
			loc, _ = oidcCallback(e, code, q.Get("state"), ck)
			require.Equal(t, "invalid_state", signInQuery(t, loc).Get("error"))

			// Bad nonce; another audience; expired: the ID token is refused.
			for _, c := range []jwt.MapClaims{verified("olga@example.com", "nonce", "not-the-nonce"),
				verified("olga@example.com", "aud", "another-app"), verified("olga@example.com", "exp", 1000)} {
				loc, _ = oidcSignIn(e, c)
				require.Equal(t, "invalid_token", signInQuery(t, loc).Get("error"), "%v", c)
			}
			// A wrong PKCE verifier: the provider refuses the code.
			q, ck = oidcStart(e)
			code = e.idp.authorize(oidcClientID, "not-the-challenge", q.Get("nonce"), verified("olga@example.com"))
			loc, _ = oidcCallback(e, code, q.Get("state"), ck)
			require.Equal(t, "provider_error", signInQuery(t, loc).Get("error"))

			// The email must be verified; the user must exist (never made).
			for _, c := range []jwt.MapClaims{{"email": "olga@example.com"}, {"email": "olga@example.com", "email_verified": false}} {
				loc, _ = oidcSignIn(e, c)
				require.Equal(t, "email_unverified", signInQuery(t, loc).Get("error"))
			}
			loc, _ = oidcSignIn(e, jwt.MapClaims{"email": "olga@example.com", "email_verified": "true"})
			require.Equal(t, "/dashboard/", loc.String(), "a provider saying \"true\"")
			loc, _ = oidcSignIn(e, verified("stranger@example.com"))
			require.Equal(t, "unknown_user", signInQuery(t, loc).Get("error"))
			_, err := e.app.Store.Read(context.Background()).UserByEmail("stranger@example.com")
			require.Error(t, err)

			// A user with a second factor: without amr mfa, the second-factor step follows.
			first := login(e, "olga@example.com", testPassword)
			a, err := webauthntest.New(passkeyOrigin)
			require.NoError(t, err)
			registerPasskey(e, first.access, a, "Key")
			loc, cs = oidcSignIn(e, verified("olga@example.com", "amr", []string{"pwd"}))
			sq := signInQuery(t, loc)
			require.Equal(t, "passkey", sq.Get("methods"))
			require.Nil(t, cookieNamed(cs, "paymentsd_refresh"))
			ok := e.auth("/v1/auth/login/passkey/finish", passkeyStep(e, sq.Get("challengeToken"), a))
			require.Equal(t, http.StatusOK, ok.res.Status, string(ok.res.Body))
			// With amr mfa the provider's second factor counts: signed in at once.
			loc, cs = oidcSignIn(e, verified("olga@example.com", "amr", []string{"pwd", "mfa"}))
			require.Equal(t, "/dashboard/", loc.String())
			require.NotNil(t, cookieNamed(cs, "paymentsd_refresh"))

			// The provider's refusal.
			q, ck = oidcStart(e)
			r2, _ := e.get("/v1/auth/oidc/callback?"+url.Values{"error": {"access_denied"}, "state": {q.Get("state")}}.Encode(), ck)
			require.Equal(t, http.StatusFound, r2.Status)
		})
	}
}

func TestOIDCSignInNotConfigured(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		prov := e.do(http.MethodGet, "/v1/auth/providers", "", nil)
		require.Equal(t, http.StatusOK, prov.Status)
		require.Equal(t, map[string]any{"enabled": false}, prov.JSON(t)["oidc"])
		for _, p := range []string{"/v1/auth/oidc/start", "/v1/auth/oidc/callback?code=x&state=y"} {
			r, _ := e.get(p)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			code, _, _ := r.errorFields(t)
			require.Equal(t, "oidc_not_configured", code)
		}
	})
}
