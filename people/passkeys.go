package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Passkeys as a second factor (issue 22): registered by a signed-in person, given after the
// password instead of a TOTP code. The WebAuthn ceremonies are the passkeys package's; this file
// ties them to the sign-in's challenge and to sessions.

// RecentSecondFactor is how recent a session's second factor must be for what needs a recent
// one: an x-second-factor: recent operation (server), registering a passkey when the user has a
// second factor already (so a stolen access token alone cannot add one).
const RecentSecondFactor = 10 * time.Minute

// ErrPasskeysOff: no passkeys service configured (no relying party).
var ErrPasskeysOff = errors.New("passkeys are not configured")

// ErrRecentFactorNeeded: changing a person's second factors (registering or removing a passkey,
// setting up TOTP) needs a recent second factor when the person has one, so a stolen access
// token alone can neither remove nor replace it (and so defeat step-up). The server answers 403
// step_up_required.
var ErrRecentFactorNeeded = errors.New("changing your second factors needs a recent second factor: step up first")

// recentFactorError is ErrRecentFactorNeeded naming what was refused.
type recentFactorError struct{ what string }

func (e recentFactorError) Error() string {
	return e.what + " needs a recent second factor: step up first"
}
func (e recentFactorError) Is(target error) bool { return target == ErrRecentFactorNeeded }

// requireRecentFactor refuses (ErrRecentFactorNeeded) a person who has any second factor (TOTP
// or a passkey) and has not given one within RecentSecondFactor in this session (the token's
// sfa); a person with none is not asked. what names the action in the message.
func (s *Service) requireRecentFactor(ctx context.Context, p dashauth.Person, what string) error {
	has, err := s.HasSecondFactor(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !has {
		return nil
	}
	now := s.Now()
	if p.SecondFactorAt == nil || now.Sub(*p.SecondFactorAt) > RecentSecondFactor || p.SecondFactorAt.After(now.Add(dashauth.Leeway)) {
		return recentFactorError{what}
	}
	return nil
}

// secondFactorMethods lists the second factors a user can give at sign-in: totp and
// recovery_code with TOTP on, passkey with at least one passkey; none: no second factor.
func (s *Service) secondFactorMethods(ctx context.Context, userID uuid.UUID) ([]string, error) {
	var methods []string
	has, err := s.HasTOTP(ctx, userID)
	if err != nil {
		return nil, err
	}
	if has {
		methods = append(methods, "totp", "recovery_code")
	}
	n, err := s.passkeyCount(ctx, userID)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		methods = append(methods, "passkey")
	}
	return methods, nil
}

// passkeyCount is the number of the user's passkeys (0 without the passkeys service).
func (s *Service) passkeyCount(ctx context.Context, userID uuid.UUID) (int, error) {
	if s.Passkeys == nil {
		return 0, nil
	}
	return s.Passkeys.Count(ctx, userID)
}

// PasskeyCount is the number of the user's passkeys (Me's passkeyCount).
func (s *Service) PasskeyCount(ctx context.Context, userID uuid.UUID) (int, error) {
	return s.passkeyCount(ctx, userID)
}

// HasSecondFactor reports whether the user has TOTP on or a passkey.
func (s *Service) HasSecondFactor(ctx context.Context, userID uuid.UUID) (bool, error) {
	m, err := s.secondFactorMethods(ctx, userID)
	return len(m) > 0, err
}

