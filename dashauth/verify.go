package dashauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// PrincipalKind tells a person (signed in to the dashboard; their role is their membership,
// read at every request) from a service (a token naming its merchants and its role).
type PrincipalKind string

// The kinds of principal.
const (
	PrincipalPerson  PrincipalKind = "person"
	PrincipalService PrincipalKind = "service"
)

// PersonSubjectPrefix starts the sub claim of a person's token: "user:<uuid>".
const PersonSubjectPrefix = "user:"

// Principal is who a verified token speaks for.
type Principal struct {
	Kind    PrincipalKind
	Subject string      // the token's sub (the audit log's actor when there is no email)
	Mode    domain.Mode // the one mode the token acts in: test or live (never empty)
	// A service: the merchants it acts for and its role for each (the token's `role`; an older
	// token's `scope`: read is a viewer, write an admin). A person: none, and no role — it is
	// the person's membership of the merchant asked for, read at every request.
	MerchantIDs []uuid.UUID
	Role        domain.Role
	// A person: who, in which session (revoking it ends the token), and when they last
	// confirmed a second factor (the `sfa` claim; nil: not in this session).
	UserID         uuid.UUID
	Email          string
	SessionID      uuid.UUID
	SecondFactorAt *time.Time
}

// ActsFor reports whether a service principal names the merchant (a person's membership is
// not in the token: see server.PeopleDirectory).
func (p Principal) ActsFor(merchantID uuid.UUID) bool {
	for _, id := range p.MerchantIDs {
		if id == merchantID {
			return true
		}
	}
	return false
}

// May is the older scope view of a service principal: it acts for the merchant and its role
// reads (any role) or writes (admin or above).
func (p Principal) May(merchantID uuid.UUID, scope Scope) bool {
	if scope == ScopeWrite && !p.Role.Includes(domain.RoleAdmin) {
		return false
	}
	return p.Role.Includes(domain.RoleViewer) && p.ActsFor(merchantID)
}

// verifiedClaims are the claims Verify reads: the mode raw (it shadows Claims.Mode), so a token
// without one (test) is told from one whose mode is "", null or not a string (refused).
type verifiedClaims struct {
	Claims
	Mode json.RawMessage `json:"mode"`
}

// Verify checks a token of the built-in issuer: EdDSA only, a published kid, no crit header,
// issuer, audience, expiry and not-before (with Leeway), issued-at (required), a lifetime (exp −
// iat) of at most MaxTTL and an expiry at most MaxTTL (plus Leeway) away, then the scope, the
// merchants and the mode claim ("test" or "live"; none: test). A refused token wraps
// ErrInvalidToken; a database error (reading the keys or the issuer name) is returned as is.
func (i *Issuer) Verify(ctx context.Context, raw string) (Principal, error) {
	issuer, err := i.issuer(ctx)
	if err != nil {
		return Principal{}, err
	}
	var c verifiedClaims
	var storeErr error
	_, err = jwt.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		if err := refuseCrit(t); err != nil {
			return nil, err
		}
		kid, _ := t.Header["kid"].(string)
		iss, _ := t.Claims.GetIssuer()
		k, err := i.publicKey(ctx, kid, iss == issuer)
		if err != nil {
			if !errors.Is(err, errUnknownKID) {
				storeErr = err
			}
			return nil, err
		}
		return k, nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(issuer), jwt.WithAudience(i.Audience),
		jwt.WithExpirationRequired(), jwt.WithLeeway(Leeway), jwt.WithIssuedAt(), jwt.WithTimeFunc(i.Now))
	if storeErr != nil {
		return Principal{}, storeErr
	}
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	// The issuer never mints for longer than MaxTTL: a longer-lived token was not minted by it
	// (or under rules since tightened), and must not outlive a retired key's publication.
	switch {
	case c.IssuedAt == nil:
		return Principal{}, fmt.Errorf("%w: no iat", ErrInvalidToken)
	case c.ExpiresAt.Sub(c.IssuedAt.Time) > MaxTTL:
		return Principal{}, fmt.Errorf("%w: a lifetime longer than %s", ErrInvalidToken, MaxTTL)
	case c.ExpiresAt.After(i.Now().Add(MaxTTL + Leeway)):
		return Principal{}, fmt.Errorf("%w: expires more than %s ahead", ErrInvalidToken, MaxTTL)
	}
	var mode any
	if len(c.Mode) > 0 {
		if err := json.Unmarshal(c.Mode, &mode); err != nil {
			return Principal{}, fmt.Errorf("%w: the mode claim: %v", ErrInvalidToken, err)
		}
	}
	m, err := modeClaim(mode, len(c.Mode) > 0)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: the mode claim %v", ErrInvalidToken, err)
	}
	if strings.HasPrefix(c.Subject, PersonSubjectPrefix) {
		return personPrincipal(c.Claims, m)
	}
	var role any
	if c.Role != nil {
		role = *c.Role
	}
	p, err := principal(c.MerchantIDs, role, c.Role != nil, c.Scope, m)
	p.Subject = c.Subject
	return p, err
}

