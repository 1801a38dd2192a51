package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/people"
)

// Sign-in and sessions (tag auth): thin handlers over people.Service. The refresh token travels
// in the paymentsd_refresh cookie, which the strict middleware authCookies sets or clears after
// the handler (the generated responses know nothing of cookies); person tokens are checked by
// personBearer (authenticate, for BearerAuth operations without a merchant in the path).

// RefreshCookieName is the session's refresh cookie.
const RefreshCookieName = "paymentsd_refresh"

// refreshCookiePath scopes the cookie to the sign-in API: no other request carries it.
const refreshCookiePath = "/v1/auth"

type personKey struct{}

// personFrom is the person personBearer authenticated (ok false: none).
func personFrom(ctx context.Context) (dashauth.Person, bool) {
	p, ok := ctx.Value(personKey{}).(dashauth.Person)
	return p, ok
}

// personBearer authenticates a person token: signed by the built-in issuer, a person's, its
// session live (people.Service.CheckSession). Else 401 invalid_token.
func personBearer(c echo.Context, ppl *people.Service) error {
	if ppl == nil || ppl.Tokens == nil {
		return domain.ErrInvalidToken
	}
	req := c.Request()
	scheme, raw, ok := strings.Cut(strings.TrimSpace(req.Header.Get(echo.HeaderAuthorization)), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return domain.ErrInvalidToken
	}
	p, err := ppl.Tokens.VerifyPerson(req.Context(), strings.TrimSpace(raw))
	if errors.Is(err, dashauth.ErrInvalidToken) {
		return domain.ErrInvalidToken
	}
	if err != nil {
		return err
	}
	if err := ppl.CheckSession(req.Context(), p.UserID, p.SessionID); err != nil {
		return err
	}
	c.SetRequest(req.WithContext(context.WithValue(req.Context(), personKey{}, p)))
	return nil
}

func actingPerson(ctx context.Context) (dashauth.Person, error) {
	p, ok := personFrom(ctx)
	if !ok {
		return dashauth.Person{}, domain.ErrInvalidToken
	}
	return p, nil
}

// authRequest is what the auth handlers need of the HTTP exchange beyond the generated request:
// the client, and the cookie to set once they return.
type authRequest struct {
	client people.Client
	secure bool // the cookie's Secure attribute
	set    *http.Cookie
}

type authRequestKey struct{}

func authReq(ctx context.Context) *authRequest {
	if r, ok := ctx.Value(authRequestKey{}).(*authRequest); ok {
		return r
	}
	return &authRequest{}
}

// authCookies gives every operation its client (address by the trusted-proxy rules of
// c.RealIP, user agent) and, after the handler, sets the cookie it chose, clears it when the
// session is gone, and puts Retry-After on a throttled answer.
func authCookies(f gen.StrictHandlerFunc, operationID string) gen.StrictHandlerFunc {
	return func(c echo.Context, request any) (any, error) {
		ar := &authRequest{client: people.Client{IP: c.RealIP(), UserAgent: c.Request().UserAgent()}, secure: secureCookie(c)}
		c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), authRequestKey{}, ar)))
		res, err := f(c, request)
		var throttled *people.ThrottledError
		switch {
		case errors.As(err, &throttled):
			c.Response().Header().Set("Retry-After", itoa(people.RetrySeconds(throttled.Wait)))
		case errors.Is(err, people.ErrInvalidSession):
			ar.set = refreshCookie("", time.Time{}, ar.secure)
		}
		if ar.set != nil {
			c.SetCookie(ar.set)
		}
		return res, err
	}
}

// secureCookie: Secure, unless the request is plain http to a loopback host (`make run`), where
// a Secure cookie would never come back.
func secureCookie(c echo.Context) bool {
	if c.Scheme() != "http" {
		return true
	}
	host := c.Request().Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip == nil || !ip.IsLoopback()
}

