package people

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Sign-in and sessions. A sign-in makes a session: a 15-minute access token (a person token of
// the built-in issuer) and a refresh token (the browser keeps it in an HttpOnly cookie) that is
// rotated on every use. The refresh token names its session ("<session id>.<secret>"), so a spent
// one presented again is recognised: the whole session is revoked (whoever holds the current one
// may be a thief) — except the token rotated away in the last RefreshGrace, which is two tabs
// refreshing at once.

// Session timings.
const (
	AccessTTL      = 15 * time.Minute
	SessionTTL     = 30 * 24 * time.Hour // absolute
	SessionIdle    = 7 * 24 * time.Hour  // unused this long: ended
	RefreshGrace   = 10 * time.Second
	ChallengeTTL   = 5 * time.Minute
	maxUserAgent   = 512
	statusSignedIn = "signed_in"
	statusSecond   = "second_factor_required"
)

// Errors of signing in.
var (
	// ErrInvalidCredentials is every refused sign-in: unknown email, wrong password, disabled
	// user, wrong or spent second factor, unknown or expired challenge — one answer for all.
	ErrInvalidCredentials = errors.New("invalid email, password or code")
	// ErrInvalidSession: the refresh token is missing, unknown, spent, expired or revoked.
	ErrInvalidSession = errors.New("no live session: sign in again")
	// ErrWrongPassword: a password change whose current password is wrong.
	ErrWrongPassword = errors.New("the current password is wrong")
	// ErrInvalidInvitation: unknown, used, revoked or expired invitation token.
	ErrInvalidInvitation = errors.New("the invitation is unknown, already used, revoked or expired")
	// ErrPasswordRequired: accepting an invitation as a new user needs a password.
	ErrPasswordRequired = errors.New("a new user sets a password")
	errNoSealer         = errors.New("people: no secrets key to seal second factors with")
)

// Client is where a request comes from (the session records it).
type Client struct {
	IP        string
	UserAgent string
}

// AuthResult is a sign-in's outcome: signed in (tokens) or a second factor to give.
type AuthResult struct {
	Status           string // signed_in or second_factor_required
	AccessToken      string
	ExpiresAt        time.Time
	RefreshToken     string // for the cookie; empty: the cookie stays as it is
	RefreshExpiresAt time.Time
	SessionID        uuid.UUID
	ChallengeToken   string
	Methods          []string
}

// SignedIn reports whether r carries tokens.
func (r AuthResult) SignedIn() bool { return r.Status == statusSignedIn }

// Login checks an email and a password. Every refusal is ErrInvalidCredentials after the same
// work (an unknown email is checked against a dummy hash); a throttled attempt is a
// *ThrottledError before any.
func (s *Service) Login(ctx context.Context, email, password string, c Client) (AuthResult, error) {
	account := store.NormalizeEmail(email)
	if err := s.checkThrottle(ctx, account, c.IP); err != nil {
		return AuthResult{}, err
	}
	u, err := s.Store.Read(ctx).UserByEmail(account)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, err
	}
	hash := u.PasswordHash
	if !found {
		hash = dummyHash()
	}
	match, err := CheckPassword(password, hash)
	if err != nil {
		match = false // a malformed stored hash signs nobody in
	}
	if !found || !match || u.DisabledAt != nil {
		var record error
		if found { // an existing user's team sees the attempt; an unknown email is never logged
			reason := "wrong_password"
			if match {
				reason = "user_disabled"
			}
			record = s.recordUserFailure(ctx, u, c.IP, methodPassword, reason)
		} else {
			record = s.recordFailure(ctx, account, c.IP)
		}
		if record != nil {
			return AuthResult{}, record
		}
		return AuthResult{}, ErrInvalidCredentials
	}
	// The account's failures are cleared when a session is made (newSession), not here: a
	// right password before a second factor is not a sign-in, and must not reset the count of
	// the second factor's guesses.
	return s.signIn(ctx, u, c, methodPassword)
}

