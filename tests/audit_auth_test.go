package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// byAction groups audit entries by action.
func byAction(items []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, it := range items {
		a := it["action"].(string)
		out[a] = append(out[a], it)
	}
	return out
}

// The sign-in events of a person are recorded in the log of every merchant they are a member of,
// acted by the person from the request's address and user agent; a failed sign-in of an existing
// user is recorded without anything typed, an unknown email not at all.
func TestAuditLogSignIns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m1 := e.merchant(merchantOpts{deposits: true}).Merchant.ID
		m2 := e.merchant(merchantOpts{deposits: true}).Merchant.ID
		created, err := e.app.People.CreateUser(context.Background(), "ada@example.com", m1, domain.RoleOwner, testPassword)
		require.NoError(t, err)
		uid := created.User.ID
		require.NoError(t, e.app.People.Store.InTx(context.Background(), func(tx *store.Tx) error { // a second merchant: the same person
			return tx.SetMembership(uid, m2, domain.RoleViewer, time.Now())
		}))
		ua := []string{"User-Agent", "audit-signin/2.0"}

		ok := login(e, "ada@example.com", testPassword, ua...)
		require.Equal(t, http.StatusOK, ok.res.Status, string(ok.res.Body))
		bad := login(e, "ada@example.com", "wrong-password-987", ua...)
		require.Equal(t, http.StatusUnauthorized, bad.res.Status)
		require.Equal(t, http.StatusUnauthorized, login(e, "ghost@example.com", "ghost-password-654", ua...).res.Status)

		for _, m := range []uuid.UUID{m1, m2} {
			items, _ := e.auditLog(m, "")
			acts := byAction(items)
			require.Len(t, acts["auth.signed_in"], 1, "merchant %s", m)
			in := acts["auth.signed_in"][0]
			actor := in["actor"].(map[string]any)
			assert.Equal(t, "person", actor["kind"])
			assert.Equal(t, uid.String(), actor["id"])
			assert.Equal(t, "ada@example.com", actor["label"])
			assert.Equal(t, "127.0.0.1", actor["ip"])
			assert.Equal(t, "audit-signin/2.0", actor["userAgent"])
			assert.Equal(t, "user", in["targetType"])
			assert.Equal(t, uid.String(), in["targetId"])
			assert.Equal(t, "password", in["details"].(map[string]any)["method"])
			assert.Equal(t, false, in["details"].(map[string]any)["second_factor"])

			require.Len(t, acts["auth.sign_in_failed"], 1)
			f := acts["auth.sign_in_failed"][0]
			assert.Equal(t, "ada@example.com", f["actor"].(map[string]any)["label"])
			assert.Equal(t, "127.0.0.1", f["actor"].(map[string]any)["ip"])
			assert.Equal(t, map[string]any{"method": "password", "reason": "wrong_password"}, f["details"])
			raw, _ := json.Marshal(items)
			assert.NotContains(t, string(raw), "wrong-password-987", "never the password typed")
			assert.NotContains(t, string(raw), testPassword)
			assert.NotContains(t, string(raw), "ghost", "never an unknown email")
		}

		// Sign-out, sessions revoked, password changed.
		b := login(e, "ada@example.com", testPassword, ua...)
		require.Equal(t, http.StatusNoContent, e.auth("/v1/auth/logout", nil, append([]string{"Cookie", "paymentsd_refresh=" + b.refresh}, ua...)...).res.Status)
		c := login(e, "ada@example.com", testPassword)
		cp, err := e.app.Tokens.VerifyPerson(context.Background(), c.access)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/v1/auth/sessions/"+cp.SessionID.String(), "", nil, append(bearerHdr(ok.access), ua...)...).Status)
		pw := e.do(http.MethodPost, "/v1/auth/password", "", map[string]string{"currentPassword": testPassword, "newPassword": "another-long-password"},
			append(bearerHdr(ok.access), ua...)...)
		require.Equal(t, http.StatusNoContent, pw.Status, string(pw.Body))
		require.Equal(t, http.StatusNoContent, e.do(http.MethodPost, "/v1/auth/logout-all", "", nil, append(bearerHdr(ok.access), ua...)...).Status)

		items, _ := e.auditLog(m2, "")
		acts := byAction(items)
		require.Len(t, acts["auth.signed_out"], 1)
		require.Len(t, acts["auth.sessions_revoked"], 2)
		assert.Equal(t, cp.SessionID.String(), acts["auth.sessions_revoked"][1]["details"].(map[string]any)["session_id"])
		assert.Equal(t, "all", acts["auth.sessions_revoked"][0]["details"].(map[string]any)["sessions"])
		require.Len(t, acts["auth.password_changed"], 1)
		for _, a := range []string{"auth.signed_out", "auth.sessions_revoked", "auth.password_changed"} {
			actor := acts[a][0]["actor"].(map[string]any)
			assert.Equal(t, "ada@example.com", actor["label"], a)
			assert.Equal(t, "127.0.0.1", actor["ip"], a)
			assert.Equal(t, "audit-signin/2.0", actor["userAgent"], a)
		}
		raw, _ := json.Marshal(items)
		assert.NotContains(t, string(raw), "another-long-password")
		assert.NotContains(t, string(raw), b.refresh)
	})
}

