package dashauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// Principal is who a verified token speaks for.
type Principal struct {
	MerchantIDs []uuid.UUID
	Scope       Scope       // read, or write (which includes read)
	Mode        domain.Mode // the one mode the token acts in: test or live (never empty)
	Subject     string      // the token's sub claim: who it was issued to (the audit log's actor)
}

// May reports whether the principal acts for a merchant, with at least scope.
func (p Principal) May(merchantID uuid.UUID, scope Scope) bool {
	if scope == ScopeWrite && p.Scope != ScopeWrite {
		return false
	}
	for _, id := range p.MerchantIDs {
		if id == merchantID {
			return true
		}
	}
	return false
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
	p, err := principal(c.MerchantIDs, c.Scope, m)
	p.Subject = c.Subject
	return p, err
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

// principal reads the merchant ids and the space-separated scope of a verified token.
func principal(ids []string, scope string, mode domain.Mode) (Principal, error) {
	p := Principal{Mode: mode}
	for _, s := range strings.Fields(scope) {
		switch Scope(s) {
		case ScopeWrite:
			p.Scope = ScopeWrite
		case ScopeRead:
			if p.Scope == "" {
				p.Scope = ScopeRead
			}
		}
	}
	if p.Scope == "" {
		return Principal{}, fmt.Errorf("%w: no read or write scope", ErrInvalidToken)
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
