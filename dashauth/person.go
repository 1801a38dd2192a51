package dashauth

// Person tokens: access tokens of the built-in issuer for a signed-in person (issue 22), not for
// a merchant. sub is "user:<uuid>", sid the session, sfa the time of the session's last second
// factor (absent: none yet), email the user's address, mode test or live. They carry no
// merchant_ids, no role and no scope: a person's access is their memberships, read at each request.
// Minted by Issuer.MintPerson; verified by Verify (a Principal of kind person) or VerifyPerson.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// Person is who a verified person token speaks for.
type Person struct {
	UserID         uuid.UUID
	Email          string
	SessionID      uuid.UUID
	Mode           domain.Mode
	SecondFactorAt *time.Time
}

// VerifyPerson checks a token with Verify's rules and accepts a person's only (a service token
// is refused). Whether the session is still live is the caller's check
// (people.Service.CheckSession).
func (i *Issuer) VerifyPerson(ctx context.Context, raw string) (Person, error) {
	p, err := i.Verify(ctx, raw)
	if err != nil {
		return Person{}, err
	}
	if p.Kind != PrincipalPerson {
		return Person{}, fmt.Errorf("%w: not a person's token", ErrInvalidToken)
	}
	return Person{UserID: p.UserID, Email: p.Email, SessionID: p.SessionID, Mode: p.Mode, SecondFactorAt: p.SecondFactorAt}, nil
}
