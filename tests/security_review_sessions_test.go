package tests

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/store"
)

// Regression tests of the security review of the merchant dashboard, sessions' side (the revoked invitation,
// the second factor's guessing limit, signing out with a spent refresh token).

// invite makes an invitation through the API and answers its id and its token.
func invite(e *env, base string, tok []string, email, role string) (id, token string) {
	e.t.Helper()
	r := e.do(http.MethodPost, base+"/invitations", "", map[string]any{"email": email, "role": role}, tok...)
	require.Equal(e.t, http.StatusCreated, r.Status, string(r.Body))
	created := r.JSON(e.t)
	link := created["inviteUrl"].(string)
	i := strings.Index(link, "token=")
	require.GreaterOrEqual(e.t, i, 0, link)
	return created["invitation"].(map[string]any)["id"].(string), link[i+len("token="):]
}

func requireInvalidInvitation(t *testing.T, r signIn) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.res.Status, string(r.res.Body))
	code, _, _ := r.res.errorFields(t)
	require.Equal(t, "invalid_invitation", code)
	require.Empty(t, r.access)
	require.Empty(t, r.refresh)
}

// A revoked invitation is refused like an unknown one: no user, no membership, no session.
func TestRevokedInvitationIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{name: "A"}).Merchant.ID
		base := "/v1/merchants/" + m.String()
		tok := bearerHeader(e.teamToken(m))
		id, token := invite(e, base, tok, "mallory@example.com", "admin")
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, base+"/invitations/"+id, "", nil, tok...).Status)

		requireInvalidInvitation(t, e.auth("/v1/auth/invitations/accept", map[string]any{"token": token, "password": testPassword}))
		_, err := e.app.Store.Read(context.Background()).UserByEmail("mallory@example.com")
		require.True(t, errors.Is(err, store.ErrNotFound), "no user made: %v", err)
		members := e.do(http.MethodGet, base+"/members", "", nil, tok...)
		require.Equal(t, http.StatusOK, members.Status)
		require.NotContains(t, string(members.Body), "mallory@example.com")
		// The store refuses to spend it too (the update's own condition).
		inv, err := e.app.Store.Read(context.Background()).InvitationByHash(people.TokenHash(token))
		require.NoError(t, err)
		require.NotNil(t, inv.RevokedAt)
		ok, err := e.app.Store.Read(context.Background()).UseInvitation(inv.ID, time.Now())
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// A change to a person's membership revokes their open invitations: an old link no longer
// signs anyone in (and never changes the membership).
func TestInvitationRevokedByRoleChangeIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{name: "A"}).Merchant.ID
		base := "/v1/merchants/" + m.String()
		tok := bearerHeader(e.teamToken(m))
		_, token := invite(e, base, tok, "dana@example.com", "owner")
		dana := e.member(m, "dana@example.com", domain.RoleViewer) // a member by another way since
		r := e.do(http.MethodPatch, base+"/members/"+dana.String(), "", map[string]any{"role": "developer"}, tok...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		requireInvalidInvitation(t, e.auth("/v1/auth/invitations/accept", map[string]any{"token": token, "password": "correct horse battery staple"}))
		role, err := e.app.Store.Read(context.Background()).Membership(dana, m)
		require.NoError(t, err)
		require.Equal(t, "developer", role)
	})
}

// enrollTOTP turns TOTP on for a signed-in person and answers its secret.
func enrollTOTP(t *testing.T, e *env, access string) string {
	t.Helper()
	enroll := e.do(http.MethodPost, "/v1/auth/totp/enroll", "", nil, bearerHdr(access)...)
	require.Equal(e.t, http.StatusOK, enroll.Status, string(enroll.Body))
	secret := enroll.JSON(e.t)["secret"].(string)
	cf := e.do(http.MethodPost, "/v1/auth/totp/confirm", "", map[string]string{"code": totpCode(t, secret, time.Now())}, bearerHdr(access)...)
	require.Equal(e.t, http.StatusOK, cf.Status, string(cf.Body))
	return secret
}

