package dashauth

// Person tokens: access tokens of the built-in issuer for a signed-in person (issue 22), not for
// a merchant. sub is "user:<uuid>", sid the session, sfa the time of the session's last second
// factor (absent: none yet), email the user's address, mode test or live. They carry no
// merchant_ids and no scope: Verify refuses them, so they reach only what reads them as a person.
//
// Integrator: the permissions helper has its own MintPerson with this signature; keep one.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// personSubjectPrefix starts a person token's sub.
const personSubjectPrefix = "user:"

// PersonClaims are a person token's claims.
type PersonClaims struct {
	jwt.RegisteredClaims
	SessionID    string      `json:"sid"`
	Email        string      `json:"email,omitempty"`
	SecondFactor *int64      `json:"sfa,omitempty"` // unix seconds
	Mode         domain.Mode `json:"mode"`
}

// Person is who a verified person token speaks for.
type Person struct {
	UserID         uuid.UUID
	Email          string
	SessionID      uuid.UUID
	Mode           domain.Mode
	SecondFactorAt *time.Time
	ExpiresAt      time.Time
}

// MintPerson issues a person's access token for a session.
func (i *Issuer) MintPerson(ctx context.Context, userID uuid.UUID, email string, sessionID uuid.UUID, mode domain.Mode, secondFactorAt *time.Time, ttl time.Duration) (string, time.Time, error) {
	if i.Sealer == nil {
		return "", time.Time{}, ErrNoSecretsKey
	}
	if mode != "" && mode != domain.ModeTest && mode != domain.ModeLive {
		return "", time.Time{}, ErrBadMode
	}
	if ttl < time.Second || ttl > MaxTTL {
		return "", time.Time{}, ErrBadTTL
	}
	kid, priv, err := i.signingKey(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	issuer, err := i.issuer(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	now := i.Now().Truncate(time.Second)
	exp := now.Add(ttl)
	c := PersonClaims{RegisteredClaims: jwt.RegisteredClaims{Issuer: issuer, Subject: personSubjectPrefix + userID.String(),
		Audience: jwt.ClaimStrings{i.Audience}, IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp), ID: uuid.NewString()}, SessionID: sessionID.String(), Email: email, Mode: mode.Norm()}
	if secondFactorAt != nil {
		s := secondFactorAt.Unix()
		c.SecondFactor = &s
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(priv)
	return s, exp, err
}

// VerifyPerson checks a person token of the built-in issuer with Verify's rules (EdDSA only, a
// published kid, no crit, issuer, audience, expiry, lifetime) and reads its person. Whether the
// session is still live is the caller's check (people.Service.CheckSession).
func (i *Issuer) VerifyPerson(ctx context.Context, raw string) (Person, error) {
	issuer, err := i.issuer(ctx)
	if err != nil {
		return Person{}, err
	}
	var c PersonClaims
	var storeErr error
	_, err = jwt.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		if err := refuseCrit(t); err != nil {
			return nil, err
		}
		kid, _ := t.Header["kid"].(string)
		iss, _ := t.Claims.GetIssuer()
		k, err := i.publicKey(ctx, kid, iss == issuer)
		if err != nil {
			if err != errUnknownKID {
				storeErr = err
			}
			return nil, err
		}
		return k, nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(issuer), jwt.WithAudience(i.Audience),
		jwt.WithExpirationRequired(), jwt.WithLeeway(Leeway), jwt.WithIssuedAt(), jwt.WithTimeFunc(i.Now))
	if storeErr != nil {
		return Person{}, storeErr
	}
	if err != nil {
		return Person{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if c.IssuedAt == nil || c.ExpiresAt.Sub(c.IssuedAt.Time) > MaxTTL || c.ExpiresAt.After(i.Now().Add(MaxTTL+Leeway)) {
		return Person{}, fmt.Errorf("%w: lifetime", ErrInvalidToken)
	}
	rest, ok := strings.CutPrefix(c.Subject, personSubjectPrefix)
	if !ok {
		return Person{}, fmt.Errorf("%w: not a person token", ErrInvalidToken)
	}
	uid, err := uuid.Parse(rest)
	if err != nil {
		return Person{}, fmt.Errorf("%w: sub", ErrInvalidToken)
	}
	sid, err := uuid.Parse(c.SessionID)
	if err != nil {
		return Person{}, fmt.Errorf("%w: sid", ErrInvalidToken)
	}
	if c.Mode != domain.ModeTest && c.Mode != domain.ModeLive {
		return Person{}, fmt.Errorf("%w: mode", ErrInvalidToken)
	}
	p := Person{UserID: uid, Email: c.Email, SessionID: sid, Mode: c.Mode, ExpiresAt: c.ExpiresAt.Time}
	if c.SecondFactor != nil {
		t := time.Unix(*c.SecondFactor, 0).UTC()
		p.SecondFactorAt = &t
	}
	return p, nil
}
