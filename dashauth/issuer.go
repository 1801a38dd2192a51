// Package dashauth authenticates the merchant dashboard: a built-in issuer of short-lived
// Ed25519-signed access tokens (keys in the database, private halves sealed, public halves
// published as a JWKS, rotation), and their verification with golang-jwt v5 — issuer, audience,
// expiry, not-before and lifetime always checked, only EdDSA accepted (no `none`, no HMAC keyed
// with a public key, no `crit` extension). A token acts in one mode, test or live (its `mode` claim).
package dashauth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Scope is what a token may do.
type Scope string

// Scopes: read, or read and write.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Audience is the aud claim of the dashboard's access tokens.
const Audience = "paymentsd-dashboard"

// DefaultTTL is an access token's life unless asked otherwise; MaxTTL bounds any.
const (
	DefaultTTL = 15 * time.Minute
	MaxTTL     = 24 * time.Hour
	// Leeway tolerates clocks a little apart for exp, nbf and iat.
	Leeway = 30 * time.Second
)

// Sealer keeps private keys encrypted at rest (webhooks.AESSealer).
type Sealer interface {
	Seal(plain []byte) (string, error)
	Open(sealed string) ([]byte, error)
}

// Errors of the issuer and the verifier.
var (
	ErrNoSecretsKey = errors.New("the dashboard's token issuer needs PAYMENTS_SECRETS_KEY to keep its signing keys sealed")
	ErrBadScope     = errors.New("scope must be read or write")
	ErrBadRole      = errors.New("role must be viewer, developer, admin or owner")
	ErrBadTTL       = fmt.Errorf("the ttl must be between 1s and %s", MaxTTL)
	ErrBadMode      = errors.New("mode must be test or live")
	ErrInvalidToken = errors.New("invalid, expired or unverifiable token")
)

// Issuer mints and verifies the built-in issuer's tokens.
type Issuer struct {
	Store  *store.Store
	Sealer Sealer // nil: no issuer
	// Issuer is the iss claim; empty: the deployment's own, recorded in the database on first use
	// (from DefaultIssuer), so `serve` and the CLI, whatever their public URL, agree.
	Issuer        string
	DefaultIssuer string
	Audience      string // the aud claim
	Now           func() time.Time

	mu      sync.Mutex
	keys    map[string]ed25519.PublicKey // the published keys by kid; nil: not read (or a rotation here)
	loaded  time.Time                    // when keys were read (monotonic clock)
	tried   time.Time                    // when the last read started (monotonic clock)
	reading bool                         // a read is in flight
	gen     uint64                       // bumped by Rotate: a read started before it is not kept
	reload  singleflight.Group           // concurrent readers share one read
	reads   atomic.Int64                 // key reads so far (tests)
	name    string                       // the recorded issuer name, once read
}

// Claims are an access token's claims.
type Claims struct {
	jwt.RegisteredClaims
	Scope       string   `json:"scope,omitempty"`
	MerchantIDs []string `json:"merchant_ids,omitempty"`
	// Mode is the mode the token acts in, "test" or "live" (always set by Mint; a token without
	// it acts in test mode).
	Mode domain.Mode `json:"mode,omitempty"`
	// Role is a service token's role (viewer, developer, admin, owner); an older token has only
	// Scope. A person's token has neither: their role is their membership.
	Role *string `json:"role,omitempty"`
	// A person's token (sub "user:<uuid>"): the session (sid), the email, and when the person
	// last confirmed a second factor (sfa, unix time; absent: not in this session).
	SessionID      string           `json:"sid,omitempty"`
	Email          string           `json:"email,omitempty"`
	SecondFactorAt *jwt.NumericDate `json:"sfa,omitempty"`
}

// Mint issues a test-mode access token for a merchant (MintMode with domain.ModeTest).
func (i *Issuer) Mint(ctx context.Context, merchantID uuid.UUID, scope Scope, ttl time.Duration) (string, time.Time, error) {
	return i.MintMode(ctx, merchantID, domain.ModeTest, scope, ttl)
}

// MintMode issues an access token for a merchant acting in mode with the role of an older scope
// (read: viewer, write: admin); see MintService.
func (i *Issuer) MintMode(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, scope Scope, ttl time.Duration) (string, time.Time, error) {
	if scope != ScopeRead && scope != ScopeWrite {
		return "", time.Time{}, ErrBadScope
	}
	return i.MintService(ctx, merchantID, mode, ScopeRole(string(scope)), ttl)
}

// MintService issues a service token for a merchant acting in mode (test or live; the zero value
// is test) with a role: EdDSA with the newest key (made on first use). It also carries the
// role's older scope (admin and owner: read write; else read), so a deployment rolled back
// still reads it.
func (i *Issuer) MintService(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, role domain.Role, ttl time.Duration) (string, time.Time, error) {
	if _, err := domain.ParseRole(string(role)); err != nil {
		return "", time.Time{}, ErrBadRole
	}
	if err := i.checkMint(mode, ttl); err != nil {
		return "", time.Time{}, err
	}
	if _, err := i.Store.Read(ctx).GetMerchant(merchantID); err != nil {
		return "", time.Time{}, err
	}
	scopes := "read"
	if role.Includes(domain.RoleAdmin) {
		scopes = "read write"
	}
	r := string(role)
	return i.sign(ctx, ttl, func(c *Claims) {
		c.Subject, c.Scope, c.MerchantIDs, c.Role, c.Mode = merchantID.String(), scopes, []string{merchantID.String()}, &r, mode.Norm()
	})
}