// TOTP on and off, a second-factor sign-in, a wrong code, a recovery code spent and a step-up.
func TestAuditLogSecondFactor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true}).Merchant.ID
		e.member(m, "tom@example.com", domain.RoleAdmin)
		pw := "correct horse battery staple"
		first := login(e, "tom@example.com", pw)
		require.Equal(t, http.StatusOK, first.res.Status)
		enroll := e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, enroll.Status, string(enroll.Body))
		secret := enroll.JSON(t)["secret"].(string)
		now := time.Now()
		conf := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": totpCode(t, secret, now.Add(-30*time.Second))}, bearerHdr(first.access)...)
		require.Equal(t, http.StatusOK, conf.Status, string(conf.Body))
		codes := conf.JSON(t)["recoveryCodes"].([]any)

		ch := login(e, "tom@example.com", pw).res.JSON(t)["challengeToken"].(string)
		wrong := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch, "code": "000001"})
		require.Equal(t, http.StatusUnauthorized, wrong.res.Status)
		sf := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch, "code": totpCode(t, secret, now)})
		require.Equal(t, http.StatusOK, sf.res.Status, string(sf.res.Body))
		ch2 := login(e, "tom@example.com", pw).res.JSON(t)["challengeToken"].(string)
		rc := e.auth("/v1/auth/login/second-factor", map[string]string{"challengeToken": ch2, "code": codes[0].(string)})
		require.Equal(t, http.StatusOK, rc.res.Status, string(rc.res.Body))
		up := e.auth("/v1/auth/step-up", map[string]string{"code": totpCode(t, secret, now.Add(30*time.Second))}, bearerHdr(sf.access)...)
		require.Equal(t, http.StatusOK, up.res.Status, string(up.res.Body))
		dis := e.do(http.MethodDelete, "/v1/auth/totp", "", map[string]string{"code": codes[1].(string)}, bearerHdr(sf.access)...)
		require.Equal(t, http.StatusNoContent, dis.Status, string(dis.Body))

		items, _ := e.auditLog(m, "")
		acts := byAction(items)
		require.Len(t, acts["security.totp_enabled"], 1)
		require.Len(t, acts["security.totp_disabled"], 1)
		assert.Equal(t, "recovery_code", acts["security.totp_disabled"][0]["details"].(map[string]any)["method"])
		require.Len(t, acts["security.recovery_codes_used"], 2) // sign-in, and turning TOTP off
		require.Len(t, acts["auth.step_up"], 1)
		assert.Equal(t, "totp", acts["auth.step_up"][0]["details"].(map[string]any)["method"])
		require.Len(t, acts["auth.sign_in_failed"], 1)
		assert.Equal(t, map[string]any{"method": "password+totp", "reason": "wrong_code"}, acts["auth.sign_in_failed"][0]["details"])
		var methods []string
		for _, in := range acts["auth.signed_in"] {
			methods = append(methods, in["details"].(map[string]any)["method"].(string))
		}
		assert.Equal(t, []string{"password+recovery_code", "password+totp", "password"}, methods) // newest first
		raw, _ := json.Marshal(items)
		for _, c := range codes {
			assert.NotContains(t, string(raw), c.(string), "never a recovery code")
		}
		assert.NotContains(t, string(raw), secret)
		assert.NotContains(t, string(raw), "000001")
	})
}

