package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/people"
)

// argon2id at its real cost takes seconds under -race: the tests hash cheaply.
func init() { people.SetHashParamsForTests() }

const testPassword = "a-long-enough-password"

// signIn is one sign-in's answer: its body, and the refresh cookie it set ("" none).
type signIn struct {
	res     response
	access  string
	refresh string
}

func (e *env) auth(path string, body any, headers ...string) signIn {
	e.t.Helper()
	r := e.do(http.MethodPost, path, "", body, headers...)
	out := signIn{res: r}
	if r.Status == http.StatusOK {
		if tok, ok := r.JSON(e.t)["accessToken"].(string); ok {
			out.access = tok
		}
	}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "paymentsd_refresh" {
			require.True(e.t, c.HttpOnly)
			require.Equal(e.t, http.SameSiteStrictMode, c.SameSite)
			require.Equal(e.t, "/v1/auth", c.Path)
			require.False(e.t, c.Secure, "plain http to a loopback host")
			out.refresh = c.Value
		}
	}
	return out
}

func (e *env) person(email string) {
	e.t.Helper()
	m := e.merchant(merchantOpts{deposits: true})
	_, err := e.app.People.CreateUser(context.Background(), email, m.Merchant.ID, domain.RoleOwner, testPassword)
	require.NoError(e.t, err)
}

func login(e *env, email, password string, headers ...string) signIn {
	return e.auth("/v1/auth/login", map[string]string{"email": email, "password": password}, headers...)
}

func bearerHdr(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func TestSignIn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("ann@example.com")
		e.person("bob@example.com")
		_, err := e.app.People.CreateUser(context.Background(), "off@example.com", e.merchant(merchantOpts{}).Merchant.ID, domain.RoleViewer, testPassword)
		require.NoError(t, err)
		require.NoError(t, e.app.People.Disable(context.Background(), "off@example.com"))

		ok := login(e, "Ann@Example.com", testPassword)
		require.Equal(t, http.StatusOK, ok.res.Status, string(ok.res.Body))
		require.NotEmpty(t, ok.access)
		require.NotEmpty(t, ok.refresh)
		require.Equal(t, "no-store", ok.res.Header.Get("Cache-Control"))

		// Wrong password, unknown email, disabled user: one answer.
		for _, c := range [][2]string{{"bob@example.com", "wrong-password-123"}, {"nobody@example.com", testPassword}, {"off@example.com", testPassword}} {
			r := login(e, c[0], c[1])
			require.Equal(t, http.StatusUnauthorized, r.res.Status)
			code, _, _ := r.res.errorFields(t)
			require.Equal(t, "invalid_credentials", code)
		}

		// Me with the access token.
		me := e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(ok.access)...)
		require.Equal(t, http.StatusOK, me.Status, string(me.Body))
		require.Equal(t, "ann@example.com", me.JSON(t)["email"])
		ms := me.JSON(t)["memberships"].([]any)
		require.Len(t, ms, 1)
		require.Equal(t, "owner", ms[0].(map[string]any)["role"])
		// A service token is not a person's.
		svc := e.token(e.merchant(merchantOpts{}).Merchant.ID, dashauth.ScopeRead)
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(svc)...).Status)
	})
}

func TestSignInThrottle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("target@example.com")
		e.person("colleague@example.com")
		for i := 1; i <= people.AccountFailureLimit; i++ { // the 10th failure is still checked
			r := login(e, "target@example.com", "wrong-password-123")
			require.Equal(t, http.StatusUnauthorized, r.res.Status, "attempt %d", i)
		}
		r := login(e, "target@example.com", testPassword) // even the right password: refused unchecked
		require.Equal(t, http.StatusTooManyRequests, r.res.Status)
		code, _, _ := r.res.errorFields(t)
		require.Equal(t, "too_many_attempts", code)
		retry := r.res.Header.Get("Retry-After")
		require.NotEmpty(t, retry)
		require.LessOrEqual(t, len(retry), 3)
		require.True(t, retry == "900" || retry == "899" || retry == "898", retry)
		// A colleague at the same address still signs in.
		ok := login(e, "colleague@example.com", testPassword)
		require.Equal(t, http.StatusOK, ok.res.Status, string(ok.res.Body))
	})
}

func totpCode(t *testing.T, secret string, at time.Time) string {
	c, err := totp.GenerateCode(secret, at)
	require.NoError(t, err)
	return c
}

func TestTOTPAndSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("tess@example.com")
		first := login(e, "tess@example.com", testPassword)
		require.Equal(t, http.StatusOK, first.res.Status)

		enroll := e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, enroll.Status, string(enroll.Body))
		secret := enroll.JSON(t)["secret"].(string)
		require.True(t, strings.HasPrefix(enroll.JSON(t)["qrCodePng"].(string), "data:image/png;base64,"))
		require.True(t, strings.HasPrefix(enroll.JSON(t)["otpauthUri"].(string), "otpauth://totp/"))

		bad := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": "000000"}, bearerHdr(first.access)...)
		require.Equal(t, http.StatusBadRequest, bad.Status)
		now := time.Now()
		conf := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": totpCode(t, secret, now.Add(-30*time.Second))}, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, conf.Status, string(conf.Body))
		codes := conf.JSON(t)["recoveryCodes"].([]any)
		require.Len(t, codes, 10)

		// Sign-in now asks for the second factor.
		ch := login(e, "tess@example.com", testPassword)
		require.Equal(t, http.StatusOK, ch.res.Status)
		require.Equal(t, "second_factor_required", ch.res.JSON(t)["status"])
		require.Empty(t, ch.access)
		require.Empty(t, ch.refresh)
		challenge := ch.res.JSON(t)["challengeToken"].(string)
		code := totpCode(t, secret, now)
		sf := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": challenge, "code": code})
		require.Equal(t, http.StatusOK, sf.res.Status, string(sf.res.Body))
		require.NotEmpty(t, sf.refresh)
		// The challenge is spent, and the code may not be used again (replay).
		again := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": challenge, "code": code})
		require.Equal(t, http.StatusUnauthorized, again.res.Status)
		ch2 := login(e, "tess@example.com", testPassword)
		replay := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch2.res.JSON(t)["challengeToken"].(string), "code": code})
		require.Equal(t, http.StatusUnauthorized, replay.res.Status)
		// A recovery code works once.
		rc := codes[0].(string)
		viaRC := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch2.res.JSON(t)["challengeToken"].(string), "code": strings.ToUpper(rc)})
		require.Equal(t, http.StatusOK, viaRC.res.Status, string(viaRC.res.Body))
		ch3 := login(e, "tess@example.com", testPassword)
		rcAgain := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch3.res.JSON(t)["challengeToken"].(string), "code": rc})
		require.Equal(t, http.StatusUnauthorized, rcAgain.res.Status)

		// Step-up: the code just used is refused, the next step's is taken; sfa is now.
		up := e.auth("/v1/auth/step-up", map[string]string{"code": code}, bearerHdr(sf.access)...)
		require.Equal(t, http.StatusBadRequest, up.res.Status)
		up = e.auth("/v1/auth/step-up", map[string]string{"code": totpCode(t, secret, now.Add(30*time.Second))}, bearerHdr(sf.access)...)
		require.Equal(t, http.StatusOK, up.res.Status, string(up.res.Body))
		p, err := e.app.Tokens.VerifyPerson(context.Background(), up.access)
		require.NoError(t, err)
		require.NotNil(t, p.SecondFactorAt)
		require.WithinDuration(t, time.Now(), *p.SecondFactorAt, 5*time.Second)

		// Refresh rotates; the previous token within 10 s still works (two tabs); an older one
		// revokes the session.
		r1 := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+sf.refresh)
		require.Equal(t, http.StatusOK, r1.res.Status, string(r1.res.Body))
		require.NotEqual(t, sf.refresh, r1.refresh)
		r2 := e.auth("/v1/auth/refresh", map[string]string{"mode": "live"}, "Cookie", "paymentsd_refresh="+r1.refresh)
		require.Equal(t, http.StatusOK, r2.res.Status)
		tab := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+r1.refresh) // the previous, at once
		require.Equal(t, http.StatusOK, tab.res.Status, string(tab.res.Body))
		lp, err := e.app.Tokens.VerifyPerson(context.Background(), tab.access)
		require.NoError(t, err)
		require.Equal(t, domain.ModeLive, lp.Mode)
		reuse := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+sf.refresh) // long spent
		require.Equal(t, http.StatusUnauthorized, reuse.res.Status)
		c, _, _ := reuse.res.errorFields(t)
		require.Equal(t, "invalid_session", c)
		dead := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+tab.refresh)
		require.Equal(t, http.StatusUnauthorized, dead.res.Status, "the whole session was revoked")
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(tab.access)...).Status)

		// Disable TOTP with a recovery code.
		dis := e.do(http.MethodDelete, "/v1/auth/totp", "", map[string]string{"code": codes[1].(string)}, bearerHdr(viaRC.access)...)
		require.Equal(t, http.StatusNoContent, dis.Status, string(dis.Body))
	})
}