// MintPerson issues a person's access token for a session (the sessions' code calls it at sign
// in, refresh and step-up): sub "user:<id>", sid, email, the mode, and sfa when the person
// confirmed a second factor (secondFactorAt, nil: not in this session). It names no merchant
// and no role: those are the person's memberships, read at every request.
func (i *Issuer) MintPerson(ctx context.Context, userID uuid.UUID, email string, sessionID uuid.UUID, mode domain.Mode,
	secondFactorAt *time.Time, ttl time.Duration) (string, time.Time, error) {
	if userID == uuid.Nil || sessionID == uuid.Nil {
		return "", time.Time{}, errors.New("dashauth: a person's token needs a user and a session")
	}
	if err := i.checkMint(mode, ttl); err != nil {
		return "", time.Time{}, err
	}
	return i.sign(ctx, ttl, func(c *Claims) {
		c.Subject, c.SessionID, c.Email, c.Mode = PersonSubjectPrefix+userID.String(), sessionID.String(), email, mode.Norm()
		if secondFactorAt != nil {
			c.SecondFactorAt = jwt.NewNumericDate(secondFactorAt.UTC().Truncate(time.Second))
		}
	})
}

// checkMint checks what every token needs: an issuer, a mode, a lifetime within bounds.
func (i *Issuer) checkMint(mode domain.Mode, ttl time.Duration) error {
	if i.Sealer == nil {
		return ErrNoSecretsKey
	}
	if mode != "" && mode != domain.ModeTest && mode != domain.ModeLive {
		return ErrBadMode
	}
	if ttl < time.Second || ttl > MaxTTL {
		return ErrBadTTL
	}
	return nil
}

// sign signs a token with the registered claims (issuer, audience, now, ttl, a fresh jti) and
// what set adds.
func (i *Issuer) sign(ctx context.Context, ttl time.Duration, set func(*Claims)) (string, time.Time, error) {
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
	c := Claims{RegisteredClaims: jwt.RegisteredClaims{Issuer: issuer, Audience: jwt.ClaimStrings{i.Audience},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp), ID: uuid.NewString()}}
	set(&c)
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(priv)
	return s, exp, err
}

// signingKey is the newest key, made when there is none.
func (i *Issuer) signingKey(ctx context.Context) (string, ed25519.PrivateKey, error) {
	keys, err := i.Store.Read(ctx).SigningKeys(i.Now().Add(-MaxTTL))
	if err != nil {
		return "", nil, err
	}
	for _, k := range keys {
		if k.RetiredAt == nil {
			seed, err := i.Sealer.Open(k.PrivateSealed)
			if err != nil {
				return "", nil, fmt.Errorf("the dashboard signing key %s does not open (PAYMENTS_SECRETS_KEY changed? `paymentsd tokens rotate-key`): %w", k.KID, err)
			}
			return k.KID, ed25519.NewKeyFromSeed(seed), nil
		}
	}
	k, err := i.Rotate(ctx)
	if err != nil {
		return "", nil, err
	}
	seed, err := i.Sealer.Open(k.PrivateSealed)
	if err != nil {
		return "", nil, err
	}
	return k.KID, ed25519.NewKeyFromSeed(seed), nil
}

// Rotate makes a new signing key; the previous ones stay published until their tokens expired.
func (i *Issuer) Rotate(ctx context.Context) (store.SigningKey, error) {
	if i.Sealer == nil {
		return store.SigningKey{}, ErrNoSecretsKey
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return store.SigningKey{}, err
	}
	sealed, err := i.Sealer.Seal(priv.Seed())
	if err != nil {
		return store.SigningKey{}, err
	}
	id := uuid.Must(uuid.NewV7())
	k := store.SigningKey{KID: hex.EncodeToString(id[:8]), PrivateSealed: sealed, PublicKey: base64.RawURLEncoding.EncodeToString(pub),
		CreatedAt: i.Now()}
	if err := i.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSigningKey(k) }); err != nil {
		return store.SigningKey{}, err
	}
	i.mu.Lock()
	i.keys, i.tried = nil, time.Time{} // published here at once (other processes: see publicKey)
	i.gen++
	i.mu.Unlock()
	return k, nil
}

// issuerSetting records the deployment's issuer name.
const issuerSetting = "dashboard_token_issuer"

// issuer is the iss claim of this deployment's tokens.
func (i *Issuer) issuer(ctx context.Context) (string, error) {
	if i.Issuer != "" {
		return i.Issuer, nil
	}
	// Recorded once, never changed: read from the database once per process, not per request.
	i.mu.Lock()
	name := i.name
	i.mu.Unlock()
	if name != "" {
		return name, nil
	}
	v, err := i.recordedIssuer(ctx)
	if err == nil {
		i.mu.Lock()
		i.name = v
		i.mu.Unlock()
	}
	return v, err
}

func (i *Issuer) recordedIssuer(ctx context.Context) (string, error) {
	v, err := i.Store.Read(ctx).Setting(issuerSetting)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	v = strings.TrimRight(i.DefaultIssuer, "/")
	if v == "" {
		v = "paymentsd"
	}
	err = i.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSetting(issuerSetting, v) })
	if errors.Is(err, store.ErrConflict) {
		return i.Store.Read(ctx).Setting(issuerSetting)
	}
	return v, err
}