// personPrincipal reads a person's token: the user in sub, the session in sid, the second
// factor's time in sfa; it names no merchant and no role (both come from the membership).
func personPrincipal(c Claims, mode domain.Mode) (Principal, error) {
	uid, err := uuid.Parse(strings.TrimPrefix(c.Subject, PersonSubjectPrefix))
	if err != nil || uid == uuid.Nil {
		return Principal{}, fmt.Errorf("%w: the sub %q names no user", ErrInvalidToken, c.Subject)
	}
	sid, err := uuid.Parse(c.SessionID)
	if err != nil || sid == uuid.Nil {
		return Principal{}, fmt.Errorf("%w: a person's token without a session (sid)", ErrInvalidToken)
	}
	if len(c.MerchantIDs) > 0 || c.Role != nil || c.Scope != "" {
		// A person's access is their memberships, never the token's say.
		return Principal{}, fmt.Errorf("%w: a person's token names merchants, a role or a scope", ErrInvalidToken)
	}
	p := Principal{Kind: PrincipalPerson, Subject: c.Subject, Mode: mode, UserID: uid, Email: c.Email, SessionID: sid}
	if c.SecondFactorAt != nil {
		t := c.SecondFactorAt.UTC()
		p.SecondFactorAt = &t
	}
	return p, nil
}

// refuseCrit refuses a token with a crit header (RFC 7515 §4.1.11): it names extensions the
// recipient must understand, and we understand none.
func refuseCrit(t *jwt.Token) error {
	if _, ok := t.Header["crit"]; ok {
		return errors.New("a crit header (no extension is understood)")
	}
	return nil
}

// modeClaim reads a mode claim: "test" or "live" exactly; none (!present) is test, any other
// value (null included) refused.
func modeClaim(v any, present bool) (domain.Mode, error) {
	if !present {
		return domain.ModeTest, nil
	}
	switch v {
	case string(domain.ModeTest):
		return domain.ModeTest, nil
	case string(domain.ModeLive):
		return domain.ModeLive, nil
	}
	return "", fmt.Errorf("must be %q or %q (got %v)", domain.ModeTest, domain.ModeLive, v)
}

// principal reads a service token's merchant ids and role: its role claim when present (it
// must name a role), else the older space-separated scope (write: admin, read: viewer).
func principal(ids []string, role any, hasRole bool, scope string, mode domain.Mode) (Principal, error) {
	p := Principal{Kind: PrincipalService, Mode: mode}
	if hasRole {
		s, _ := role.(string)
		r, err := domain.ParseRole(s)
		if err != nil {
			return Principal{}, fmt.Errorf("%w: the role claim: %v", ErrInvalidToken, err)
		}
		p.Role = r
	} else {
		p.Role = ScopeRole(scope)
	}
	if p.Role == "" {
		return Principal{}, fmt.Errorf("%w: no role, and no read or write scope", ErrInvalidToken)
	}
	for _, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil {
			return Principal{}, fmt.Errorf("%w: merchant id %q", ErrInvalidToken, s)
		}
		p.MerchantIDs = append(p.MerchantIDs, id)
	}
	if len(p.MerchantIDs) == 0 {
		return Principal{}, fmt.Errorf("%w: no merchant", ErrInvalidToken)
	}
	return p, nil
}

// ScopeRole is the role of an older token's space-separated scope: write is an admin, read a
// viewer, neither no role ("").
func ScopeRole(scope string) domain.Role {
	var r domain.Role
	for _, s := range strings.Fields(scope) {
		switch Scope(s) {
		case ScopeWrite:
			r = domain.RoleAdmin
		case ScopeRead:
			if r == "" {
				r = domain.RoleViewer
			}
		}
	}
	return r
}
