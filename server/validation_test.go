package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/paymentsd/paymentsd/settlement"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
)

func TestURIFormat(t *testing.T) {
	accepted := []string{
		"https://x.y/p?q=1",
		"urn:isbn:123",
		"http://localhost:8080",
		"https://shop.example/thanks#done",
		"mailto:someone@example.com",
		"custom-app://callback",
	}
	for _, s := range accepted {
		t.Run("accepts "+s, func(t *testing.T) {
			assert.NoError(t, uriFormat(s))
		})
	}
	refused := []string{
		"",
		"not a uri",
		"/relative",
		"relative/path",
		"//host/only",
		"https://x.y/a b",
		"https://x.y/\tp",
		"https://x.y/p\n",
		"%zz",
		":no-scheme",
	}
	for _, s := range refused {
		t.Run(fmt.Sprintf("refuses %q", s), func(t *testing.T) {
			err := uriFormat(s)
			require.Error(t, err)
			assert.Equal(t, "must be an absolute URI", err.Error())
		})
	}
}

// newTestValidator builds the validator exactly as server.New does, on the generated spec.
func newTestValidator(t *testing.T) *validator {
	t.Helper()
	doc, err := gen.GetSpec()
	require.NoError(t, err)
	v, err := newValidator(doc, settlement.Schema)
	require.NoError(t, err)
	return v
}

const (
	paymentsPath    = "/v1/external/secretkey-auth/payments"
	withdrawalsPath = "/v1/external/secretkey-auth/withdrawals"
	validAddr       = "0x9858effd232b4033e47d90003d41ec34ecaeda94"
)

// validate runs one request through the validation middleware and classifies what it returns.
// reached reports whether the next handler ran; body is what it read.
func validate(t *testing.T, v *validator, method, target, contentType, body string) (ae *apiError, reached bool, seen string) {
	t.Helper()
	var rd io.Reader
	if method == http.MethodPost || body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if contentType != "" {
		req.Header.Set(echo.HeaderContentType, contentType)
	}
	c := echo.New().NewContext(req, httptest.NewRecorder())
	err := v.middleware(func(c echo.Context) error {
		reached = true
		b, err := io.ReadAll(c.Request().Body)
		seen = string(b)
		return err
	})(c)
	if err != nil {
		ae = classify(err)
		require.NotNil(t, ae, "validation error must classify to a 4xx: %v", err)
	}
	return ae, reached, seen
}