// signIn finishes a first factor (methodPassword or methodOIDC): a challenge when the user has
// a second one, else a session.
func (s *Service) signIn(ctx context.Context, u store.User, c Client, first string) (AuthResult, error) {
	methods, err := s.secondFactorMethods(ctx, u.ID) // passkeys.go: TOTP and passkeys
	if err != nil {
		return AuthResult{}, err
	}
	if len(methods) == 0 {
		return s.newSession(ctx, u, nil, c, first, "")
	}
	token, err := randomText(32)
	if err != nil {
		return AuthResult{}, err
	}
	if first == methodOIDC {
		token = oidcChallengePrefix + token
	}
	now := s.Now()
	ch := store.LoginChallenge{ID: uuid.Must(uuid.NewV7()), UserID: u.ID, TokenHash: TokenHash(token), CreatedAt: now, ExpiresAt: now.Add(ChallengeTTL)}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertLoginChallenge(ch, now.Add(-time.Hour)) }); err != nil {
		return AuthResult{}, err
	}
	return AuthResult{Status: statusSecond, ChallengeToken: token, Methods: methods}, nil
}

// LoginSecondFactor finishes a sign-in with its challenge and a TOTP or recovery code. A wrong
// code counts toward the account's throttle; the challenge is spent by the success only.
func (s *Service) LoginSecondFactor(ctx context.Context, challengeToken, code string, c Client) (AuthResult, error) {
	ch, err := s.Store.Read(ctx).LoginChallengeByHash(TokenHash(challengeToken))
	if errors.Is(err, store.ErrNotFound) {
		if err := s.checkThrottle(ctx, "", c.IP); err != nil {
			return AuthResult{}, err
		}
		return AuthResult{}, errors.Join(ErrInvalidCredentials, s.recordFailure(ctx, "", c.IP))
	}
	if err != nil {
		return AuthResult{}, err
	}
	u, err := s.Store.Read(ctx).GetUser(ch.UserID)
	if err != nil {
		return AuthResult{}, err
	}
	if err := s.checkThrottle(ctx, u.Email, c.IP); err != nil {
		return AuthResult{}, err
	}
	now := s.Now()
	if ch.UsedAt != nil || !now.Before(ch.ExpiresAt) || u.DisabledAt != nil {
		return AuthResult{}, ErrInvalidCredentials
	}
	first, second := firstFactor(challengeToken), codeFactor(code)
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := s.useSecondFactor(ctx, tx, u.ID, code); err != nil {
			return err
		}
		ok, err := tx.UseLoginChallenge(ch.ID, now)
		if err == nil && !ok {
			err = ErrInvalidCredentials
		}
		return err
	})
	if errors.Is(err, ErrInvalidCode) || errors.Is(err, ErrNoSecondFactor) {
		return AuthResult{}, errors.Join(ErrInvalidCredentials, s.recordUserFailure(ctx, u, c.IP, first+"+"+second, "wrong_code"))
	}
	if err != nil {
		return AuthResult{}, err
	}
	return s.newSession(ctx, u, &now, c, first, second)
}

// newSession starts a session and mints its tokens; the sign-in is recorded with its method:
// the first factor, and the second ("" none) after a "+". A sign-in is complete here, so the
// account's failures stop counting for the account (they still count for their addresses).
func (s *Service) newSession(ctx context.Context, u store.User, secondFactorAt *time.Time, c Client, first, second string) (AuthResult, error) {
	now := s.Now()
	sess := store.Session{ID: uuid.Must(uuid.NewV7()), UserID: u.ID, Mode: domain.ModeTest, CreatedAt: now, LastUsedAt: now,
		ExpiresAt: now.Add(SessionTTL), SecondFactorAt: secondFactorAt, IP: c.IP, UserAgent: truncate(c.UserAgent, maxUserAgent)}
	refresh, err := newRefreshToken(sess.ID)
	if err != nil {
		return AuthResult{}, err
	}
	sess.RefreshTokenHash = TokenHash(refresh)
	method := first
	if second != "" {
		method += "+" + second
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertSession(sess); err != nil {
			return err
		}
		if err := tx.ClearAccountFailures(u.Email); err != nil {
			return err
		}
		return auditPerson(ctx, tx, u, audit.SignedIn, map[string]any{"method": method, "second_factor": second != "",
			"session_id": sess.ID.String()})
	})
	if err != nil {
		return AuthResult{}, err
	}
	return s.tokens(ctx, u, sess, refresh)
}

