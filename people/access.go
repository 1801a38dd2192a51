package people

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Errors of Directory.Access: the HTTP layer answers them as the errors they wrap.
var (
	// ErrSessionEnded: the session was revoked or expired, or the user is disabled or gone (401).
	ErrSessionEnded = fmt.Errorf("%w: the session ended, or the user is disabled", domain.ErrInvalidToken)
	// ErrNotMember: the person does not act for the merchant (403).
	ErrNotMember = fmt.Errorf("%w: you are not a member of this merchant", domain.ErrForbidden)
)

// Access is what a signed-in person may do for one merchant now.
type Access struct {
	Role            domain.Role
	Email           string
	Require2FA      bool // the merchant requires a second factor of its members
	HasSecondFactor bool // the person has one
}

// Directory answers, at every dashboard request, what a person may do for a merchant: one query
// (user, membership, merchant, session), so a removed member, a changed role, a disabled user
// or a revoked session counts at once.
type Directory struct {
	store *store.Store
	now   func() time.Time
}

// NewDirectory is the directory of the store's people.
func NewDirectory(st *store.Store, now func() time.Time) *Directory {
	if now == nil {
		now = time.Now
	}
	return &Directory{store: st, now: now}
}

// Access is the person's access to the merchant in the session: ErrSessionEnded, ErrNotMember,
// or their role and second-factor standing.
func (d *Directory) Access(ctx context.Context, userID, sessionID, merchantID uuid.UUID) (Access, error) {
	a, err := d.store.Read(ctx).PersonAccess(userID, sessionID, merchantID)
	if errors.Is(err, store.ErrNotFound) {
		return Access{}, ErrSessionEnded
	}
	if err != nil {
		return Access{}, err
	}
	if a.Disabled || a.Session == nil || !live(*a.Session, d.now()) {
		return Access{}, ErrSessionEnded
	}
	if a.Role == "" {
		return Access{}, ErrNotMember
	}
	return Access{Role: a.Role, Email: a.Email, Require2FA: a.Require2FA, HasSecondFactor: a.HasSecondFactor}, nil
}