func TestValidationMiddlewareMapsErrors(t *testing.T) {
	v := newTestValidator(t)
	const js = "application/json"
	tests := []struct {
		name          string
		method, path  string
		ct, body      string
		status        int
		code, param   string
		msgContains   string
		typeOverwrite string // expected error type when not invalid_request_error
	}{
		{"amount below minimum", http.MethodPost, paymentsPath, js, `{"amount":399,"currency":"USD","orderId":"o-1"}`,
			400, "invalid_amount", "amount", "between 400 and 100000000", ""},
		{"amount above maximum", http.MethodPost, paymentsPath, js, `{"amount":100000001,"currency":"USD","orderId":"o-1"}`,
			400, "invalid_amount", "amount", "amount:", ""},
		{"missing orderId", http.MethodPost, paymentsPath, js, `{"amount":1000,"currency":"USD"}`,
			400, "parameter_missing", "orderId", `"orderId" is missing`, ""},
		{"missing currency", http.MethodPost, paymentsPath, js, `{"amount":1000,"orderId":"o-1"}`,
			400, "parameter_missing", "currency", "", ""},
		{"currency not USD", http.MethodPost, paymentsPath, js, `{"amount":1000,"currency":"EUR","orderId":"o-1"}`,
			400, "parameter_invalid", "currency", "", ""},
		{"redirectUrl not a URI", http.MethodPost, paymentsPath, js, `{"amount":1000,"currency":"USD","orderId":"o-1","redirectUrl":"not a uri"}`,
			400, "parameter_invalid", "redirectUrl", "absolute http(s) URL", ""},
		{"redirectUrl relative", http.MethodPost, paymentsPath, js, `{"amount":1000,"currency":"USD","orderId":"o-1","redirectUrl":"/thanks"}`,
			400, "parameter_invalid", "redirectUrl", "absolute http(s) URL", ""},
		{"redirectUrl javascript:", http.MethodPost, paymentsPath, js, `{"amount":1000,"currency":"USD","orderId":"o-1","redirectUrl":"javascript:alert(1)//"}`,
			400, "parameter_invalid", "redirectUrl", "absolute http(s) URL", ""},
		{"amount is a string", http.MethodPost, paymentsPath, js, `{"amount":"1000","currency":"USD","orderId":"o-1"}`,
			400, "parameter_invalid", "amount", "", ""},
		{"wrong Content-Type", http.MethodPost, paymentsPath, "text/plain", `{"amount":1000,"currency":"USD","orderId":"o-1"}`,
			415, "unsupported_media_type", "", "Content-Type", ""},
		{"form Content-Type", http.MethodPost, withdrawalsPath, "application/x-www-form-urlencoded", `amountInCents=500`,
			415, "unsupported_media_type", "", "Content-Type", ""},
		{"empty body", http.MethodPost, paymentsPath, js, ``,
			400, "parameter_missing", "", "request body is required", ""},
		{"malformed JSON", http.MethodPost, paymentsPath, js, `{bad`,
			400, "parameter_invalid", "", "invalid character", ""},
		{"withdrawal amount below minimum", http.MethodPost, withdrawalsPath, js,
			`{"amountInCents":99,"chainId":"eip155:8453","recipientAddress":"` + validAddr + `"}`,
			400, "invalid_amount", "amountInCents", "at least 100", ""},
		// Any eip155 chain passes the schema (the catalogue is data): the service refuses one it
		// does not know (tests/withdrawals_test.go); the schema refuses what is not CAIP-2.
		{"withdrawal chain not CAIP-2", http.MethodPost, withdrawalsPath, js,
			`{"amountInCents":500,"chainId":"eip155:0999","recipientAddress":"` + validAddr + `"}`,
			400, "parameter_invalid", "chainId", "", ""},
		{"withdrawal zero address", http.MethodPost, withdrawalsPath, js,
			`{"amountInCents":500,"chainId":"eip155:8453","recipientAddress":"0x0000000000000000000000000000000000000000"}`,
			400, "parameter_invalid", "recipientAddress", "", ""},
		{"withdrawal short address", http.MethodPost, withdrawalsPath, js,
			`{"amountInCents":500,"chainId":"eip155:8453","recipientAddress":"0x1234"}`,
			400, "parameter_invalid", "recipientAddress", "", ""},
		{"withdrawal missing recipient", http.MethodPost, withdrawalsPath, js,
			`{"amountInCents":500,"chainId":"eip155:8453"}`,
			400, "parameter_missing", "recipientAddress", "", ""},
		{"limit 0", http.MethodGet, paymentsPath + "?limit=0", "", "", 400, "parameter_invalid", "limit", "at least 1", ""},
		{"limit above max", http.MethodGet, paymentsPath + "?limit=1001", "", "", 400, "parameter_invalid", "limit", "at most 1000", ""},
		{"limit not an integer", http.MethodGet, paymentsPath + "?limit=abc", "", "", 400, "parameter_invalid", "limit", "", ""},
		{"limit sent empty", http.MethodGet, paymentsPath + "?limit=", "", "", 400, "parameter_invalid", "limit", "value is required", ""},
		{"negative offset", http.MethodGet, paymentsPath + "?offset=-1", "", "", 400, "parameter_invalid", "offset", "at least 0", ""},
		{"withdrawals limit 0", http.MethodGet, withdrawalsPath + "?limit=0", "", "", 400, "parameter_invalid", "limit", "", ""},
		{"chains limit 0", http.MethodGet, "/v1/external/chains?limit=0", "", "", 400, "parameter_invalid", "limit", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae, reached, _ := validate(t, v, tc.method, tc.path, tc.ct, tc.body)
			require.NotNil(t, ae, "request must be refused")
			assert.False(t, reached, "the handler must not run")
			assert.Equal(t, tc.status, ae.Status)
			assert.Equal(t, tc.code, string(ae.Code))
			assert.Equal(t, tc.param, ae.Param)
			assert.EqualValues(t, "invalid_request_error", ae.Type)
			assert.NotEmpty(t, ae.Message)
			if tc.msgContains != "" {
				assert.Contains(t, ae.Message, tc.msgContains)
			}
			if tc.param != "" && tc.status == 400 {
				assert.True(t, strings.HasPrefix(ae.Message, tc.param+": "), "message names the field: %q", ae.Message)
			}
		})
	}
}

