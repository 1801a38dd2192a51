// Package people owns the dashboard's people: users (an email and an argon2id password hash,
// never the password), the merchants each acts for with a role, and single-use invitations.
package people

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/passkeys"
	"github.com/paymentsd/paymentsd/store"
)

// Errors of the people operations (client faults).
var (
	ErrBadEmail      = errors.New("not an email address")
	ErrShortPassword = fmt.Errorf("a password needs at least %d characters", MinPasswordLength)
	ErrEmailTaken    = errors.New("a user with this email exists")
	ErrNoUser        = errors.New("no such user")
	ErrLongPassword  = fmt.Errorf("a password has at most %d bytes", MaxPasswordLength)
)

// MinPasswordLength is the shortest password accepted (NIST SP 800-63B's floor for a chosen one).
const MinPasswordLength = 12

// MaxPasswordLength bounds what is hashed: argon2 over megabytes would be a cheap denial of service.
const MaxPasswordLength = 256

// InvitationTTL is how long an invitation link works.
const InvitationTTL = 7 * 24 * time.Hour

// hashParams are argon2id's costs: RFC 9106's second recommended option (64 MiB, 3 passes) with
// 2 lanes, about 50–100 ms on a server core: slow for a guesser, quick enough for a sign-in.
var hashParams = &argon2id.Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 2, SaltLength: 16, KeyLength: 32}

// Service manages users, memberships and invitations.
type Service struct {
	Store *store.Store
	Now   func() time.Time
	// Tokens mints the people's access tokens (sign-in, refresh, step-up); Sealer seals their
	// TOTP secrets at rest. Either nil: signing in answers an internal error (no secrets key).
	Tokens *dashauth.Issuer
	Sealer dashauth.Sealer
	// Passkeys registers and checks WebAuthn credentials, a second factor besides TOTP; nil:
	// none (passkeys.go).
	Passkeys *passkeys.Service
	// OIDC is the OpenID Connect provider people may sign in with; nil: none (oidc.go).
	OIDC *OIDCSignIn
}

// CreatedUser is a new user; Password is set when it was generated (shown once, never stored).
type CreatedUser struct {
	User     store.User
	Password string
}

// CreateUser makes a user who acts for merchantID with role. With password empty one is
// generated and returned (once).
func (s *Service) CreateUser(ctx context.Context, email string, merchantID uuid.UUID, role domain.Role, password string) (CreatedUser, error) {
	email, err := checkEmail(email)
	if err != nil {
		return CreatedUser{}, err
	}
	generated := ""
	if password == "" {
		if generated, err = NewPassword(); err != nil {
			return CreatedUser{}, err
		}
		password = generated
	}
	hash, err := HashPassword(password)
	if err != nil {
		return CreatedUser{}, err
	}
	now := s.Now()
	u := store.User{ID: uuid.Must(uuid.NewV7()), Email: email, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetMerchant(merchantID); err != nil {
			return err
		}
		if err := tx.InsertUser(u); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return ErrEmailTaken
			}
			return err
		}
		return tx.SetMembership(u.ID, merchantID, role, now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return CreatedUser{}, domain.ErrMerchantNotFound
	}
	return CreatedUser{User: u, Password: generated}, err
}

// Members lists a merchant's members.
func (s *Service) Members(ctx context.Context, merchantID uuid.UUID) ([]store.Member, error) {
	return s.Store.Read(ctx).Members(merchantID)
}

// Disable stops a user signing in (memberships are kept: the audit trail names them).
func (s *Service) Disable(ctx context.Context, email string) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		u, err := userByEmail(tx, email)
		if err != nil {
			return err
		}
		if err := tx.DisableUser(u.ID, s.Now()); err != nil {
			return err
		}
		return tx.RevokeUserSessions(u.ID, uuid.Nil, s.Now()) // signed out everywhere at once
	})
}

// ResetPassword gives a user a new generated password, returned once.
func (s *Service) ResetPassword(ctx context.Context, email string) (string, error) {
	password, err := NewPassword()
	if err != nil {
		return "", err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		u, err := userByEmail(tx, email)
		if err != nil {
			return err
		}
		if err := tx.SetUserPassword(u.ID, hash, s.Now()); err != nil {
			return err
		}
		return tx.RevokeUserSessions(u.ID, uuid.Nil, s.Now()) // whoever knew the old one is signed out
	})
	return password, err
}

// Invite makes a single-use invitation and returns its token (for the link; only its hash is kept).
func (s *Service) Invite(ctx context.Context, email string, merchantID uuid.UUID, role domain.Role) (string, store.Invitation, error) {
	email, err := checkEmail(email)
	if err != nil {
		return "", store.Invitation{}, err
	}
	token, err := randomText(32)
	if err != nil {
		return "", store.Invitation{}, err
	}
	now := s.Now()
	inv := store.Invitation{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Email: email, Role: role,
		TokenHash: TokenHash(token), ExpiresAt: now.Add(InvitationTTL), CreatedAt: now}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetMerchant(merchantID); err != nil {
			return err
		}
		// An invitation never changes a membership: a member's role changes with SetRole.
		if u, err := tx.UserByEmail(email); err == nil {
			if _, err := tx.Member(merchantID, u.ID); err == nil {
				return fmt.Errorf("%w: %s", domain.ErrAlreadyMember, email)
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.InsertInvitation(inv); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.InvitationCreated,
			TargetType: audit.TargetInvitation, TargetID: inv.ID.String(), Details: map[string]any{"email": email, "role": string(role)}})
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", store.Invitation{}, domain.ErrMerchantNotFound
	}
	return token, inv, err
}

// InvitationURL is an invitation's link: the dashboard's accept page under the service's public
// URL, the token in the fragment, which browsers never send, so it stays out of every server's
// and proxy's logs.
func InvitationURL(publicBaseURL, token string) string {
	return strings.TrimRight(publicBaseURL, "/") + "/dashboard/#/accept-invitation?token=" + token
}

func userByEmail(tx *store.Tx, email string) (store.User, error) {
	u, err := tx.UserByEmail(email)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, ErrNoUser
	}
	return u, err
}

// HashPassword hashes a password with argon2id (PHC string format, salt included).
func HashPassword(password string) (string, error) {
	if len([]rune(password)) < MinPasswordLength {
		return "", ErrShortPassword
	}
	if len(password) > MaxPasswordLength {
		return "", ErrLongPassword
	}
	return argon2id.CreateHash(password, currentHashParams())
}

// CheckPassword compares a password with a stored hash in constant time.
func CheckPassword(password, hash string) (bool, error) {
	if len(password) > MaxPasswordLength {
		return false, nil
	}
	return argon2id.ComparePasswordAndHash(password, hash)
}

// NewPassword generates a password: 20 random bytes, URL-safe base64 (27 characters, 160 bits).
func NewPassword() (string, error) { return randomText(20) }

// TokenHash is the stored form of an invitation token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func randomText(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// checkEmail accepts a bare address (no display name), at most 254 characters, and returns it
// normalised.
func checkEmail(email string) (string, error) {
	email = store.NormalizeEmail(email)
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" || len(email) > 254 || !strings.Contains(email, "@") {
		return "", fmt.Errorf("%w: %q", ErrBadEmail, email)
	}
	return email, nil
}
