package people

import (
	"context"
	"errors"
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