func TestValidationMiddlewarePassesValidRequests(t *testing.T) {
	v := newTestValidator(t)
	tests := []struct {
		name, method, path, ct, body string
	}{
		{"payment", http.MethodPost, paymentsPath, "application/json", `{"amount":1000,"currency":"USD","orderId":"o-1","redirectUrl":"https://x.y/p?q=1"}`},
		{"payment at both bounds", http.MethodPost, paymentsPath, "application/json; charset=utf-8", `{"amount":400,"currency":"USD","orderId":"o-1"}`},
		{"payment max", http.MethodPost, paymentsPath, "application/json", `{"amount":100000000,"currency":"USD","orderId":"o-1"}`},
		{"deposit without amount", http.MethodPost, paymentsPath, "application/json", `{"type":"deposit","currency":"USD","orderId":"o-1"}`},
		{"withdrawal with mixed-case address", http.MethodPost, withdrawalsPath, "application/json",
			`{"amountInCents":100,"chainId":"eip155:8453","recipientAddress":"0x9858EfFD232B4033E47d90003D41EC34EcaEda94"}`},
		{"list with paging", http.MethodGet, paymentsPath + "?limit=1000&offset=0", "", ""},
		{"list without parameters", http.MethodGet, withdrawalsPath, "", ""},
		{"not an API route: Echo answers", http.MethodGet, "/healthz", "", ""},
		{"unknown path: Echo answers", http.MethodGet, "/nope", "", ""},
		{"method the route lacks: Echo answers", http.MethodDelete, paymentsPath, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae, reached, seen := validate(t, v, tc.method, tc.path, tc.ct, tc.body)
			require.Nil(t, ae, "unexpected refusal: %+v", ae)
			assert.True(t, reached)
			if tc.body != "" {
				assert.JSONEq(t, tc.body, seen, "the handler still reads the body")
			}
		})
	}
}

func TestFromRequestErrorDirect(t *testing.T) {
	tests := []struct {
		name   string
		err    *openapi3filter.RequestError
		status int
		code   string
		param  string
		msg    string
	}{
		{"missing required parameter", &openapi3filter.RequestError{Parameter: &openapi3.Parameter{Name: "limit", In: "query"},
			Err: openapi3filter.ErrInvalidRequired}, 400, "parameter_missing", "limit", "limit: "},
		{"parameter with a plain error", &openapi3filter.RequestError{Parameter: &openapi3.Parameter{Name: "offset", In: "query"},
			Err: errors.New("boom")}, 400, "parameter_invalid", "offset", "offset: boom"},
		{"parameter schema minimum is not invalid_amount unless the field is an amount", &openapi3filter.RequestError{
			Parameter: &openapi3.Parameter{Name: "limit", In: "query"},
			Err:       &openapi3.SchemaError{SchemaField: "minimum", Reason: "number must be at least 1"}},
			400, "parameter_invalid", "limit", "limit: number must be at least 1"},
		{"parameter named amount with a maximum", &openapi3filter.RequestError{
			Parameter: &openapi3.Parameter{Name: "amount", In: "query"},
			Err:       &openapi3.SchemaError{SchemaField: "maximum", Reason: "too big"}},
			400, "invalid_amount", "amount", "amount: too big"},
		{"missing body", &openapi3filter.RequestError{RequestBody: &openapi3.RequestBody{Required: true},
			Err: openapi3filter.ErrInvalidRequired}, 400, "parameter_missing", "", "A JSON request body is required."},
		{"no reason at all", &openapi3filter.RequestError{}, 400, "parameter_invalid", "", "invalid value"},
		{"reason only", &openapi3filter.RequestError{Reason: "bad things"}, 400, "parameter_invalid", "", "bad things"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae := fromRequestError(tc.err)
			require.NotNil(t, ae)
			assert.Equal(t, tc.status, ae.Status)
			assert.Equal(t, tc.code, string(ae.Code))
			assert.Equal(t, tc.param, ae.Param)
			assert.Contains(t, ae.Message, tc.msg)
			// classify reaches the same row, also through wrapping.
			assert.Equal(t, ae, classify(fmt.Errorf("validate: %w", tc.err)))
		})
	}
}

