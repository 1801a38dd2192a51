package app

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/dashauth"
)

// jwks publishes the dashboard issuer's keys (none before the first token is minted).
func (a *App) jwks(ctx context.Context) (any, error) { return a.Tokens.JWKS(ctx) }

// wireDashboard checks the external OIDC issuer's configuration, when there is one (no network:
// discovery happens when the API starts, and is retried until it succeeds).
func (a *App) wireDashboard() error {
	d := a.Cfg.Dashboard
	if d.OIDCIssuer == "" {
		return nil
	}
	o, err := dashauth.NewOIDC(dashauth.OIDCConfig{Issuer: d.OIDCIssuer, Audience: d.OIDCAudience, MerchantClaim: d.OIDCMerchantClaim, ModeClaim: d.OIDCModeClaim, RoleClaim: d.OIDCRoleClaim,
		Logger: a.Log.With("component", "oidc")})
	if err != nil {
		return err
	}
	a.oidc = o
	return nil
}

// dashboardTokens verifies the dashboard's bearer tokens: the built-in issuer's and, when
// PAYMENTS_OIDC_ISSUER is set, the external issuer's, chosen by the token's iss. The external
// issuer is discovered in the background: an identity provider that is down when the API starts
// must not keep payments from being taken; its tokens are refused (401) until it answers.
func (a *App) dashboardTokens(ctx context.Context) (*dashauth.Verifiers, error) {
	v, err := dashauth.NewVerifiers(ctx, a.Tokens, a.oidc)
	if err != nil {
		return nil, fmt.Errorf("dashboard tokens: %w", err)
	}
	if a.oidc != nil {
		go func() {
			if err := a.oidc.Discover(context.WithoutCancel(ctx)); err != nil {
				a.Log.Warn("the dashboard's OIDC issuer could not be discovered yet; its tokens are refused until it is (retried on use)",
					"issuer", a.Cfg.Dashboard.OIDCIssuer, "err", err)
				return
			}
			a.Log.Info("dashboard OIDC issuer discovered", "issuer", a.Cfg.Dashboard.OIDCIssuer)
		}()
	}
	return v, nil
}
