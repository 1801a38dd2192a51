package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/store"
)

// Passkeys (WebAuthn) and the sign-in with the OIDC provider (tag auth): thin handlers over
// people.Service. WebAuthn's own JSON (the ceremony options, the browser's responses) passes
// through as free-form objects; the passkeys package parses and checks it.

// oidcStateCookie holds the state of the OIDC sign-in this browser began: SameSite=Lax, since the
// provider's redirect back is a cross-site navigation (Strict would not send it); Path scoped to
// the callback's directory; as long as a sign-in may take.
const (
	oidcStateCookie     = "paymentsd_oidc"
	oidcStateCookiePath = "/v1/auth/oidc"
)

// Where the OIDC callback sends the browser: the dashboard, its sign-in page (hash routes).
const (
	dashboardHome   = "/dashboard/"
	dashboardSignIn = "/dashboard/#/sign-in"
)

func toPasskey(k store.Passkey) gen.Passkey {
	ts := []string{}
	for _, t := range strings.Split(k.Transports, ",") {
		if t != "" {
			ts = append(ts, t)
		}
	}
	return gen.Passkey{Id: k.ID, Name: k.Name, Aaguid: k.AAGUID, Transports: ts, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt}
}

// passkeyOptions decodes a ceremony's begin (its options, or its error) into the API's shape.
func passkeyOptions(raw json.RawMessage, err error) (gen.PasskeyOptions, error) {
	var o gen.PasskeyOptions
	if err != nil {
		return o, err
	}
	err = json.Unmarshal(raw, &o)
	return o, err
}

// personAndCredential is what a passkey ceremony's finish starts with: the signed-in person and
// the browser's credential (PublicKeyCredential.toJSON()) as raw JSON.
func personAndCredential(ctx context.Context, credential map[string]interface{}) (dashauth.Person, json.RawMessage, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return p, nil, err
	}
	cred, err := json.Marshal(credential)
	return p, cred, err
}