func TestValidationMiddlewareContentType(t *testing.T) {
	v := newTestValidator(t)
	body := `{"amount":1000,"currency":"USD","orderId":"o-1"}`
	tests := []struct {
		name, ct string
		want415  bool
	}{
		{"application/json", "application/json", false},
		{"with charset", "application/json; charset=utf-8", false},
		{"media type is case-insensitive", "Application/JSON", false},
		{"missing Content-Type", "", true},
		{"text/plain", "text/plain", true},
		{"json-like vendor type", "application/vnd.api+json", true},
		{"malformed header", "application/json; =", true},
		{"multipart", "multipart/form-data; boundary=x", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae, reached, _ := validate(t, v, http.MethodPost, paymentsPath, tc.ct, body)
			if !tc.want415 {
				assert.Nil(t, ae)
				assert.True(t, reached)
				return
			}
			require.NotNil(t, ae)
			assert.False(t, reached)
			assert.Equal(t, http.StatusUnsupportedMediaType, ae.Status)
			assert.EqualValues(t, "unsupported_media_type", ae.Code)
			assert.Equal(t, "Content-Type must be application/json.", ae.Message)
		})
	}
	t.Run("no body: the media type is not checked, the missing body is the error", func(t *testing.T) {
		ae, reached, _ := validate(t, v, http.MethodPost, paymentsPath, "text/plain", "")
		require.NotNil(t, ae)
		assert.False(t, reached)
		assert.Equal(t, http.StatusBadRequest, ae.Status)
		assert.EqualValues(t, "parameter_missing", ae.Code)
	})
	t.Run("GET ignores Content-Type", func(t *testing.T) {
		ae, reached, _ := validate(t, v, http.MethodGet, paymentsPath, "text/plain", "")
		assert.Nil(t, ae)
		assert.True(t, reached)
	})
}

func TestMissingPropertyAndJoinParam(t *testing.T) {
	assert.Equal(t, "orderId", missingProperty(`property "orderId" is missing`))
	assert.EqualValues(t, "", missingProperty(`no quotes here`))
	assert.EqualValues(t, "", missingProperty(`unterminated "quote`))
	assert.EqualValues(t, "", missingProperty(`""`))
	assert.EqualValues(t, "name", joinParam("", "name"))
	assert.Equal(t, "parent.name", joinParam("parent", "name"))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		typ    errorType
		code   domain.ErrorCode
		param  string
	}{
		{"invalid api key", domain.ErrInvalidAPIKey, 401, "authentication_error", "invalid_api_key", ""},
		{"deposits disabled", domain.ErrDepositsDisabled, 403, "permission_error", "deposits_disabled", "type"},
		{"withdrawals disabled", domain.ErrWithdrawalsOff, 403, "permission_error", "withdrawals_disabled", ""},
		{"payment not found", domain.ErrPaymentNotFound, 404, "not_found_error", "payment_not_found", "paymentId"},
		{"withdrawal not found", domain.ErrWithdrawalNotFound, 404, "not_found_error", "withdrawal_not_found", "withdrawalId"},
		{"idempotency key reused", idempotency.ErrKeyReused, 409, "idempotency_error", "idempotency_key_reused", "Idempotency-Key"},
		{"wrapped payment not found", fmt.Errorf("get: %w", domain.ErrPaymentNotFound), 404, "not_found_error", "payment_not_found", "paymentId"},
		{"joined idempotency error", errors.Join(errors.New("x"), idempotency.ErrKeyReused), 409, "idempotency_error", "idempotency_key_reused", "Idempotency-Key"},
		{"invalid input", domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "too much"), 400, "invalid_request_error", "invalid_amount", "amountInCents"},
		{"wrapped invalid input", fmt.Errorf("tx: %w", domain.Invalid(domain.CodeChainNotSupported, "chainId", "nope")), 400, "invalid_request_error", "chain_not_supported", "chainId"},
		{"insufficient balance is a state refusal", fmt.Errorf("tx: %w", &domain.InsufficientBalanceError{RequestedCents: 500, AvailableCents: 100}), 409, "invalid_request_error", "insufficient_balance", "amountInCents"},
		{"transition refused", &domain.TransitionError{Entity: "payment", ID: "p1", From: "completed", To: "completed"}, 409, "invalid_request_error", "invalid_state", ""},
		{"echo 404", echo.ErrNotFound, 404, "not_found_error", "resource_not_found", ""},
		{"echo 405", echo.ErrMethodNotAllowed, 405, "invalid_request_error", "method_not_allowed", ""},
		{"echo 413", echo.ErrStatusRequestEntityTooLarge, 413, "invalid_request_error", "request_too_large", ""},
		{"echo 415", echo.ErrUnsupportedMediaType, 415, "invalid_request_error", "unsupported_media_type", ""},
		{"echo 401", echo.ErrUnauthorized, 401, "authentication_error", "invalid_api_key", ""},
		{"echo 429", echo.ErrTooManyRequests, 429, "rate_limit_error", "rate_limited", ""},
		{"other echo 4xx", echo.NewHTTPError(http.StatusBadRequest, "bad input"), 400, "invalid_request_error", "parameter_invalid", ""},
		{"echo 4xx with a non-string message", echo.NewHTTPError(http.StatusGone, 42), 410, "invalid_request_error", "parameter_invalid", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae := classify(tc.err)
			require.NotNil(t, ae)
			assert.Equal(t, tc.status, ae.Status)
			assert.Equal(t, tc.typ, ae.Type)
			assert.Equal(t, tc.code, ae.Code)
			assert.Equal(t, tc.param, ae.Param)
			assert.NotEmpty(t, ae.Message)
		})
	}
}

