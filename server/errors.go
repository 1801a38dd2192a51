package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/webhooks"
)

// errorType is the `error.type` category of an error body.
type errorType string

// Error types: the documented error body's type member.
const (
	typeInvalidRequest errorType = "invalid_request_error"
	typeAuthentication errorType = "authentication_error"
	typePermission     errorType = "permission_error"
	typeNotFound       errorType = "not_found_error"
	typeIdempotency    errorType = "idempotency_error"
	typeRateLimit      errorType = "rate_limit_error"
	typeAPI            errorType = "api_error"
)

// apiError is one row of the error table.
type apiError struct {
	Status  int
	Type    errorType
	Code    domain.ErrorCode
	Message string
	Param   string
}

// invalidRequest is a 400 naming the offending field.
func invalidRequest(code domain.ErrorCode, param, msg string) *apiError {
	return &apiError{http.StatusBadRequest, typeInvalidRequest, code, msg, param}
}

func (e *apiError) Error() string { return e.Message }

// classify maps any error to its row of the table, with errors.Is/As only.
func classify(err error) *apiError {
	var (
		ae         *apiError
		invalid    *domain.InvalidInputError
		reqErr     *openapi3filter.RequestError
		httpErr    *echo.HTTPError
		transition *domain.TransitionError
		balance    *domain.InsufficientBalanceError
		body       *bodyReadError
		limited    *rateLimitedError
		unserved   *domain.ModeNotServedError
		throttled  *people.ThrottledError
		refused    *domain.PolicyRefusal
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &throttled):
		return &apiError{http.StatusTooManyRequests, typeRateLimit, domain.CodeTooManyAttempts, throttled.Error(), ""}
	case errors.Is(err, people.ErrInvalidCredentials):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidCredentials, "Invalid email, password or code.", ""}
	case errors.Is(err, people.ErrInvalidSession):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidSession, "No live session: sign in again.", ""}
	case errors.Is(err, people.ErrWrongPassword):
		return invalidRequest(domain.CodeInvalidCredentials, "currentPassword", err.Error())
	case errors.Is(err, people.ErrInvalidCode):
		return invalidRequest(domain.CodeInvalidCode, "code", err.Error())
	case errors.Is(err, people.ErrInvalidInvitation):
		return invalidRequest(domain.CodeInvalidInvitation, "token", err.Error())
	case errors.Is(err, people.ErrPasswordRequired):
		return invalidRequest(domain.CodeParameterMissing, "password", err.Error())
	case errors.Is(err, people.ErrTOTPEnabled), errors.Is(err, people.ErrTOTPNotEnrolled), errors.Is(err, people.ErrNoSecondFactor):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, err.Error(), ""}
	case errors.Is(err, people.ErrSessionNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such session.", "sessionId"}
	case errors.Is(err, people.ErrNoUser): // a person token of a user since deleted
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidToken, "Invalid, expired or missing bearer token.", ""}
	// Passkeys and the OIDC sign-in (issue 22).
	case errors.Is(err, domain.ErrPasskeyRefused):
		return invalidRequest(domain.CodePasskeyRefused, "credential", err.Error())
	case errors.Is(err, domain.ErrNoPasskey):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, err.Error(), ""}
	case errors.Is(err, domain.ErrPasskeyExists):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodePasskeyExists, err.Error(), ""}
	case errors.Is(err, domain.ErrPasskeyNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such passkey.", "passkeyId"}
	case errors.Is(err, people.ErrPasskeysOff):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "Passkeys are not configured on this deployment.", ""}
	case errors.Is(err, people.ErrRecentFactorNeeded):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeStepUpRequired, err.Error(), ""}
	case errors.Is(err, people.ErrOIDCOff), errors.Is(err, domain.ErrOIDCSignInOff):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeOIDCNotConfigured, "Sign-in with an OIDC provider is not configured.", ""}
	// Refunds and the payout policy (issue 23).
	case errors.As(err, &refused):
		return &apiError{http.StatusConflict, typeInvalidRequest, refused.Code, refused.Message, refused.Param}
	case errors.Is(err, domain.ErrApprovalByCreator):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeApprovalByCreator, err.Error(), ""}
	case errors.Is(err, domain.ErrApprovalNeedsPerson):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeForbidden, err.Error(), ""}
	case errors.Is(err, domain.ErrNotAwaitingApproval):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, err.Error(), ""}
	case errors.Is(err, domain.ErrAddressExists):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeAddressExists, err.Error(), "address"}
	case errors.Is(err, domain.ErrAddressBookNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such address-book entry.", "entryId"}
	case errors.Is(err, domain.ErrRefundNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeRefundNotFound, "No such refund.", "refundId"}
	case errors.Is(err, domain.ErrClaimExpired):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, err.Error(), ""}
	case errors.Is(err, domain.ErrInvalidRefundSecret):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidRefundSecret, "Send the refund's claim secret in X-Service-Refund-Secret.", ""}
	case errors.As(err, &limited):
		return &apiError{http.StatusTooManyRequests, typeRateLimit, domain.CodeRateLimited, limited.Error(), ""}
	case errors.As(err, &body): // before httpErr: it may wrap middleware.BodyLimit's 413
		return body.apiError()
	case errors.As(err, &invalid):
		return invalidRequest(invalid.Code, invalid.Param, invalid.Error())
	case errors.As(err, &reqErr):
		return fromRequestError(reqErr)
	case errors.Is(err, domain.ErrInvalidAPIKey):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidAPIKey, "Invalid or missing secret key.", ""}
	case errors.Is(err, domain.ErrDepositsDisabled):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeDepositsDisabled, "Deposits are not enabled for this merchant.", "type"}
	case errors.As(err, &unserved):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeModeNotServed, unserved.Error() + "; use a key of the other mode.", ""}
	case errors.Is(err, domain.ErrWithdrawalsOff):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeWithdrawalsDisabled, "Withdrawals are not enabled for this merchant.", ""}
	case errors.Is(err, domain.ErrInvalidToken):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidToken, "Invalid, expired or missing bearer token.", ""}
	case errors.Is(err, domain.ErrForbidden), errors.Is(err, domain.ErrLiveOnly), errors.Is(err, domain.ErrLiveKeyNeedsAdmin):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeForbidden, err.Error(), ""}
	// Roles and second factors (issue 22).
	case errors.Is(err, domain.ErrStepUpRequired):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeStepUpRequired, err.Error(), ""}
	case errors.Is(err, domain.ErrSecondFactorRequired):
		return &apiError{http.StatusForbidden, typePermission, domain.CodeSecondFactorRequired, err.Error(), ""}
	case errors.Is(err, domain.ErrInvalidPaymentSecret):
		return &apiError{http.StatusUnauthorized, typeAuthentication, domain.CodeInvalidPaymentSecret, "Send the payment's secret in X-Service-Payment-Secret.", ""}
	case errors.Is(err, domain.ErrPaymentNotOpen):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodePaymentNotOpen, err.Error(), ""}
	case errors.Is(err, domain.ErrQuoteNotActive):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeQuoteNotActive, err.Error(), "quoteId"}
	case errors.Is(err, domain.ErrQuoteNotFound): // the payment was found by its secret: name the quote
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "The payment has no such quote.", "quoteId"}
	case errors.Is(err, domain.ErrPaymentNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodePaymentNotFound, "No such payment.", "paymentId"}
	case errors.Is(err, domain.ErrWithdrawalNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeWithdrawalNotFound, "No such withdrawal.", "withdrawalId"}
	case errors.Is(err, domain.ErrAPIKeyNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such secret key.", "keyId"}
	case errors.Is(err, domain.ErrWebhookEndpointNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such webhook endpoint.", "endpointId"}
	case errors.Is(err, domain.ErrWebhookEventNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, err.Error(), "eventId"}
	case errors.Is(err, domain.ErrRotationInProgress):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, err.Error(), "endpointId"}
	case errors.Is(err, domain.ErrTooManyEndpoints):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeLimitReached, err.Error(), ""}
	// The team (issue 22).
	case errors.Is(err, domain.ErrMemberNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such member of this merchant.", "userId"}
	case errors.Is(err, domain.ErrInvitationNotFound):
		return &apiError{http.StatusNotFound, typeNotFound, domain.CodeResourceNotFound, "No such pending invitation.", "invitationId"}
	case errors.Is(err, domain.ErrLastOwner):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeLastOwner, err.Error(), "userId"}
	case errors.Is(err, domain.ErrAlreadyMember):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeAlreadyMember, err.Error(), "email"}
	case errors.Is(err, people.ErrBadEmail):
		return invalidRequest(domain.CodeParameterInvalid, "email", err.Error())
	case errors.Is(err, webhooks.ErrUnsafeURL):
		return invalidRequest(domain.CodeParameterInvalid, "url", err.Error())
	case errors.Is(err, webhooks.ErrUnknownEventType):
		return invalidRequest(domain.CodeParameterInvalid, "events", err.Error())
	case errors.Is(err, idempotency.ErrReplayUnreadable): // before ErrKeyInUse, which it is a kind of
		return &apiError{http.StatusConflict, typeIdempotency, domain.CodeIdempotencyKeyInUse, "The first request with this Idempotency-Key took effect, but its stored response can no longer be read (the server's secrets key changed); look the result up instead of retrying, or use a new key after checking.", "Idempotency-Key"}
	case errors.Is(err, idempotency.ErrKeyInUse):
		return &apiError{http.StatusConflict, typeIdempotency, domain.CodeIdempotencyKeyInUse, "The first request with this Idempotency-Key did not finish and its outcome is unknown; use a new key after checking whether it took effect.", "Idempotency-Key"}
	case errors.Is(err, idempotency.ErrKeyReused):
		return &apiError{http.StatusConflict, typeIdempotency, domain.CodeIdempotencyKeyReused, "This Idempotency-Key was already used with a different request.", "Idempotency-Key"}
	case errors.Is(err, domain.ErrAcceptedAssetsUnserved): // before ErrNoQuotableTokens, which it is
		return &apiError{http.StatusServiceUnavailable, typeAPI, domain.CodeNoChainAvailable,
			"None of this merchant's accepted assets is served by this deployment: change the accepted assets (dashboard or paymentsd merchants accepted-assets).", ""}
	case errors.Is(err, domain.ErrPayoutEstimateUnavailable): // the dashboard's withdrawal estimate (issue 22)
		return &apiError{http.StatusServiceUnavailable, typeAPI, domain.CodeNoChainAvailable,
			"This chain cannot estimate a payout now (its RPC or a price is unavailable, or this process does not run its payouts); retry later.", ""}
	case errors.Is(err, domain.ErrGaslessUnavailable): // a payment without gas (issue 24)
		return &apiError{http.StatusServiceUnavailable, typeAPI, domain.CodeNoChainAvailable,
			"The quote's chain cannot be read now to check the authorization; retry, or pay the normal way.", ""}
	case errors.Is(err, domain.ErrGaslessInProgress):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeGaslessInProgress, err.Error(), ""}
	case errors.Is(err, domain.ErrPriceUnavailable): // a refund's amountInCents (issue 23)
		return &apiError{http.StatusServiceUnavailable, typeAPI, domain.CodePriceUnavailable,
			"The token's price cannot be read now to convert amountInCents; retry later, or give amountAsset (the token's smallest unit) instead.", ""}
	case errors.Is(err, domain.ErrNoQuotableTokens):
		// Not the client's fault, and usually passing (a chain's RPC down): retry later.
		return &apiError{http.StatusServiceUnavailable, typeAPI, domain.CodeNoChainAvailable,
			"No served chain can quote this payment now; retry later.", ""}
	case errors.As(err, &balance):
		// The request is valid; the account's state refuses it.
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInsufficientBalance, balance.Error(), "amountInCents"}
	case errors.As(err, &transition):
		return &apiError{http.StatusConflict, typeInvalidRequest, domain.CodeInvalidState, transition.Error(), ""}
	case errors.As(err, &httpErr):
		return fromHTTPError(httpErr)
	}
	return nil
}