func TestLogoutAndPasswordChange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("lou@example.com")
		a := login(e, "lou@example.com", testPassword)
		b := login(e, "lou@example.com", testPassword)
		c := login(e, "lou@example.com", testPassword)
		list := e.do(http.MethodGet, "/v1/auth/sessions", "", nil, bearerHdr(a.access)...)
		require.Equal(t, http.StatusOK, list.Status)
		require.Len(t, list.JSON(t)["data"].([]any), 3)

		// Logout ends its own session only.
		out := e.auth("/v1/auth/logout", nil, "Cookie", "paymentsd_refresh="+c.refresh)
		require.Equal(t, http.StatusNoContent, out.res.Status)
		require.Equal(t, http.StatusUnauthorized, e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+c.refresh).res.Status)
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(b.access)...).Status)

		// A password change ends every other session.
		pw := e.do(http.MethodPost, "/v1/auth/password", "", map[string]string{"currentPassword": "wrong-password-123", "newPassword": "another-long-password"}, bearerHdr(a.access)...)
		require.Equal(t, http.StatusBadRequest, pw.Status)
		pw = e.do(http.MethodPost, "/v1/auth/password", "", map[string]string{"currentPassword": testPassword, "newPassword": "another-long-password"}, bearerHdr(a.access)...)
		require.Equal(t, http.StatusNoContent, pw.Status, string(pw.Body))
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(b.access)...).Status)
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(a.access)...).Status)
		require.Equal(t, http.StatusOK, login(e, "lou@example.com", "another-long-password").res.Status)

		// Logout-all ends every session, this one too.
		require.Equal(t, http.StatusNoContent, e.do(http.MethodPost, "/v1/auth/logout-all", "", nil, bearerHdr(a.access)...).Status)
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(a.access)...).Status)
		require.Equal(t, http.StatusUnauthorized, e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+a.refresh).res.Status)

		// Disabling the user (paymentsd users disable) ends their sessions.
		d := login(e, "lou@example.com", "another-long-password")
		require.NoError(t, e.app.People.Disable(context.Background(), "lou@example.com"))
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(d.access)...).Status)
	})
}

func TestInvitationAndSecuritySetting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		token, _, err := e.app.People.Invite(context.Background(), "new@example.com", m.Merchant.ID, domain.RoleDeveloper)
		require.NoError(t, err)
		miss := e.auth("/v1/auth/invitations/accept", map[string]string{"token": token})
		require.Equal(t, http.StatusBadRequest, miss.res.Status)
		acc := e.auth("/v1/auth/invitations/accept", map[string]string{"token": token, "password": testPassword})
		require.Equal(t, http.StatusOK, acc.res.Status, string(acc.res.Body))
		require.NotEmpty(t, acc.refresh)
		again := e.auth("/v1/auth/invitations/accept", map[string]string{"token": token, "password": testPassword})
		require.Equal(t, http.StatusBadRequest, again.res.Status)
		code, _, _ := again.res.errorFields(t)
		require.Equal(t, "invalid_invitation", code)

		tok := e.roleToken(m.Merchant.ID, domain.RoleOwner)
		get := e.do(http.MethodGet, "/v1/merchants/"+m.Merchant.ID.String()+"/security", "", nil, bearerHdr(tok)...)
		require.Equal(t, http.StatusOK, get.Status, string(get.Body))
		require.Equal(t, false, get.JSON(t)["require2fa"])
		put := e.do(http.MethodPut, "/v1/merchants/"+m.Merchant.ID.String()+"/security", "", map[string]bool{"require2fa": true}, bearerHdr(tok)...)
		require.Equal(t, http.StatusOK, put.Status, string(put.Body))
		get = e.do(http.MethodGet, "/v1/merchants/"+m.Merchant.ID.String()+"/security", "", nil, bearerHdr(tok)...)
		require.Equal(t, true, get.JSON(t)["require2fa"])
	})
}
