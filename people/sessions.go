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

// Sessions after sign-in: refresh (rotation and reuse), sign-out, the person's sessions, password
// change and step-up.

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
