package tests

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/webauthntest"
)

// The harness's public base URL is the relying party: id pay.example.test, origin
// https://pay.example.test (the software authenticator reports it as a browser there would).
const passkeyOrigin = "https://pay.example.test"

// registerPasskey registers the authenticator's passkey for the person of access (201).
func registerPasskey(e *env, access string, a *webauthntest.Authenticator, name string) map[string]any {
	e.t.Helper()
	begin := e.do(http.MethodPost, "/v1/auth/passkeys/register/begin", "", nil, bearerHdr(access)...)
	require.Equal(e.t, http.StatusOK, begin.Status, string(begin.Body))
	require.Equal(e.t, "pay.example.test", begin.JSON(e.t)["publicKey"].(map[string]any)["rp"].(map[string]any)["id"])
	cred, err := a.Register(begin.Body)
	require.NoError(e.t, err)
	fin := e.do(http.MethodPost, "/v1/auth/passkeys/register/finish", "", map[string]any{"name": name, "credential": json.RawMessage(cred)}, bearerHdr(access)...)
	require.Equal(e.t, http.StatusCreated, fin.Status, string(fin.Body))
	return fin.JSON(e.t)
}

// passkeyStep begins the passkey step of a sign-in and answers it with the authenticator: the
// finish request's body.
func passkeyStep(e *env, challenge string, a *webauthntest.Authenticator) map[string]any {
	e.t.Helper()
	begin := e.do(http.MethodPost, "/v1/auth/login/passkey/begin", "", map[string]string{"challengeToken": challenge})
	require.Equal(e.t, http.StatusOK, begin.Status, string(begin.Body))
	cred, err := a.Assert(begin.Body)
	require.NoError(e.t, err)
	return map[string]any{"challengeToken": challenge, "credential": json.RawMessage(cred)}
}

func challengeOf(t *testing.T, s signIn) (string, []any) {
	t.Helper()
	require.Equal(t, http.StatusOK, s.res.Status, string(s.res.Body))
	body := s.res.JSON(t)
	require.Equal(t, "second_factor_required", body["status"])
	return body["challengeToken"].(string), body["methods"].([]any)
}

func TestPasskeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("pia@example.com")
		first := login(e, "pia@example.com", testPassword)
		require.Equal(t, http.StatusOK, first.res.Status, string(first.res.Body))
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/passkeys", "", nil).Status)

		a, err := webauthntest.New(passkeyOrigin)
		require.NoError(t, err)
		k := registerPasskey(e, first.access, a, "Laptop")
		require.Equal(t, "Laptop", k["name"])
		list := e.do(http.MethodGet, "/v1/auth/passkeys", "", nil, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, list.Status)
		require.Len(t, list.JSON(t)["data"], 1)
		me := e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(first.access)...)
		require.EqualValues(t, 1, me.JSON(t)["passkeyCount"])

		// The user has a second factor now: this session (no second factor given) registers no more.
		other, err := webauthntest.New(passkeyOrigin)
		require.NoError(t, err)
		r := e.do(http.MethodPost, "/v1/auth/passkeys/register/begin", "", nil, bearerHdr(first.access)...)
		require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		require.Equal(t, "step_up_required", code)

		// A step-up with the passkey in that session: its new token registers.
		su := e.do(http.MethodPost, "/v1/auth/step-up/passkey/begin", "", nil, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, su.Status, string(su.Body))
		sucred, err := a.Assert(su.Body)
		require.NoError(t, err)
		stepped := e.do(http.MethodPost, "/v1/auth/step-up/passkey/finish", "", map[string]any{"credential": json.RawMessage(sucred)}, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, stepped.Status, string(stepped.Body))
		again := e.do(http.MethodPost, "/v1/auth/step-up/passkey/finish", "", map[string]any{"credential": json.RawMessage(sucred)}, bearerHdr(first.access)...)
		require.Equal(t, http.StatusBadRequest, again.Status, "a spent ceremony")
		steppedTok := stepped.JSON(t)["accessToken"].(string)
		r = e.do(http.MethodPost, "/v1/auth/passkeys/register/begin", "", nil, bearerHdr(steppedTok)...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		// Sign-in: the password, then the passkey.
		ch, methods := challengeOf(t, login(e, "pia@example.com", testPassword))
		require.Equal(t, []any{"passkey"}, methods)
		body := passkeyStep(e, ch, a)
		ok := e.auth("/v1/auth/login/passkey/finish", body)
		require.Equal(t, http.StatusOK, ok.res.Status, string(ok.res.Body))
		require.NotEmpty(t, ok.access)
		require.NotEmpty(t, ok.refresh)
		require.Equal(t, "no-store", ok.res.Header.Get("Cache-Control"))

		// The same assertion again: challenge and ceremony are spent.
		spent := e.auth("/v1/auth/login/passkey/finish", body)
		require.Equal(t, http.StatusUnauthorized, spent.res.Status)
		code, _, _ = spent.res.errorFields(t)
		require.Equal(t, "invalid_credentials", code)
		// A spent ceremony's assertion for a new sign-in: refused too.
		ch2, _ := challengeOf(t, login(e, "pia@example.com", testPassword))
		body["challengeToken"] = ch2
		require.Equal(t, http.StatusUnauthorized, e.auth("/v1/auth/login/passkey/finish", body).res.Status)

		// A cloned authenticator: its counter behind the stored one.
		ch3, _ := challengeOf(t, login(e, "pia@example.com", testPassword))
		a.Counter = 0
		require.Equal(t, http.StatusUnauthorized, e.auth("/v1/auth/login/passkey/finish", passkeyStep(e, ch3, a)).res.Status)
		a.Counter = 50

		// Signed in with the passkey just now: a second passkey may be registered.
		registerPasskey(e, ok.access, other, "Phone")
		ch4, _ := challengeOf(t, login(e, "pia@example.com", testPassword))
		require.Equal(t, http.StatusOK, e.auth("/v1/auth/login/passkey/finish", passkeyStep(e, ch4, other)).res.Status)

		// An unknown challenge; a malformed credential.
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodPost, "/v1/auth/login/passkey/begin", "", map[string]string{"challengeToken": "nope"}).Status)
		ch5, _ := challengeOf(t, login(e, "pia@example.com", testPassword))
		bad := e.do(http.MethodPost, "/v1/auth/login/passkey/finish", "", map[string]any{"challengeToken": ch5, "credential": map[string]any{"id": "x"}})
		require.Equal(t, http.StatusUnauthorized, bad.Status, string(bad.Body))
		badReg := e.do(http.MethodPost, "/v1/auth/passkeys/register/finish", "", map[string]any{"name": "X", "credential": map[string]any{"id": "x"}}, bearerHdr(ok.access)...)
		require.Equal(t, http.StatusBadRequest, badReg.Status, string(badReg.Body))
		code, _, _ = badReg.errorFields(t)
		require.Equal(t, "passkey_refused", code)

		// Removed: it signs nobody in.
		id := k["id"].(string)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/v1/auth/passkeys/"+id, "", nil, bearerHdr(ok.access)...).Status)
		require.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, "/v1/auth/passkeys/"+id, "", nil, bearerHdr(ok.access)...).Status)
		require.Equal(t, http.StatusNotFound, e.do(http.MethodDelete, "/v1/auth/passkeys/not-a-uuid", "", nil, bearerHdr(ok.access)...).Status)
		ch6, _ := challengeOf(t, login(e, "pia@example.com", testPassword))
		a.Counter = 100
		begin := e.do(http.MethodPost, "/v1/auth/login/passkey/begin", "", map[string]string{"challengeToken": ch6})
		require.Equal(t, http.StatusOK, begin.Status) // the other passkey remains
		cred, err := a.Assert(begin.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, e.auth("/v1/auth/login/passkey/finish", map[string]any{"challengeToken": ch6, "credential": json.RawMessage(cred)}).res.Status)
	})
}
