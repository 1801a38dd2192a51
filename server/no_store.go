package server

import (
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/gen"
)

// secretBearing are the operations whose answer carries a secret shown once: a secret key
// (sk_…), a payment secret (ps_…, also in paymentUrl) or a webhook signing secret (whsec_…).
// Keyed by the generated strict handler's operation names.
var secretBearing = map[string]bool{
	"CreatePayment":                 true,
	"CreateMerchantApiKey":          true,
	"CreateMerchantWebhookEndpoint": true,
	"RotateMerchantWebhookSecret":   true,
	// Sign-in: access tokens, challenges, TOTP secrets and recovery codes.
	"Login": true, "LoginSecondFactor": true, "RefreshSession": true, "AcceptInvitation": true,
	"StepUp": true, "EnrollTotp": true, "ConfirmTotp": true,
	"CreateMerchantInvitation": true, // the invitation link's token
	// Passkeys and the OIDC sign-in: access tokens, challenges (in a redirect's fragment).
	"FinishPasskeyLogin": true, "FinishPasskeyStepUp": true, "OidcCallback": true, "StartOidcLogin": true,
}

// noStore marks every answer of a secret-bearing operation Cache-Control: no-store, so no
// browser or intermediary cache keeps the secret. The header is set before the handler runs, so
// it is on whatever answers the request: the response, an error, or an idempotent replay (the
// idempotency middleware replays on this same response after the handler returns).
func noStore(f gen.StrictHandlerFunc, operationID string) gen.StrictHandlerFunc {
	if !secretBearing[operationID] {
		return f
	}
	return func(c echo.Context, request any) (any, error) {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return f(c, request)
	}
}