// Merchant-scoped settings: require 2FA, the profile; an invitation accepted.
func TestAuditLogSettingsAndInvitation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true}).Merchant.ID
		base := "/v1/merchants/" + m.String()
		tok := e.roleToken(m, domain.RoleOwner)
		put := e.do(http.MethodPut, base+"/security", "", map[string]bool{"require2fa": true}, bearerHdr(tok)...)
		require.Equal(t, http.StatusOK, put.Status, string(put.Body))
		put = e.do(http.MethodPut, base+"/security", "", map[string]bool{"require2fa": true}, bearerHdr(tok)...) // no change: no entry
		require.Equal(t, http.StatusOK, put.Status, string(put.Body))
		patch := e.do(http.MethodPatch, base+"/profile", "", map[string]any{"displayName": "Ada's Shop", "accentColor": "#AA3300",
			"logoUrl": "https://cdn.example.com/logo.png?sig=sekrit"}, bearerHdr(tok)...)
		require.Equal(t, http.StatusOK, patch.Status, string(patch.Body))

		token, inv, err := e.app.People.Invite(context.Background(), "newbie@example.com", m, domain.RoleDeveloper)
		require.NoError(t, err)
		acc := e.auth("/v1/auth/invitations/accept", map[string]string{"token": token, "password": testPassword}, "User-Agent", "invitee/1.0")
		require.Equal(t, http.StatusOK, acc.res.Status, string(acc.res.Body))

		items, _ := e.auditLog(m, "")
		acts := byAction(items)
		require.Len(t, acts["settings.require_2fa_changed"], 1)
		assert.Equal(t, map[string]any{"from": false, "to": true}, acts["settings.require_2fa_changed"][0]["details"])
		require.Len(t, acts["settings.profile_updated"], 1)
		d := acts["settings.profile_updated"][0]["details"].(map[string]any)
		assert.ElementsMatch(t, []any{"displayName", "logoUrl", "accentColor"}, d["fields"])
		assert.Equal(t, "Ada's Shop", d["displayName"])
		assert.Equal(t, "#aa3300", d["accentColor"])
		assert.Equal(t, "cdn.example.com", d["logoHost"])
		raw, _ := json.Marshal(items)
		assert.False(t, strings.Contains(string(raw), "sekrit"), "the logo URL keeps its host only")

		require.Len(t, acts["invitation.accepted"], 1)
		a := acts["invitation.accepted"][0]
		assert.Equal(t, inv.ID.String(), a["targetId"])
		assert.Equal(t, "newbie@example.com", a["actor"].(map[string]any)["label"])
		assert.Equal(t, "invitee/1.0", a["actor"].(map[string]any)["userAgent"])
		assert.Equal(t, true, a["details"].(map[string]any)["new_user"])
		require.Len(t, acts["member.joined"], 1)
		assert.Equal(t, "developer", acts["member.joined"][0]["details"].(map[string]any)["role"])
		require.Len(t, acts["auth.signed_in"], 1, "accepting signs the person in")
		assert.NotContains(t, string(raw), token)
	})
}
