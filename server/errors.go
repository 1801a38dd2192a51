package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
)

// apiError is one row of the error table (DESIGN §5).
type apiError struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string
}

func (e *apiError) Error() string { return e.Message }

// classify maps any error to its row of the table, with errors.Is/As only.
func classify(err error) *apiError {
	var (
		ae       *apiError
		invalid  *domain.InvalidInputError
		reqErr   *openapi3filter.RequestError
		httpErr  *echo.HTTPError
		stateErr *domain.StateError
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &invalid):
		return &apiError{http.StatusBadRequest, "invalid_request_error", invalid.Code, invalid.Error(), invalid.Param}
	case errors.As(err, &reqErr):
		return fromRequestError(reqErr)
	case errors.Is(err, domain.ErrInvalidAPIKey):
		return &apiError{http.StatusUnauthorized, "authentication_error", "invalid_api_key", "Invalid or missing secret key.", ""}
	case errors.Is(err, domain.ErrDepositsDisabled):
		return &apiError{http.StatusForbidden, "permission_error", "deposits_disabled", "Deposits are not enabled for this merchant.", "type"}
	case errors.Is(err, domain.ErrWithdrawalsOff):
		return &apiError{http.StatusForbidden, "permission_error", "withdrawals_disabled", "Withdrawals are not enabled for this merchant.", ""}
	case errors.Is(err, domain.ErrPaymentNotFound):
		return &apiError{http.StatusNotFound, "not_found_error", "payment_not_found", "No such payment.", "paymentId"}
	case errors.Is(err, domain.ErrWithdrawalNotFound):
		return &apiError{http.StatusNotFound, "not_found_error", "withdrawal_not_found", "No such withdrawal.", "withdrawalId"}
	case errors.Is(err, idempotency.ErrKeyInUse):
		return &apiError{http.StatusConflict, "idempotency_error", "idempotency_key_in_use", "A request with this Idempotency-Key is still in progress; retry later.", "Idempotency-Key"}
	case errors.Is(err, idempotency.ErrKeyReused):
		return &apiError{http.StatusConflict, "idempotency_error", "idempotency_key_reused", "This Idempotency-Key was already used with a different request.", "Idempotency-Key"}
	case errors.As(err, &stateErr):
		return &apiError{http.StatusConflict, "invalid_request_error", "invalid_state", stateErr.Error(), ""}
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
		return &apiError{e.Code, "not_found_error", "resource_not_found", "No such route.", ""}
	case http.StatusMethodNotAllowed:
		return &apiError{e.Code, "invalid_request_error", "method_not_allowed", "Method not allowed on this route.", ""}
	case http.StatusRequestEntityTooLarge:
		return &apiError{e.Code, "invalid_request_error", "request_too_large", "Request body too large.", ""}
	case http.StatusUnsupportedMediaType:
		return &apiError{e.Code, "invalid_request_error", "unsupported_media_type", "Content-Type must be application/json.", ""}
	case http.StatusUnauthorized:
		return &apiError{e.Code, "authentication_error", "invalid_api_key", "Invalid or missing secret key.", ""}
	case http.StatusTooManyRequests:
		return &apiError{e.Code, "rate_limit_error", "rate_limited", "Too many requests.", ""}
	}
	if e.Code >= 400 && e.Code < 500 {
		return &apiError{e.Code, "invalid_request_error", "parameter_invalid", fmt.Sprint(msg), ""}
	}
	return nil
}

// errorHandler is Echo's HTTPErrorHandler: the one renderer of every non-2xx body.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := classify(err)
		if ae == nil || ae.Status >= 500 {
			rid := c.Response().Header().Get(echo.HeaderXRequestID)
			log.ErrorContext(c.Request().Context(), "internal error", "request_id", rid, "method", c.Request().Method,
				"path", c.Request().URL.Path, "err", err)
			ae = &apiError{http.StatusInternalServerError, "api_error", "internal_error",
				fmt.Sprintf("Internal error (request id %s).", rid), ""}
		}
		var body gen.Error
		body.Error.Type, body.Error.Code, body.Error.Message = ae.Type, ae.Code, ae.Message
		if ae.Param != "" {
			p := ae.Param
			body.Error.Param = &p
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(ae.Status)
			return
		}
		_ = c.JSON(ae.Status, body)
	}
}
