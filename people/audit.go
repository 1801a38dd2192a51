package people

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/store"
)

// A person's own events in the audit log: sign-ins, sessions, password and second factors. A
// person acts for several merchants, so each event is recorded once for every merchant they are
// a member of (each team sees what its members' accounts do), in the transaction of the change,
// acted by the person from the request's address and user agent (authentication puts them in
// the context). Never a password, a code or a token: the details say which method, not what
// was typed.

// Sign-in methods (auth.signed_in's and auth.sign_in_failed's "method").
const (
	methodPassword     = "password"
	methodOIDC         = "oidc"
	factorTOTP         = "totp"
	factorRecoveryCode = "recovery_code"
	factorPasskey      = "passkey"
)

// auditPerson appends action, acted by u, for each merchant u is a member of.
func auditPerson(ctx context.Context, tx *store.Tx, u store.User, action audit.Action, details map[string]any) error {
	ms, err := tx.UserMemberships(u.ID)
	if err != nil {
		return err
	}
	ctx = audit.AsPerson(ctx, u.ID.String(), u.Email)
	for _, m := range ms {
		if err := audit.Append(ctx, tx, audit.Event{MerchantID: m.MerchantID, Action: action, TargetType: audit.TargetUser,
			TargetID: u.ID.String(), Details: details}); err != nil {
			return err
		}
	}
	return nil
}

// auditUser is auditPerson for a user known by id.
func auditUser(ctx context.Context, tx *store.Tx, userID uuid.UUID, action audit.Action, details map[string]any) error {
	u, err := tx.GetUser(userID)
	if err != nil {
		return err
	}
	return auditPerson(ctx, tx, u, action, details)
}

// codeFactor names the second factor a code is: six digits are a TOTP code, anything else a
// recovery code (useSecondFactor's rule).
func codeFactor(code string) string {
	if isTOTPCode(strings.TrimSpace(code)) {
		return factorTOTP
	}
	return factorRecoveryCode
}

// recordUserFailure counts a refused sign-in of an existing user toward the throttle and
// records it in the audit log of their merchants: the method tried and why, never what was
// typed. (An unknown email is only counted: the log never keeps an address nobody has.)
func (s *Service) recordUserFailure(ctx context.Context, u store.User, addr, method, reason string) error {
	now := s.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertLoginFailure(u.Email, addr, now, now.Add(-ThrottleWindow)); err != nil {
			return err
		}
		return auditPerson(ctx, tx, u, audit.SignInFailed, map[string]any{"method": method, "reason": reason})
	})
}

// Challenge tokens of a sign-in whose first factor was the OIDC provider start with this: the
// second step names the method from it (the token's hash covers the prefix, so it cannot be
// changed by whoever holds the token).
const oidcChallengePrefix = "oidc."

// firstFactor is the first factor of the sign-in a challenge token continues.
func firstFactor(challengeToken string) string {
	if strings.HasPrefix(challengeToken, oidcChallengePrefix) {
		return methodOIDC
	}
	return methodPassword
}
