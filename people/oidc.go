package people

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/paymentsd/paymentsd/store"
)

// Sign-in with the configured OpenID Connect provider (issue 22): the authorization code flow
// with PKCE (S256). The start makes a state, a nonce and a PKCE verifier; the browser keeps the
// state in a short-lived cookie (it binds the callback to the browser that started: a callback
// URL sent to someone else finds no cookie), the database keeps the state's hash with the nonce
// and the verifier (never leaving the server), spent once. The callback checks the ID token
// (signature, issuer, audience = client id, expiry, nonce), requires email_verified, and signs in
// the existing user of that email — an OIDC sign-in never makes a user. A user with a second
// factor continues at the second-factor step unless the token's amr says the provider did MFA.

// OIDCLoginTTL is how long a sign-in begun may come back.
const OIDCLoginTTL = 10 * time.Minute

// OIDCSignInConfig configures the sign-in with an OIDC provider.
type OIDCSignInConfig struct {
	Issuer       string // PAYMENTS_OIDC_ISSUER
	ClientID     string // PAYMENTS_OIDC_CLIENT_ID
	ClientSecret string // PAYMENTS_OIDC_CLIENT_SECRET; empty: a public client (PKCE alone)
	RedirectURL  string // PAYMENTS_OIDC_REDIRECT_URL; default <public base>/v1/auth/oidc/callback
	Name         string // PAYMENTS_OIDC_NAME: the provider's name on the sign-in button
	HTTPClient   *http.Client
}

// OIDCSignIn is the configured provider, discovered on first use (retried after a failure).
type OIDCSignIn struct {
	cfg OIDCSignInConfig

	mu       sync.Mutex
	provider *oidc.Provider
	lastTry  time.Time
	lastErr  error
}

// NewOIDCSignIn checks the configuration (no network).
func NewOIDCSignIn(cfg OIDCSignInConfig) (*OIDCSignIn, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" {
		return nil, errors.New("OIDC sign-in needs PAYMENTS_OIDC_ISSUER and PAYMENTS_OIDC_CLIENT_ID")
	}
	u, err := url.Parse(cfg.RedirectURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !loopbackHTTP(u)) {
		return nil, fmt.Errorf("PAYMENTS_OIDC_REDIRECT_URL %q must be an https URL (http on a loopback host only)", cfg.RedirectURL)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &OIDCSignIn{cfg: cfg}, nil
}

// Name is the provider's name for the sign-in button ("" when not configured).
func (o *OIDCSignIn) Name() string { return o.cfg.Name }

func loopbackHTTP(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// oidcRetry spaces discovery attempts after a failed one.
const oidcRetry = 10 * time.Second

func (o *OIDCSignIn) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	if o.lastErr != nil && time.Since(o.lastTry) < oidcRetry {
		return nil, o.lastErr
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, o.cfg.HTTPClient), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err == nil {
		for _, raw := range []string{p.Endpoint().AuthURL, p.Endpoint().TokenURL} {
			u, perr := url.Parse(raw)
			if perr != nil || u.Host == "" || (u.Scheme != "https" && !loopbackHTTP(u)) {
				err = fmt.Errorf("the provider's endpoint %q is not https", raw)
			}
		}
	}
	if err != nil {
		o.lastTry, o.lastErr = time.Now(), err
		return nil, err
	}
	o.provider = p
	return p, nil
}

func (o *OIDCSignIn) oauth2(p *oidc.Provider) *oauth2.Config {
	ep := p.Endpoint()
	if o.cfg.ClientSecret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams // a public client sends its id, no secret
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: ep, RedirectURL: o.cfg.RedirectURL,
		Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// OIDCError is a sign-in with the provider that did not succeed; Code goes to the sign-in page.
type OIDCError struct {
	Code   string // provider_unavailable, provider_error, invalid_state, invalid_token, email_unverified, unknown_user
	Reason string // for the log
}

func (e *OIDCError) Error() string { return "OIDC sign-in refused (" + e.Code + "): " + e.Reason }

func oidcErr(code, format string, args ...any) error {
	return &OIDCError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// ErrOIDCOff: no OIDC provider to sign in with.
var ErrOIDCOff = errors.New("sign-in with an OIDC provider is not configured")

// OIDCStart begins a sign-in with the provider: the URL to send the browser to and the state
// for its cookie.
func (s *Service) OIDCStart(ctx context.Context) (authURL, state string, err error) {
	if s.OIDC == nil {
		return "", "", ErrOIDCOff
	}
	p, err := s.OIDC.discover(ctx)
	if err != nil {
		return "", "", oidcErr("provider_unavailable", "discovery of %s: %v", s.OIDC.cfg.Issuer, err)
	}
	if state, err = randomText(32); err != nil {
		return "", "", err
	}
	nonce, err := randomText(32)
	if err != nil {
		return "", "", err
	}
	verifier := oauth2.GenerateVerifier()
	now := s.Now()
	l := store.OIDCLogin{ID: uuid.Must(uuid.NewV7()), StateHash: TokenHash(state), Nonce: nonce, CodeVerifier: verifier,
		CreatedAt: now, ExpiresAt: now.Add(OIDCLoginTTL)}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertOIDCLogin(l, now.Add(-time.Hour)) }); err != nil {
		return "", "", err
	}
	return s.OIDC.oauth2(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), state, nil
}

