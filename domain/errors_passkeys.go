package domain

import "errors"

// Passkeys and the OIDC sign-in (issue 22). Kept in a file of their own so the integrator merges
// them with the sign-in helper's errors without conflicts; server/errors.go maps them.
var (
	// ErrPasskeyRefused: a WebAuthn response that does not verify — a ceremony unknown, spent or
	// expired, a signature, origin or RP id that does not match, a signature counter that did
	// not advance (a cloned authenticator). 400 passkey_refused (401 at sign-in, see server).
	ErrPasskeyRefused = errors.New("the passkey response was refused")
	// ErrPasskeyNotFound: no passkey of this user with that id (404).
	ErrPasskeyNotFound = errors.New("no such passkey")
	// ErrNoPasskey: checking a passkey of a person who has none (409 invalid_state; at sign-in
	// 401 like every refusal there).
	ErrNoPasskey = errors.New("this account has no passkey")
	// ErrPasskeyExists: the authenticator's credential is registered already (409).
	ErrPasskeyExists = errors.New("this passkey is registered already")
	// ErrOIDCSignInOff: no OIDC provider to sign in with is configured (404).
	ErrOIDCSignInOff = errors.New("sign-in with an OIDC provider is not configured")
)

// Error codes of passkeys and the OIDC sign-in.
const (
	CodePasskeyRefused    ErrorCode = "passkey_refused"
	CodePasskeyExists     ErrorCode = "passkey_exists"
	CodeOIDCNotConfigured ErrorCode = "oidc_not_configured"
)