func (s *Service) tokens(ctx context.Context, u store.User, sess store.Session, refresh string) (AuthResult, error) {
	if s.Tokens == nil {
		return AuthResult{}, dashauth.ErrNoSecretsKey
	}
	access, exp, err := s.Tokens.MintPerson(ctx, u.ID, u.Email, sess.ID, sess.Mode.Norm(), sess.SecondFactorAt, AccessTTL)
	if err != nil {
		return AuthResult{}, err
	}
	return AuthResult{Status: statusSignedIn, AccessToken: access, ExpiresAt: exp, RefreshToken: refresh,
		RefreshExpiresAt: sess.ExpiresAt, SessionID: sess.ID}, nil
}

// Refresh rotates a refresh token: a new access token (in mode, else the session's) and a new
// refresh token. A spent token presented again revokes the session, except the one rotated away
// within RefreshGrace.
func (s *Service) Refresh(ctx context.Context, refreshToken string, mode domain.Mode) (AuthResult, error) {
	sid, ok := refreshSession(refreshToken)
	if !ok {
		return AuthResult{}, ErrInvalidSession
	}
	next, err := newRefreshToken(sid)
	if err != nil {
		return AuthResult{}, err
	}
	hash := TokenHash(refreshToken)
	now := s.Now()
	var sess store.Session
	var u store.User
	reused := false
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if sess, err = tx.LockSession(sid); err != nil {
			return err
		}
		if !live(sess, now) {
			return ErrInvalidSession
		}
		current := subtle.ConstantTimeCompare([]byte(hash), []byte(sess.RefreshTokenHash)) == 1
		previous := sess.PreviousTokenHash != nil && subtle.ConstantTimeCompare([]byte(hash), []byte(*sess.PreviousTokenHash)) == 1 &&
			sess.RotatedAt != nil && now.Sub(*sess.RotatedAt) <= RefreshGrace
		if !current && !previous {
			reused = true // a spent token: whoever has the current one may not be its owner
			return tx.RevokeSession(sess.UserID, sess.ID, now)
		}
		if u, err = tx.GetUser(sess.UserID); err != nil {
			return err
		}
		if u.DisabledAt != nil {
			return ErrInvalidSession
		}
		if mode != "" {
			sess.Mode = mode
		}
		// The grace rotates from the current token, so the token rotated to just before stays
		// the previous one's successor: both tabs end up with a live token.
		return tx.RotateSession(sess.ID, sess.RefreshTokenHash, TokenHash(next), sess.Mode, now)
	})
	if errors.Is(err, store.ErrNotFound) || reused {
		return AuthResult{}, ErrInvalidSession
	}
	if err != nil {
		return AuthResult{}, err
	}
	return s.tokens(ctx, u, sess, next)
}

// Logout ends the session of a refresh token with Refresh's rule: the current one, or the one
// rotated away within RefreshGrace. Anything else — a spent token among them — is ignored (the
// caller clears the cookie: signing out is always possible and reveals nothing); a spent token
// is not treated as reuse here, so an old cookie neither ends nor harms the live session.
func (s *Service) Logout(ctx context.Context, refreshToken string) error {
	sid, ok := refreshSession(refreshToken)
	if !ok {
		return nil
	}
	hash := TokenHash(refreshToken)
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		sess, err := tx.GetSession(sid)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now := s.Now()
		current := subtle.ConstantTimeCompare([]byte(hash), []byte(sess.RefreshTokenHash)) == 1
		previous := sess.PreviousTokenHash != nil && subtle.ConstantTimeCompare([]byte(hash), []byte(*sess.PreviousTokenHash)) == 1 &&
			sess.RotatedAt != nil && now.Sub(*sess.RotatedAt) <= RefreshGrace
		if !current && !previous {
			return nil
		}
		if sess.RevokedAt != nil {
			return nil // ended already: nothing happens, nothing to record
		}
		if err := tx.RevokeSession(sess.UserID, sess.ID, now); err != nil {
			return err
		}
		return auditUser(ctx, tx, sess.UserID, audit.SignedOut, map[string]any{"session_id": sess.ID.String()})
	})
}