// oidcClaims are the ID token's claims the sign-in reads.
type oidcClaims struct {
	Email         string          `json:"email"`
	EmailVerified json.RawMessage `json:"email_verified"` // true, or "true" from some providers
	AMR           []string        `json:"amr"`
}

func (c oidcClaims) verified() bool {
	v := strings.TrimSpace(string(c.EmailVerified))
	return v == "true" || v == `"true"`
}

// OIDCCallback finishes a sign-in with the provider: cookieState is the state cookie the browser
// sent, state, code and providerError the callback's query. The outcome is an AuthResult (signed
// in, or a second factor to give) or an *OIDCError.
func (s *Service) OIDCCallback(ctx context.Context, cookieState, state, code, providerError string, c Client) (AuthResult, error) {
	if s.OIDC == nil {
		return AuthResult{}, ErrOIDCOff
	}
	if state == "" || cookieState == "" || subtle.ConstantTimeCompare([]byte(state), []byte(cookieState)) != 1 {
		return AuthResult{}, oidcErr("invalid_state", "the state does not match this browser's sign-in")
	}
	var l store.OIDCLogin
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		l, err = tx.SpendOIDCLogin(TokenHash(state), s.Now())
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, oidcErr("invalid_state", "the sign-in is unknown, finished already or expired")
	}
	if err != nil {
		return AuthResult{}, err
	}
	if providerError != "" {
		return AuthResult{}, oidcErr("provider_error", "the provider answered %q", providerError)
	}
	if code == "" {
		return AuthResult{}, oidcErr("provider_error", "no code")
	}
	p, err := s.OIDC.discover(ctx)
	if err != nil {
		return AuthResult{}, oidcErr("provider_unavailable", "discovery: %v", err)
	}
	hctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, s.OIDC.cfg.HTTPClient), 10*time.Second)
	defer cancel()
	tok, err := s.OIDC.oauth2(p).Exchange(hctx, code, oauth2.VerifierOption(l.CodeVerifier))
	if err != nil {
		return AuthResult{}, oidcErr("provider_error", "code exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return AuthResult{}, oidcErr("invalid_token", "the token answer has no id_token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.OIDC.cfg.ClientID, Now: s.Now}).Verify(hctx, raw)
	if err != nil {
		return AuthResult{}, oidcErr("invalid_token", "%v", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(l.Nonce)) != 1 {
		return AuthResult{}, oidcErr("invalid_token", "the nonce does not match")
	}
	var cl oidcClaims
	if err := idt.Claims(&cl); err != nil {
		return AuthResult{}, oidcErr("invalid_token", "claims: %v", err)
	}
	if cl.Email == "" || !cl.verified() {
		return AuthResult{}, oidcErr("email_unverified", "the provider does not say the email %q is verified", cl.Email)
	}
	u, err := s.Store.Read(ctx).UserByEmail(cl.Email)
	if errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, oidcErr("unknown_user", "no user has the email %q", cl.Email)
	}
	if err != nil {
		return AuthResult{}, err
	}
	if u.DisabledAt != nil {
		return AuthResult{}, oidcErr("unknown_user", "the user %s is disabled", u.ID)
	}
	if slices.Contains(cl.AMR, "mfa") {
		// The provider did multi-factor authentication: that is this session's second factor.
		now := s.Now()
		return s.newSession(ctx, u, &now, c)
	}
	return s.signIn(ctx, u, c) // a second factor of ours to give, if the user has one
}