func requireThrottled(t *testing.T, r response) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	code, _, _ := r.errorFields(t)
	require.Equal(t, "too_many_attempts", code)
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After: %q", r.Header.Get("Retry-After"))
	require.Positive(t, retry)
	require.LessOrEqual(t, retry, int(people.ThrottleWindow/time.Second))
}

// The right password before the second factor does not reset the count of wrong codes: a
// guesser signing in again between rounds of wrong codes is throttled within the account's
// limit, and then even the right password and the right code are refused.
func TestSecondFactorGuessesNotResetByPassword(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("tess@example.com")
		enrollTOTP(t, e, login(e, "tess@example.com", testPassword).access)
		wrong := 0
		var throttled *response
	rounds:
		for round := 0; round < 5; round++ {
			s := login(e, "tess@example.com", testPassword)
			if s.res.Status == http.StatusTooManyRequests {
				throttled = &s.res
				break
			}
			ch, _ := challengeOf(t, s)
			for i := 0; i < people.AccountFailureLimit-1; i++ {
				r := e.do(http.MethodPost, "/v1/auth/login/second-factor", "", map[string]string{"challengeToken": ch, "code": "000001"})
				if r.Status == http.StatusTooManyRequests {
					throttled = &r
					break rounds
				}
				require.Equal(t, http.StatusUnauthorized, r.Status, "round %d try %d: %s", round, i, r.Body)
				wrong++
			}
		}
		require.NotNil(t, throttled, "never throttled after %d wrong codes", wrong)
		requireThrottled(t, *throttled)
		require.Equal(t, people.AccountFailureLimit, wrong, "wrong codes checked before the throttle")
		requireThrottled(t, login(e, "tess@example.com", testPassword).res)
	})
}

// Wrong step-up codes count toward the throttle: the 11th attempt is refused before it is
// checked, even with the right code.
func TestStepUpThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("sam@example.com")
		s := login(e, "sam@example.com", testPassword)
		secret := enrollTOTP(t, e, s.access)
		for i := 1; i <= people.AccountFailureLimit; i++ {
			r := e.do(http.MethodPost, "/v1/auth/step-up", "", map[string]string{"code": "000002"}, bearerHdr(s.access)...)
			require.Equal(t, http.StatusBadRequest, r.Status, "attempt %d: %s", i, r.Body)
			code, _, _ := r.errorFields(t)
			require.Equal(t, "invalid_code", code)
		}
		requireThrottled(t, e.do(http.MethodPost, "/v1/auth/step-up", "", map[string]string{"code": "000002"}, bearerHdr(s.access)...))
		requireThrottled(t, e.do(http.MethodPost, "/v1/auth/step-up", "", map[string]string{"code": totpCode(t, secret, time.Now().Add(60*time.Second))}, bearerHdr(s.access)...))
		// Turning TOTP off shares the limit.
		requireThrottled(t, e.do(http.MethodDelete, "/v1/auth/totp", "", map[string]string{"code": totpCode(t, secret, time.Now().Add(60*time.Second))}, bearerHdr(s.access)...))
	})
}

// Wrong codes to turn TOTP off count toward the throttle too.
func TestDisableTOTPThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("dot@example.com")
		first := login(e, "dot@example.com", testPassword)
		secret := enrollTOTP(t, e, first.access)
		for i := 1; i <= people.AccountFailureLimit; i++ {
			r := e.do(http.MethodDelete, "/v1/auth/totp", "", map[string]string{"code": "000003"}, bearerHdr(first.access)...)
			require.Equal(t, http.StatusBadRequest, r.Status, "attempt %d: %s", i, r.Body)
		}
		requireThrottled(t, e.do(http.MethodDelete, "/v1/auth/totp", "", map[string]string{"code": totpCode(t, secret, time.Now().Add(30*time.Second))}, bearerHdr(first.access)...))
		has, err := e.app.People.HasTOTP(context.Background(), userID(e, "dot@example.com"))
		require.NoError(t, err)
		require.True(t, has, "still on")
	})
}