func fromHTTPError(e *echo.HTTPError) *apiError {
	msg := http.StatusText(e.Code)
	if s, ok := e.Message.(string); ok && s != "" {
		msg = s
	}
	switch e.Code {
	case http.StatusNotFound:
		return &apiError{e.Code, typeNotFound, domain.CodeResourceNotFound, "No such route.", ""}
	case http.StatusMethodNotAllowed:
		return &apiError{e.Code, typeInvalidRequest, domain.CodeMethodNotAllowed, "Method not allowed on this route.", ""}
	case http.StatusRequestEntityTooLarge:
		return &apiError{e.Code, typeInvalidRequest, domain.CodeRequestTooLarge, "Request body too large.", ""}
	case http.StatusUnsupportedMediaType:
		return &apiError{e.Code, typeInvalidRequest, domain.CodeUnsupportedMediaType, "Content-Type must be application/json.", ""}
	case http.StatusUnauthorized:
		return &apiError{e.Code, typeAuthentication, domain.CodeInvalidAPIKey, "Invalid or missing secret key.", ""}
	case http.StatusTooManyRequests:
		return &apiError{e.Code, typeRateLimit, domain.CodeRateLimited, "Too many requests.", ""}
	}
	if e.Code >= 400 && e.Code < 500 {
		return &apiError{e.Code, typeInvalidRequest, domain.CodeParameterInvalid, fmt.Sprint(msg), ""}
	}
	return nil
}