func TestClassifyMessages(t *testing.T) {
	assert.Equal(t, "amountInCents: too much", classify(domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "too much")).Message)
	assert.Equal(t, "payment p1 is already completed",
		classify(&domain.TransitionError{Entity: "payment", ID: "p1", From: "completed", To: "completed"}).Message)
	assert.Equal(t, "withdrawal w1 cannot move from completed to cancelled",
		classify(&domain.TransitionError{Entity: "withdrawal", ID: "w1", From: "completed", To: "cancelled"}).Message)
	assert.Equal(t, "amountInCents 500 exceeds the available balance of 100 cents",
		classify(&domain.InsufficientBalanceError{RequestedCents: 500, AvailableCents: 100}).Message)
	assert.Equal(t, "bad input", classify(echo.NewHTTPError(http.StatusBadRequest, "bad input")).Message)
	assert.Equal(t, "Gone", classify(echo.NewHTTPError(http.StatusGone, 42)).Message, "falls back to the status text")
	own := &apiError{http.StatusTeapot, "t", "c", "m", "p"}
	assert.Same(t, own, classify(fmt.Errorf("wrapped: %w", own)), "an apiError passes through unchanged")
}

func TestClassifyUnknownIsNil(t *testing.T) {
	for _, err := range []error{
		errors.New("database exploded"),
		context.Canceled,
		domain.ErrMerchantNotFound,
		echo.ErrInternalServerError,
		echo.NewHTTPError(http.StatusBadGateway, "upstream"),
		nil,
	} {
		t.Run(fmt.Sprint(err), func(t *testing.T) {
			assert.Nil(t, classify(err))
		})
	}
}

func TestErrorHandlerRendersTheTable(t *testing.T) {
	e := echo.New()
	h := errorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))
	render := func(method string, err error) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest(method, "/x", nil), rec)
		c.Response().Header().Set(echo.HeaderXRequestID, "rid-1")
		h(err, c)
		return rec
	}

	rec := render(http.MethodGet, domain.ErrPaymentNotFound)
	assert.Equal(t, 404, rec.Code)
	assert.JSONEq(t, `{"error":{"type":"not_found_error","code":"payment_not_found","message":"No such payment.","param":"paymentId"}}`, rec.Body.String())

	rec = render(http.MethodGet, domain.ErrWithdrawalsOff)
	assert.Equal(t, 403, rec.Code)
	assert.NotContains(t, rec.Body.String(), `"param"`, "param omitted when empty")

	rec = render(http.MethodGet, errors.New("secret internal detail"))
	assert.Equal(t, 500, rec.Code)
	assert.Contains(t, rec.Body.String(), `"code":"internal_error"`)
	assert.Contains(t, rec.Body.String(), "rid-1", "the request id is given for support")
	assert.NotContains(t, rec.Body.String(), "secret internal detail", "internals never leak")

	rec = render(http.MethodHead, domain.ErrPaymentNotFound)
	assert.Equal(t, 404, rec.Code)
	assert.Empty(t, rec.Body.String(), "HEAD has no body")
}