// A completed sign-in stops the account's failures counting for the account only: the
// address still counts them.
func TestSignInClearsAccountFailuresNotAddress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		now := time.Now().UTC()
		require.NoError(t, e.app.Store.InTx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 3; i++ {
				if err := tx.InsertLoginFailure("Ann@Example.com", "192.0.2.7", now.Add(-time.Duration(i)*time.Second), now.Add(-time.Hour)); err != nil {
					return err
				}
			}
			return tx.ClearAccountFailures("ann@example.com")
		}))
		acc, err := e.app.Store.Read(ctx).AccountFailuresSince("ann@example.com", now.Add(-time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, acc)
		addr, err := e.app.Store.Read(ctx).AddressFailuresSince("192.0.2.7", now.Add(-time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, addr, 3)
	})
}

// Signing out follows the refresh rule: a token spent before the previous one (or the previous
// one after the grace) only clears the cookie; the session lives on and is not revoked as a
// reuse. The current token, or the previous one within the grace, ends it.
func TestLogoutWithSpentRefreshToken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.person("lou@example.com")
		s := login(e, "lou@example.com", testPassword)
		t0 := s.refresh
		r1 := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+t0)
		require.Equal(t, http.StatusOK, r1.res.Status, string(r1.res.Body))
		r2 := e.auth("/v1/auth/refresh", nil, "Cookie", "paymentsd_refresh="+r1.refresh)
		require.Equal(t, http.StatusOK, r2.res.Status, string(r2.res.Body))

		out := e.do(http.MethodPost, "/v1/auth/logout", "", nil, "Cookie", "paymentsd_refresh="+t0)
		require.Equal(t, http.StatusNoContent, out.Status)
		require.Contains(t, out.Header.Get("Set-Cookie"), "paymentsd_refresh=;")
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(r2.access)...).Status, "the session lives on")

		// The previous token after the grace: the same.
		svc := e.app.People
		saved := svc.Now
		svc.Now = func() time.Time { return saved().Add(people.RefreshGrace + 2*time.Second) }
		out = e.do(http.MethodPost, "/v1/auth/logout", "", nil, "Cookie", "paymentsd_refresh="+r1.refresh)
		svc.Now = saved
		require.Equal(t, http.StatusNoContent, out.Status)
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(r2.access)...).Status, "the session lives on")

		// The previous token within the grace ends it.
		out = e.do(http.MethodPost, "/v1/auth/logout", "", nil, "Cookie", "paymentsd_refresh="+r1.refresh)
		require.Equal(t, http.StatusNoContent, out.Status)
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(r2.access)...).Status)

		// And the current token of another session ends that one.
		s2 := login(e, "lou@example.com", testPassword)
		require.Equal(t, http.StatusNoContent, e.do(http.MethodPost, "/v1/auth/logout", "", nil, "Cookie", "paymentsd_refresh="+s2.refresh).Status)
		require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, "/v1/auth/me", "", nil, bearerHdr(s2.access)...).Status)
	})
}

func userID(e *env, email string) uuid.UUID {
	e.t.Helper()
	u, err := e.app.Store.Read(context.Background()).UserByEmail(email)
	require.NoError(e.t, err)
	return u.ID
}

// Two people accepting one invitation at once: the conditional update lets only one spend it.
func TestInvitationAcceptedOnceUnderConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{name: "A"}).Merchant.ID
		base := "/v1/merchants/" + m.String()
		_, token := invite(e, base, bearerHeader(e.teamToken(m)), "twice@example.com", "viewer")
		errs := make(chan error, 2)
		for i := 0; i < 2; i++ {
			go func() {
				_, err := e.app.People.AcceptInvitation(context.Background(), token, testPassword, people.Client{IP: "192.0.2.9"})
				errs <- err
			}()
		}
		var won, refused int
		for i := 0; i < 2; i++ {
			switch err := <-errs; {
			case err == nil:
				won++
			case errors.Is(err, people.ErrInvalidInvitation), errors.Is(err, people.ErrInvalidCredentials):
				refused++ // lost the race; or, the user made by the winner, the loser's password check
			default:
				t.Fatalf("unexpected: %v", err)
			}
		}
		require.Equal(t, 1, won)
		require.Equal(t, 1, refused)
	})
}