// statusClientClosedRequest is nginx's status for a request whose client went away first.
const statusClientClosedRequest = 499

// errorHandler is Echo's HTTPErrorHandler: the one renderer of every non-2xx body.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := classify(err)
		if (ae == nil || ae.Status >= 500) && clientGone(c) {
			// Nobody is left to read an answer: not an internal error. 499 is nginx's "client
			// closed request", for the access log; the body-less answer goes nowhere.
			log.InfoContext(c.Request().Context(), "client disconnected", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
			c.Response().Header().Set(echo.HeaderConnection, "close")
			_ = c.NoContent(statusClientClosedRequest)
			return
		}
		if ae != nil && ae.Status >= 500 { // a documented 5xx (no chain can quote): the cause is the operator's
			log.WarnContext(c.Request().Context(), "service unavailable", "method", c.Request().Method,
				"path", c.Request().URL.Path, "err", err)
		}
		if ae == nil { // unclassified: an internal error, its cause logged, not sent
			rid := c.Response().Header().Get(echo.HeaderXRequestID)
			log.ErrorContext(c.Request().Context(), "internal error", "method", c.Request().Method,
				"path", c.Request().URL.Path, "err", err)
			ae = &apiError{http.StatusInternalServerError, typeAPI, domain.CodeInternal,
				fmt.Sprintf("Internal error (request id %s).", rid), ""}
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(ae.Status)
			return
		}
		_ = c.JSONBlob(ae.Status, errorBody(ae))
	}
}

// errorBody is the documented error body of ae, as sent (and as stored for idempotent replays).
func errorBody(ae *apiError) []byte {
	var body gen.Error
	body.Error.Type, body.Error.Code, body.Error.Message = string(ae.Type), string(ae.Code), ae.Message
	if ae.Param != "" {
		p := ae.Param
		body.Error.Param = &p
	}
	raw, err := json.Marshal(body)
	if err != nil { // strings only: cannot fail
		return []byte(`{"error":{"type":"api_error","code":"internal_error","message":"Internal error."}}`)
	}
	return append(raw, '\n')
}