// CheckSession reports whether a person token's session is live: the user's, not revoked, not
// past its absolute or idle expiry, the user not disabled. Else ErrSessionEnded (an invalid
// token). Every bearer-person request calls it.
func (s *Service) CheckSession(ctx context.Context, userID, sessionID uuid.UUID) error {
	sess, err := s.Store.Read(ctx).GetSession(sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionEnded
	}
	if err != nil {
		return err
	}
	if sess.UserID != userID || !live(sess, s.Now()) {
		return ErrSessionEnded
	}
	return nil
}

// LogoutAll ends every session of the user.
func (s *Service) LogoutAll(ctx context.Context, userID uuid.UUID) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.RevokeUserSessions(userID, uuid.Nil, s.Now()); err != nil {
			return err
		}
		return auditUser(ctx, tx, userID, audit.SessionsRevoked, map[string]any{"sessions": "all"})
	})
}

// Sessions lists the user's live sessions, newest first.
func (s *Service) Sessions(ctx context.Context, userID uuid.UUID) ([]store.Session, error) {
	all, err := s.Store.Read(ctx).UserSessions(userID, s.Now())
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sess := range all {
		if live(sess, s.Now()) {
			out = append(out, sess)
		}
	}
	return out, nil
}

// ErrSessionNotFound: no such session of this user.
var ErrSessionNotFound = errors.New("no such session")

// RevokeSession ends one of the user's sessions.
func (s *Service) RevokeSession(ctx context.Context, userID, sessionID uuid.UUID) error {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.RevokeSession(userID, sessionID, s.Now()); err != nil {
			return err
		}
		return auditUser(ctx, tx, userID, audit.SessionsRevoked, map[string]any{"session_id": sessionID.String()})
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionNotFound
	}
	return err
}

// ChangePassword replaces the user's password, given the current one, and ends every other
// session of theirs.
func (s *Service) ChangePassword(ctx context.Context, userID, sessionID uuid.UUID, current, next string) error {
	u, err := s.Store.Read(ctx).GetUser(userID)
	if err != nil {
		return s.noUser(err)
	}
	ok, err := CheckPassword(current, u.PasswordHash)
	if err != nil || !ok {
		return ErrWrongPassword
	}
	hash, err := HashPassword(next)
	if err != nil {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetUserPassword(userID, hash, s.Now()); err != nil {
			return err
		}
		if err := tx.RevokeUserSessions(userID, sessionID, s.Now()); err != nil {
			return err
		}
		return auditPerson(ctx, tx, u, audit.PasswordChanged, map[string]any{"other_sessions_revoked": true})
	})
}

// StepUp takes a second factor in a live session: the session records it and a new access
// token says it (sfa = now), in the mode of the token presented. The code is guessed under the
// sign-in's throttle: a throttled account or address is refused first (*ThrottledError), and a
// wrong code counts as a failure of the account from c's address.
func (s *Service) StepUp(ctx context.Context, p dashauth.Person, code string, c Client) (AuthResult, error) {
	if err := s.guardSecondFactor(ctx, p.UserID, c); err != nil {
		return AuthResult{}, err
	}
	now := s.Now()
	var sess store.Session
	var u store.User
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := s.useSecondFactor(ctx, tx, p.UserID, code); err != nil {
			return err
		}
		if err := tx.SetSessionSecondFactor(p.SessionID, now); err != nil {
			return err
		}
		var err error
		if sess, err = tx.GetSession(p.SessionID); err != nil {
			return err
		}
		if u, err = tx.GetUser(p.UserID); err != nil {
			return err
		}
		return auditPerson(ctx, tx, u, audit.SteppedUp, map[string]any{"method": codeFactor(code), "session_id": sess.ID.String()})
	})
	if err != nil {
		return AuthResult{}, s.secondFactorFailed(ctx, p.UserID, c, err)
	}
	sess.Mode = p.Mode
	r, err := s.tokens(ctx, u, sess, "")
	r.RefreshExpiresAt = time.Time{}
	return r, err
}