func (h *handlers) ListPasskeys(ctx context.Context, req gen.ListPasskeysRequestObject) (gen.ListPasskeysResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := h.people.ListPasskeys(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := gen.PasskeyList{Data: make([]gen.Passkey, 0, len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, toPasskey(k))
	}
	return gen.ListPasskeys200JSONResponse(out), nil
}

func (h *handlers) BeginPasskeyRegistration(ctx context.Context, req gen.BeginPasskeyRegistrationRequestObject) (gen.BeginPasskeyRegistrationResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	o, err := passkeyOptions(h.people.BeginPasskeyRegistration(ctx, p))
	if err != nil {
		return nil, err
	}
	return gen.BeginPasskeyRegistration200JSONResponse(o), nil
}

func (h *handlers) FinishPasskeyRegistration(ctx context.Context, req gen.FinishPasskeyRegistrationRequestObject) (gen.FinishPasskeyRegistrationResponseObject, error) {
	p, cred, err := personAndCredential(ctx, req.Body.Credential)
	if err != nil {
		return nil, err
	}
	k, err := h.people.FinishPasskeyRegistration(ctx, p, req.Body.Name, cred)
	if err != nil {
		return nil, err
	}
	return gen.FinishPasskeyRegistration201JSONResponse(toPasskey(k)), nil
}

func (h *handlers) DeletePasskey(ctx context.Context, req gen.DeletePasskeyRequestObject) (gen.DeletePasskeyResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	id, err := uuid.Parse(req.PasskeyId)
	if err != nil {
		return nil, domain.ErrPasskeyNotFound
	}
	if err := h.people.DeletePasskey(ctx, p, id); err != nil {
		return nil, err
	}
	return gen.DeletePasskey204Response{}, nil
}

func (h *handlers) BeginPasskeyLogin(ctx context.Context, req gen.BeginPasskeyLoginRequestObject) (gen.BeginPasskeyLoginResponseObject, error) {
	o, err := passkeyOptions(h.people.LoginPasskeyBegin(ctx, req.Body.ChallengeToken, authReq(ctx).client))
	if err != nil {
		return nil, err
	}
	return gen.BeginPasskeyLogin200JSONResponse(o), nil
}

func (h *handlers) FinishPasskeyLogin(ctx context.Context, req gen.FinishPasskeyLoginRequestObject) (gen.FinishPasskeyLoginResponseObject, error) {
	cred, err := json.Marshal(req.Body.Credential)
	if err != nil {
		return nil, err
	}
	r, err := h.people.LoginPasskeyFinish(ctx, req.Body.ChallengeToken, cred, authReq(ctx).client)
	if err != nil {
		return nil, err
	}
	return gen.FinishPasskeyLogin200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) GetAuthProviders(ctx context.Context, req gen.GetAuthProvidersRequestObject) (gen.GetAuthProvidersResponseObject, error) {
	out := gen.AuthProviders{Password: true}
	if h.people != nil && h.people.OIDC != nil {
		out.Oidc.Enabled = true
		if n := h.people.OIDC.Name(); n != "" {
			out.Oidc.Name = &n
		}
	}
	return gen.GetAuthProviders200JSONResponse(out), nil
}

func (h *handlers) StartOidcLogin(ctx context.Context, req gen.StartOidcLoginRequestObject) (gen.StartOidcLoginResponseObject, error) {
	if h.people == nil {
		return nil, people.ErrOIDCOff
	}
	loc, state, err := h.people.OIDCStart(ctx)
	if loc2, ok := oidcRefused(ctx, err); ok {
		return gen.StartOidcLogin302Response{Headers: gen.StartOidcLogin302ResponseHeaders{Location: &loc2}}, nil
	}
	if err != nil {
		return nil, err
	}
	ox := oidcExchangeFrom(ctx)
	ox.cookie = &http.Cookie{Name: oidcStateCookie, Value: state, Path: oidcStateCookiePath, HttpOnly: true, Secure: ox.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(people.OIDCLoginTTL / time.Second)}
	return gen.StartOidcLogin302Response{Headers: gen.StartOidcLogin302ResponseHeaders{Location: &loc}}, nil
}

func (h *handlers) OidcCallback(ctx context.Context, req gen.OidcCallbackRequestObject) (gen.OidcCallbackResponseObject, error) {
	if h.people == nil {
		return nil, people.ErrOIDCOff
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	cookie := ""
	if req.Params.PaymentsdOidc != nil {
		cookie = string(*req.Params.PaymentsdOidc)
	}
	r, err := h.people.OIDCCallback(ctx, cookie, deref(req.Params.State), deref(req.Params.Code), deref(req.Params.Error), authReq(ctx).client)
	if errors.Is(err, people.ErrOIDCOff) {
		return nil, err
	}
	ox := oidcExchangeFrom(ctx)
	ox.cookie = &http.Cookie{Name: oidcStateCookie, Value: "", Path: oidcStateCookiePath, HttpOnly: true, Secure: ox.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: -1, Expires: time.Unix(0, 0)} // spent, whatever the outcome
	loc, refused := oidcRefused(ctx, err)
	switch {
	case refused:
	case err != nil:
		return nil, err
	case r.SignedIn():
		authResult(ctx, r) // sets the refresh cookie; the dashboard refreshes for its access token
		loc = dashboardHome
	default:
		q := url.Values{"challengeToken": {r.ChallengeToken}, "methods": {strings.Join(r.Methods, ",")}}
		loc = dashboardSignIn + "?" + q.Encode()
	}
	return gen.OidcCallback302Response{Headers: gen.OidcCallback302ResponseHeaders{Location: &loc}}, nil
}

// oidcRefused turns a refused OIDC sign-in into the sign-in page's address with its error code,
// the reason kept for the log.
func oidcRefused(ctx context.Context, err error) (string, bool) {
	var oe *people.OIDCError
	if !errors.As(err, &oe) {
		return "", false
	}
	oidcExchangeFrom(ctx).refusal = oe
	return dashboardSignIn + "?" + url.Values{"error": {oe.Code}}.Encode(), true
}

// oidcExchange is what the OIDC handlers leave for the middleware: the state cookie to set or
// clear, and a refusal to log.
type oidcExchange struct {
	secure  bool
	cookie  *http.Cookie
	refusal *people.OIDCError
}

type oidcExchangeKey struct{}

func oidcExchangeFrom(ctx context.Context) *oidcExchange {
	if ox, ok := ctx.Value(oidcExchangeKey{}).(*oidcExchange); ok {
		return ox
	}
	return &oidcExchange{}
}

// oidcCookies sets the OIDC sign-in's state cookie after its handlers (the generated responses
// know nothing of cookies) and logs why a sign-in was refused (the browser sees a code only).
func oidcCookies(log *slog.Logger) gen.StrictMiddlewareFunc {
	return func(f gen.StrictHandlerFunc, operationID string) gen.StrictHandlerFunc {
		if operationID != "StartOidcLogin" && operationID != "OidcCallback" {
			return f
		}
		return func(c echo.Context, request any) (any, error) {
			ox := &oidcExchange{secure: secureCookie(c)}
			c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), oidcExchangeKey{}, ox)))
			res, err := f(c, request)
			if ox.cookie != nil {
				c.SetCookie(ox.cookie)
			}
			if ox.refusal != nil && log != nil {
				log.WarnContext(c.Request().Context(), "OIDC sign-in refused", "code", ox.refusal.Code, "reason", ox.refusal.Reason)
			}
			return res, err
		}
	}
}

func (h *handlers) BeginPasskeyStepUp(ctx context.Context, req gen.BeginPasskeyStepUpRequestObject) (gen.BeginPasskeyStepUpResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	o, err := passkeyOptions(h.people.StepUpPasskeyBegin(ctx, p))
	if err != nil {
		return nil, err
	}
	return gen.BeginPasskeyStepUp200JSONResponse(o), nil
}

func (h *handlers) FinishPasskeyStepUp(ctx context.Context, req gen.FinishPasskeyStepUpRequestObject) (gen.FinishPasskeyStepUpResponseObject, error) {
	p, cred, err := personAndCredential(ctx, req.Body.Credential)
	if err != nil {
		return nil, err
	}
	r, err := h.people.StepUpPasskeyFinish(ctx, p, cred)
	if err != nil {
		return nil, err
	}
	return gen.FinishPasskeyStepUp200JSONResponse(authResult(ctx, r)), nil
}