// BeginPasskeyRegistration starts registering a passkey for a signed-in person: the creation
// options for navigator.credentials.create. A user with a second factor already needs a recent
// one in this session.
func (s *Service) BeginPasskeyRegistration(ctx context.Context, p dashauth.Person) (json.RawMessage, error) {
	u, err := s.passkeyUser(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.Passkeys.BeginRegistration(ctx, u)
}

// FinishPasskeyRegistration stores the passkey the browser created for a registration begun.
func (s *Service) FinishPasskeyRegistration(ctx context.Context, p dashauth.Person, name string, credential json.RawMessage) (store.Passkey, error) {
	u, err := s.passkeyUser(ctx, p)
	if err != nil {
		return store.Passkey{}, err
	}
	return s.Passkeys.FinishRegistration(ctx, u, name, credential, func(tx *store.Tx, k store.Passkey) error {
		return auditPerson(ctx, tx, u, audit.PasskeyAdded, map[string]any{"passkey_id": k.ID.String(), "name": k.Name})
	})
}

// passkeyUser is the person registering a passkey, checked: passkeys on, user enabled, and a
// recent second factor when the user has one.
func (s *Service) passkeyUser(ctx context.Context, p dashauth.Person) (store.User, error) {
	if s.Passkeys == nil {
		return store.User{}, ErrPasskeysOff
	}
	u, err := s.Store.Read(ctx).GetUser(p.UserID)
	if err != nil {
		return store.User{}, s.noUser(err)
	}
	if u.DisabledAt != nil {
		return store.User{}, ErrSessionEnded
	}
	if err := s.requireRecentFactor(ctx, p, "registering a passkey"); err != nil {
		return store.User{}, err
	}
	return u, nil
}

// ListPasskeys lists the person's passkeys.
func (s *Service) ListPasskeys(ctx context.Context, userID uuid.UUID) ([]store.Passkey, error) {
	if s.Passkeys == nil {
		return []store.Passkey{}, nil
	}
	return s.Passkeys.List(ctx, userID)
}

// DeletePasskey removes one of the person's passkeys; it needs a recent second factor (a stolen
// access token must not remove the factor step-up asks for).
func (s *Service) DeletePasskey(ctx context.Context, p dashauth.Person, id uuid.UUID) error {
	if s.Passkeys == nil {
		return domain.ErrPasskeyNotFound
	}
	if err := s.requireRecentFactor(ctx, p, "removing a passkey"); err != nil {
		return err
	}
	return s.Passkeys.Delete(ctx, p.UserID, id, func(tx *store.Tx) error {
		return auditUser(ctx, tx, p.UserID, audit.PasskeyRemoved, map[string]any{"passkey_id": id.String()})
	})
}

// loginChallenge reads a sign-in's live challenge and its user, throttled like the code step:
// unknown, spent or expired challenges and disabled users are ErrInvalidCredentials.
func (s *Service) loginChallenge(ctx context.Context, challengeToken string, c Client) (store.LoginChallenge, store.User, error) {
	ch, err := s.Store.Read(ctx).LoginChallengeByHash(TokenHash(challengeToken))
	if errors.Is(err, store.ErrNotFound) {
		if err := s.checkThrottle(ctx, "", c.IP); err != nil {
			return ch, store.User{}, err
		}
		return ch, store.User{}, errors.Join(ErrInvalidCredentials, s.recordFailure(ctx, "", c.IP))
	}
	if err != nil {
		return ch, store.User{}, err
	}
	u, err := s.Store.Read(ctx).GetUser(ch.UserID)
	if err != nil {
		return ch, u, err
	}
	if err := s.checkThrottle(ctx, u.Email, c.IP); err != nil {
		return ch, u, err
	}
	if ch.UsedAt != nil || !s.Now().Before(ch.ExpiresAt) || u.DisabledAt != nil {
		return ch, u, ErrInvalidCredentials
	}
	return ch, u, nil
}

// LoginPasskeyBegin starts the passkey step of a sign-in whose password was right: the request
// options for navigator.credentials.get. A user without a passkey is ErrInvalidCredentials.
func (s *Service) LoginPasskeyBegin(ctx context.Context, challengeToken string, c Client) (json.RawMessage, error) {
	if s.Passkeys == nil {
		return nil, ErrInvalidCredentials
	}
	ch, u, err := s.loginChallenge(ctx, challengeToken, c)
	if err != nil {
		return nil, err
	}
	opts, err := s.Passkeys.BeginLogin(ctx, u, ch.ID)
	if errors.Is(err, domain.ErrNoPasskey) {
		return nil, ErrInvalidCredentials
	}
	return opts, err
}

// LoginPasskeyFinish finishes a sign-in with the browser's assertion: the challenge is spent and
// a session starts with its second factor now. A refused assertion (wrong key, spent or expired
// ceremony, a counter that did not advance) counts toward the account's throttle and is
// ErrInvalidCredentials, the refusal's reason joined for the log.
func (s *Service) LoginPasskeyFinish(ctx context.Context, challengeToken string, credential json.RawMessage, c Client) (AuthResult, error) {
	if s.Passkeys == nil {
		return AuthResult{}, ErrInvalidCredentials
	}
	ch, u, err := s.loginChallenge(ctx, challengeToken, c)
	if err != nil {
		return AuthResult{}, err
	}
	first := firstFactor(challengeToken)
	if _, err := s.Passkeys.FinishLogin(ctx, u, ch.ID, credential); err != nil {
		if errors.Is(err, domain.ErrPasskeyRefused) {
			return AuthResult{}, errors.Join(fmt.Errorf("%w (%s)", ErrInvalidCredentials, err.Error()),
				s.recordUserFailure(ctx, u, c.IP, first+"+"+factorPasskey, "passkey_refused"))
		}
		return AuthResult{}, err
	}
	now := s.Now()
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.UseLoginChallenge(ch.ID, now)
		if err == nil && !ok {
			err = ErrInvalidCredentials
		}
		return err
	})
	if err != nil {
		return AuthResult{}, err
	}
	if err := s.Store.Read(ctx).ClearAccountFailures(u.Email); err != nil {
		return AuthResult{}, err
	}
	return s.newSession(ctx, u, &now, c, first, factorPasskey)
}

// StepUpPasskeyBegin starts a step-up with a passkey in a live session: the request options,
// the ceremony bound to the session.
func (s *Service) StepUpPasskeyBegin(ctx context.Context, p dashauth.Person) (json.RawMessage, error) {
	if s.Passkeys == nil {
		return nil, ErrPasskeysOff
	}
	u, err := s.Store.Read(ctx).GetUser(p.UserID)
	if err != nil {
		return nil, s.noUser(err)
	}
	return s.Passkeys.BeginLogin(ctx, u, p.SessionID)
}

// StepUpPasskeyFinish checks the assertion of a step-up begun in this session: the session
// records the second factor and a new access token says it (sfa = now), as StepUp does with a
// code. A refused assertion is domain.ErrPasskeyRefused (400).
func (s *Service) StepUpPasskeyFinish(ctx context.Context, p dashauth.Person, credential json.RawMessage) (AuthResult, error) {
	if s.Passkeys == nil {
		return AuthResult{}, ErrPasskeysOff
	}
	u, err := s.Store.Read(ctx).GetUser(p.UserID)
	if err != nil {
		return AuthResult{}, s.noUser(err)
	}
	if _, err := s.Passkeys.FinishLogin(ctx, u, p.SessionID, credential); err != nil {
		return AuthResult{}, err
	}
	now := s.Now()
	var sess store.Session
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetSessionSecondFactor(p.SessionID, now); err != nil {
			return err
		}
		var err error
		if sess, err = tx.GetSession(p.SessionID); err != nil {
			return err
		}
		return auditPerson(ctx, tx, u, audit.SteppedUp, map[string]any{"method": factorPasskey, "session_id": sess.ID.String()})
	})
	if err != nil {
		return AuthResult{}, err
	}
	sess.Mode = p.Mode
	r, err := s.tokens(ctx, u, sess, "")
	r.RefreshExpiresAt = time.Time{}
	return r, err
}