// AcceptInvitation spends an invitation and signs its person in. Without a user of the
// invitation's email one is made with password; an existing user proves it is them with their
// password. An existing membership is never changed (an invitation never demotes or promotes).
func (s *Service) AcceptInvitation(ctx context.Context, token, password string, c Client) (AuthResult, error) {
	inv, err := s.Store.Read(ctx).InvitationByHash(TokenHash(token))
	if errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, ErrInvalidInvitation
	}
	if err != nil {
		return AuthResult{}, err
	}
	now := s.Now()
	if inv.UsedAt != nil || inv.RevokedAt != nil || !now.Before(inv.ExpiresAt) {
		return AuthResult{}, ErrInvalidInvitation // one answer for unknown, used, revoked and expired
	}
	if err := s.checkThrottle(ctx, inv.Email, c.IP); err != nil {
		return AuthResult{}, err
	}
	u, err := s.Store.Read(ctx).UserByEmail(inv.Email)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, err
	}
	var newHash string
	if exists {
		ok, err := CheckPassword(password, u.PasswordHash)
		if err != nil || !ok || u.DisabledAt != nil {
			reason := "wrong_password"
			if ok {
				reason = "user_disabled"
			}
			return AuthResult{}, errors.Join(ErrInvalidCredentials, s.recordUserFailure(ctx, u, c.IP, methodPassword, reason))
		}
	} else {
		if password == "" {
			return AuthResult{}, ErrPasswordRequired
		}
		if newHash, err = HashPassword(password); err != nil {
			return AuthResult{}, err
		}
		u = store.User{ID: uuid.Must(uuid.NewV7()), Email: inv.Email, PasswordHash: newHash, CreatedAt: now, UpdatedAt: now}
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.UseInvitation(inv.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return ErrInvalidInvitation
		}
		if !exists {
			if err := tx.InsertUser(u); err != nil {
				return err
			}
		}
		// The invitation's merchant records who accepted it, and who joined (an existing
		// membership stays as it is: nobody joined).
		actx := audit.AsPerson(ctx, u.ID.String(), u.Email)
		_, err = tx.Membership(u.ID, inv.MerchantID)
		joined := errors.Is(err, store.ErrNotFound)
		if err != nil && !joined {
			return err
		}
		if err := audit.Append(actx, tx, audit.Event{MerchantID: inv.MerchantID, Action: audit.InvitationAccepted, TargetType: audit.TargetInvitation,
			TargetID: inv.ID.String(), Details: map[string]any{"email": inv.Email, "role": string(inv.Role), "new_user": !exists,
				"already_member": !joined}}); err != nil {
			return err
		}
		if !joined {
			return nil
		}
		if err := tx.SetMembership(u.ID, inv.MerchantID, inv.Role, now); err != nil {
			return err
		}
		return audit.Append(actx, tx, audit.Event{MerchantID: inv.MerchantID, Action: audit.MemberJoined, TargetType: audit.TargetUser,
			TargetID: u.ID.String(), Details: map[string]any{"email": u.Email, "role": string(inv.Role), "invitation_id": inv.ID.String()}})
	})
	if err != nil {
		return AuthResult{}, err
	}
	return s.signIn(ctx, u, c, methodPassword)
}

// live reports whether a session may be used now.
func live(sess store.Session, now time.Time) bool {
	return sess.RevokedAt == nil && now.Before(sess.ExpiresAt) && now.Before(sess.LastUsedAt.Add(SessionIdle))
}

func newRefreshToken(sid uuid.UUID) (string, error) {
	secret, err := randomText(32)
	if err != nil {
		return "", err
	}
	return sid.String() + "." + secret, nil
}

// refreshSession reads the session a refresh token names.
func refreshSession(token string) (uuid.UUID, bool) {
	id, secret, ok := strings.Cut(token, ".")
	if !ok || len(secret) < 16 || len(id) != 36 {
		return uuid.Nil, false
	}
	sid, err := uuid.Parse(id)
	return sid, err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

func readRandom(b []byte) (int, error) { return rand.Read(b) }
