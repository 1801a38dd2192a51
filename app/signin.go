package app

import (
	"strings"

	"github.com/paymentsd/paymentsd/passkeys"
	"github.com/paymentsd/paymentsd/people"
)

// wireSignIn gives the people service its second sign-in ways: passkeys (the relying party is
// the public base URL's host and origin unless PAYMENTS_WEBAUTHN_RP_ID / _ORIGINS say otherwise)
// and, when PAYMENTS_OIDC_ISSUER and PAYMENTS_OIDC_CLIENT_ID are set, the OIDC provider.
func (a *App) wireSignIn() error {
	d := a.Cfg.Dashboard
	rp, err := passkeys.RelyingPartyFor(a.Cfg.PublicBaseURL, d.WebAuthnRPID, d.WebAuthnOrigins)
	switch {
	case err != nil && d.WebAuthnRPID == "" && d.WebAuthnOrigins == "":
		// No usable public URL (a one-shot command, say): no passkeys, nothing else refused.
		a.Log.Warn("passkeys are off: the public base URL gives no WebAuthn relying party", "err", err)
	case err != nil:
		return err
	default:
		if a.People.Passkeys, err = passkeys.New(a.Store, rp, Now); err != nil {
			if d.WebAuthnRPID != "" || d.WebAuthnOrigins != "" {
				return err
			}
			a.Log.Warn("passkeys are off: the public base URL gives no WebAuthn relying party", "err", err)
		}
	}
	if d.OIDCIssuer == "" || d.OIDCClientID == "" {
		return nil
	}
	redirect := d.OIDCRedirectURL
	if redirect == "" {
		redirect = strings.TrimRight(a.Cfg.PublicBaseURL, "/") + "/v1/auth/oidc/callback"
	}
	a.People.OIDC, err = people.NewOIDCSignIn(people.OIDCSignInConfig{Issuer: d.OIDCIssuer, ClientID: d.OIDCClientID,
		ClientSecret: d.OIDCClientSecret, RedirectURL: redirect, Name: d.OIDCName})
	return err
}