// refreshCookie is the refresh cookie holding token until expires (empty: cleared).
func refreshCookie(token string, expires time.Time, secure bool) *http.Cookie {
	ck := &http.Cookie{Name: RefreshCookieName, Value: token, Path: refreshCookiePath, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode, Expires: expires}
	if token == "" {
		ck.MaxAge, ck.Expires = -1, time.Unix(0, 0)
	}
	return ck
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// authResult renders a sign-in's outcome and sets its cookie.
func authResult(ctx context.Context, r people.AuthResult) gen.AuthResult {
	if !r.SignedIn() {
		methods := []gen.AuthResultMethods{}
		for _, m := range r.Methods {
			methods = append(methods, gen.AuthResultMethods(m))
		}
		ch := r.ChallengeToken
		return gen.AuthResult{Status: gen.SecondFactorRequired, ChallengeToken: &ch, Methods: &methods}
	}
	if r.RefreshToken != "" {
		ar := authReq(ctx)
		ar.set = refreshCookie(r.RefreshToken, r.RefreshExpiresAt, ar.secure)
	}
	tok, exp := r.AccessToken, r.ExpiresAt
	return gen.AuthResult{Status: gen.SignedIn, AccessToken: &tok, ExpiresAt: &exp}
}

// passwordInvalid names the field of a password refused for its length.
func passwordInvalid(err error, param string) error {
	if errors.Is(err, people.ErrShortPassword) || errors.Is(err, people.ErrLongPassword) {
		return domain.Invalid(domain.CodeParameterInvalid, param, "%s", err.Error())
	}
	return err
}

func (h *handlers) Login(ctx context.Context, req gen.LoginRequestObject) (gen.LoginResponseObject, error) {
	r, err := h.people.Login(ctx, req.Body.Email, req.Body.Password, authReq(ctx).client)
	if err != nil {
		return nil, err
	}
	return gen.Login200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) LoginSecondFactor(ctx context.Context, req gen.LoginSecondFactorRequestObject) (gen.LoginSecondFactorResponseObject, error) {
	r, err := h.people.LoginSecondFactor(ctx, req.Body.ChallengeToken, req.Body.Code, authReq(ctx).client)
	if err != nil {
		return nil, err
	}
	return gen.LoginSecondFactor200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) RefreshSession(ctx context.Context, req gen.RefreshSessionRequestObject) (gen.RefreshSessionResponseObject, error) {
	if req.Params.PaymentsdRefresh == nil {
		return nil, people.ErrInvalidSession
	}
	var mode domain.Mode
	if req.Body != nil && req.Body.Mode != nil {
		mode = domain.Mode(*req.Body.Mode)
	}
	r, err := h.people.Refresh(ctx, string(*req.Params.PaymentsdRefresh), mode)
	if err != nil {
		return nil, err
	}
	return gen.RefreshSession200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) Logout(ctx context.Context, req gen.LogoutRequestObject) (gen.LogoutResponseObject, error) {
	if req.Params.PaymentsdRefresh != nil {
		if err := h.people.Logout(ctx, string(*req.Params.PaymentsdRefresh)); err != nil {
			return nil, err
		}
	}
	ar := authReq(ctx)
	ar.set = refreshCookie("", time.Time{}, ar.secure)
	return gen.Logout204Response{}, nil
}

func (h *handlers) LogoutAll(ctx context.Context, req gen.LogoutAllRequestObject) (gen.LogoutAllResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.people.LogoutAll(ctx, p.UserID); err != nil {
		return nil, err
	}
	ar := authReq(ctx)
	ar.set = refreshCookie("", time.Time{}, ar.secure)
	return gen.LogoutAll204Response{}, nil
}

func (h *handlers) GetMe(ctx context.Context, req gen.GetMeRequestObject) (gen.GetMeResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	me, err := h.people.Me(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	passkeys, err := h.people.PasskeyCount(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := gen.Me{Id: me.User.ID, Email: me.User.Email, TotpEnabled: me.TOTPEnabled, PasskeyCount: int32(passkeys), Mode: gen.Mode(p.Mode.Norm())}
	out.Memberships = make([]meMembership, 0, len(me.Memberships))
	for _, m := range me.Memberships {
		out.Memberships = append(out.Memberships, meMembership{MerchantId: m.MerchantID, MerchantName: m.MerchantName,
			Role: gen.MeMembershipsRole(m.Role), Permissions: m.Permissions})
	}
	return gen.GetMe200JSONResponse(out), nil
}

func (h *handlers) ChangePassword(ctx context.Context, req gen.ChangePasswordRequestObject) (gen.ChangePasswordResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.people.ChangePassword(ctx, p.UserID, p.SessionID, req.Body.CurrentPassword, req.Body.NewPassword); err != nil {
		return nil, passwordInvalid(err, "newPassword")
	}
	return gen.ChangePassword204Response{}, nil
}

func (h *handlers) EnrollTotp(ctx context.Context, req gen.EnrollTotpRequestObject) (gen.EnrollTotpResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	e, err := h.people.EnrollTOTP(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.EnrollTotp200JSONResponse{Secret: e.Secret, OtpauthUri: e.OtpauthURI, QrCodePng: e.QRCodePNG}, nil
}

func (h *handlers) ConfirmTotp(ctx context.Context, req gen.ConfirmTotpRequestObject) (gen.ConfirmTotpResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	codes, err := h.people.ConfirmTOTP(ctx, p, req.Body.Code)
	if err != nil {
		return nil, err
	}
	return gen.ConfirmTotp200JSONResponse{RecoveryCodes: codes}, nil
}

func (h *handlers) DisableTotp(ctx context.Context, req gen.DisableTotpRequestObject) (gen.DisableTotpResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.people.DisableTOTP(ctx, p.UserID, req.Body.Code, authReq(ctx).client); err != nil {
		return nil, err
	}
	return gen.DisableTotp204Response{}, nil
}

func (h *handlers) StepUp(ctx context.Context, req gen.StepUpRequestObject) (gen.StepUpResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.people.StepUp(ctx, p, req.Body.Code, authReq(ctx).client)
	if err != nil {
		return nil, err
	}
	return gen.StepUp200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) ListSessions(ctx context.Context, req gen.ListSessionsRequestObject) (gen.ListSessionsResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	all, err := h.people.Sessions(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := gen.SessionList{Data: make([]gen.Session, 0, len(all))}
	for _, s := range all {
		out.Data = append(out.Data, gen.Session{Id: s.ID, CreatedAt: s.CreatedAt, LastUsedAt: s.LastUsedAt, ExpiresAt: s.ExpiresAt,
			Ip: s.IP, UserAgent: s.UserAgent, SecondFactorAt: s.SecondFactorAt, Current: s.ID == p.SessionID})
	}
	return gen.ListSessions200JSONResponse(out), nil
}

func (h *handlers) RevokeSession(ctx context.Context, req gen.RevokeSessionRequestObject) (gen.RevokeSessionResponseObject, error) {
	p, err := actingPerson(ctx)
	if err != nil {
		return nil, err
	}
	id, err := uuid.Parse(req.SessionId)
	if err != nil {
		return nil, people.ErrSessionNotFound
	}
	if err := h.people.RevokeSession(ctx, p.UserID, id); err != nil {
		return nil, err
	}
	return gen.RevokeSession204Response{}, nil
}

func (h *handlers) AcceptInvitation(ctx context.Context, req gen.AcceptInvitationRequestObject) (gen.AcceptInvitationResponseObject, error) {
	pw := ""
	if req.Body.Password != nil {
		pw = *req.Body.Password
	}
	r, err := h.people.AcceptInvitation(ctx, req.Body.Token, pw, authReq(ctx).client)
	if err != nil {
		return nil, passwordInvalid(err, "password")
	}
	return gen.AcceptInvitation200JSONResponse(authResult(ctx, r)), nil
}

func (h *handlers) GetMerchantSecurity(ctx context.Context, req gen.GetMerchantSecurityRequestObject) (gen.GetMerchantSecurityResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	on, err := h.people.Require2FA(ctx, id)
	if err != nil {
		return nil, err
	}
	return gen.GetMerchantSecurity200JSONResponse{Require2fa: on}, nil
}

func (h *handlers) SetMerchantSecurity(ctx context.Context, req gen.SetMerchantSecurityRequestObject) (gen.SetMerchantSecurityResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.people.SetRequire2FA(ctx, id, req.Body.Require2fa); err != nil {
		return nil, err
	}
	return gen.SetMerchantSecurity200JSONResponse{Require2fa: req.Body.Require2fa}, nil
}

// meMembership is the generated Me's inline membership type.
type meMembership = struct {
	MerchantId   uuid.UUID             `json:"merchantId"`
	MerchantName string                `json:"merchantName"`
	Permissions  []string              `json:"permissions"`
	Role         gen.MeMembershipsRole `json:"role"`
}
