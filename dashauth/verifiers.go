package dashauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// Name is the built-in issuer's iss claim (recorded in the database on first use).
func (i *Issuer) Name(ctx context.Context) (string, error) { return i.issuer(ctx) }

// Verifiers verifies the dashboard's bearer tokens of the built-in issuer and, when configured,
// of an external OIDC issuer: the token's iss, read unverified only to choose, names the one
// verifier (exact match) that then verifies it fully.
type Verifiers struct {
	builtIn     *Issuer
	builtInName string
	external    *OIDC
}

// NewVerifiers combines the built-in issuer and an optional external one (nil: none). Either may
// be nil, not both; the external issuer may not share the built-in one's name.
func NewVerifiers(ctx context.Context, builtIn *Issuer, external *OIDC) (*Verifiers, error) {
	if builtIn == nil && external == nil {
		return nil, errors.New("no dashboard token issuer")
	}
	v := &Verifiers{builtIn: builtIn, external: external}
	if builtIn != nil {
		name, err := builtIn.Name(ctx)
		if err != nil {
			return nil, fmt.Errorf("the built-in dashboard token issuer's name: %w", err)
		}
		v.builtInName = name
		if external != nil && external.Issuer() == name {
			return nil, fmt.Errorf("%w: the OIDC issuer %q is the built-in issuer's own name", ErrOIDCConfig, name)
		}
	}
	return v, nil
}

// Verify verifies a token with the verifier of its issuer; a token of no known issuer wraps
// ErrInvalidToken.
func (v *Verifiers) Verify(ctx context.Context, raw string) (Principal, error) {
	c := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(raw, c); err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	iss, err := c.GetIssuer()
	switch {
	case err != nil || iss == "":
		return Principal{}, fmt.Errorf("%w: no issuer", ErrInvalidToken)
	case v.builtIn != nil && iss == v.builtInName:
		return v.builtIn.Verify(ctx, raw)
	case v.external != nil && iss == v.external.Issuer():
		return v.external.Verify(ctx, raw)
	}
	return Principal{}, fmt.Errorf("%w: unknown issuer", ErrInvalidToken)
}
