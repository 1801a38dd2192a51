package server

// Fuzz targets for the request decoding and validation path: each input goes through an Echo
// instance wired like server.New (the validation middleware, the generated strict handlers and
// errorHandler) for both response shapes, with a recording stub in place of the real handlers.
// The invariants are checked against what the test derives from the raw input on its own, and
// against what the generated binder hands the handler. Run with scripts/fuzz.sh.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/settlement"
)

const (
	fuzzPaymentsPath    = "/v1/external/secretkey-auth/payments"
	fuzzWithdrawalsPath = "/v1/external/secretkey-auth/withdrawals"
	maxCents            = 100_000_000
)

// fuzzContentTypes are the Content-Type headers a fuzz input picks from (by index, modulo).
var fuzzContentTypes = []string{
	"application/json",
	"application/json; charset=utf-8",
	"Application/JSON",
	"text/plain",
	"", // no header
	"application/json; =",
	"application/vnd.api+json",
	"APPLICATION/JSON;charset=UTF-8",
}

// fuzzCall is what one request did inside the stack.
type fuzzCall struct {
	validated bool // the validation middleware called its next handler
	reached   bool // the generated binder succeeded and the stub ran
	payment   *gen.CreatePaymentRequest
	withdraw  *gen.CreateWithdrawalRequest
	list      *gen.ListPaymentsParams
}

// fuzzStub implements gen.StrictServerInterface: it records the bound request and answers 2xx.
type fuzzStub struct{ call *fuzzCall }

var _ gen.StrictServerInterface = fuzzStub{}

func stubResponse(status int) settlement.Response {
	return settlement.Response{Status: status, Body: map[string]bool{"ok": true}}
}

func (s fuzzStub) ListChains(context.Context, gen.ListChainsRequestObject) (gen.ListChainsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) ListPayments(_ context.Context, r gen.ListPaymentsRequestObject) (gen.ListPaymentsResponseObject, error) {
	s.call.reached, s.call.list = true, &r.Params
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) CreatePayment(_ context.Context, r gen.CreatePaymentRequestObject) (gen.CreatePaymentResponseObject, error) {
	s.call.reached, s.call.payment = true, r.Body
	return stubResponse(http.StatusCreated), nil
}

func (s fuzzStub) GetPayment(context.Context, gen.GetPaymentRequestObject) (gen.GetPaymentResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) ListWithdrawals(context.Context, gen.ListWithdrawalsRequestObject) (gen.ListWithdrawalsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) CreateWithdrawal(_ context.Context, r gen.CreateWithdrawalRequestObject) (gen.CreateWithdrawalResponseObject, error) {
	s.call.reached, s.call.withdraw = true, r.Body
	return stubResponse(http.StatusCreated), nil
}

func (s fuzzStub) GetWithdrawal(context.Context, gen.GetWithdrawalRequestObject) (gen.GetWithdrawalResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetCheckout(context.Context, gen.GetCheckoutRequestObject) (gen.GetCheckoutResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) SelectCheckoutQuote(context.Context, gen.SelectCheckoutQuoteRequestObject) (gen.SelectCheckoutQuoteResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) RefreshCheckoutQuotes(context.Context, gen.RefreshCheckoutQuotesRequestObject) (gen.RefreshCheckoutQuotesResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetCheckoutQuoteQR(context.Context, gen.GetCheckoutQuoteQRRequestObject) (gen.GetCheckoutQuoteQRResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetMerchantBalance(context.Context, gen.GetMerchantBalanceRequestObject) (gen.GetMerchantBalanceResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetMerchantWithdrawalConfig(context.Context, gen.GetMerchantWithdrawalConfigRequestObject) (gen.GetMerchantWithdrawalConfigResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) UpdateMerchantWithdrawalConfig(context.Context, gen.UpdateMerchantWithdrawalConfigRequestObject) (gen.UpdateMerchantWithdrawalConfigResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetMerchantAcceptedAssets(context.Context, gen.GetMerchantAcceptedAssetsRequestObject) (gen.GetMerchantAcceptedAssetsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) SetMerchantAcceptedAssets(context.Context, gen.SetMerchantAcceptedAssetsRequestObject) (gen.SetMerchantAcceptedAssetsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) CreateMerchantWithdrawal(context.Context, gen.CreateMerchantWithdrawalRequestObject) (gen.CreateMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return settlement.Raw{Status: http.StatusCreated, Body: []byte(`{"ok":true}`)}, nil
}

func (s fuzzStub) CancelMerchantWithdrawal(context.Context, gen.CancelMerchantWithdrawalRequestObject) (gen.CancelMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return settlement.Raw{Status: http.StatusOK, Body: []byte(`{"ok":true}`)}, nil
}

func (s fuzzStub) ListMerchantWithdrawals(context.Context, gen.ListMerchantWithdrawalsRequestObject) (gen.ListMerchantWithdrawalsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetMerchantWithdrawal(context.Context, gen.GetMerchantWithdrawalRequestObject) (gen.GetMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) ListMerchantApiKeys(context.Context, gen.ListMerchantApiKeysRequestObject) (gen.ListMerchantApiKeysResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantApiKeys200JSONResponse{}, nil
}

func (s fuzzStub) CreateMerchantApiKey(context.Context, gen.CreateMerchantApiKeyRequestObject) (gen.CreateMerchantApiKeyResponseObject, error) {
	s.call.reached = true
	return gen.CreateMerchantApiKey201JSONResponse{}, nil
}

func (s fuzzStub) RevokeMerchantApiKey(context.Context, gen.RevokeMerchantApiKeyRequestObject) (gen.RevokeMerchantApiKeyResponseObject, error) {
	s.call.reached = true
	return gen.RevokeMerchantApiKey200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantWebhookEndpoints(context.Context, gen.ListMerchantWebhookEndpointsRequestObject) (gen.ListMerchantWebhookEndpointsResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantWebhookEndpoints200JSONResponse{}, nil
}

func (s fuzzStub) CreateMerchantWebhookEndpoint(context.Context, gen.CreateMerchantWebhookEndpointRequestObject) (gen.CreateMerchantWebhookEndpointResponseObject, error) {
	s.call.reached = true
	return gen.CreateMerchantWebhookEndpoint201JSONResponse{}, nil
}

func (s fuzzStub) DeleteMerchantWebhookEndpoint(context.Context, gen.DeleteMerchantWebhookEndpointRequestObject) (gen.DeleteMerchantWebhookEndpointResponseObject, error) {
	s.call.reached = true
	return gen.DeleteMerchantWebhookEndpoint204Response{}, nil
}

func (s fuzzStub) RotateMerchantWebhookSecret(context.Context, gen.RotateMerchantWebhookSecretRequestObject) (gen.RotateMerchantWebhookSecretResponseObject, error) {
	s.call.reached = true
	return gen.RotateMerchantWebhookSecret200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantWebhookDeliveries(context.Context, gen.ListMerchantWebhookDeliveriesRequestObject) (gen.ListMerchantWebhookDeliveriesResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantWebhookDeliveries200JSONResponse{}, nil
}

func (s fuzzStub) RedeliverMerchantWebhookEvent(context.Context, gen.RedeliverMerchantWebhookEventRequestObject) (gen.RedeliverMerchantWebhookEventResponseObject, error) {
	s.call.reached = true
	return gen.RedeliverMerchantWebhookEvent202JSONResponse{}, nil
}

// fuzzApp is one shape's Echo instance. Requests run one at a time (a fuzz worker calls its
// function sequentially), so the current call is a plain field.
type fuzzApp struct {
	shape settlement.Shape
	e     *echo.Echo
	call  *fuzzCall
}

func newFuzzApp(tb testing.TB, shape settlement.Shape) *fuzzApp {
	tb.Helper()
	var (
		doc *openapi3.T
		err error
	)
	if shape == settlement.Guide {
		doc, err = openapi3.NewLoader().LoadFromData(gen.GuideOpenAPIYAML)
	} else {
		doc, err = gen.GetSpec()
	}
	if err != nil {
		tb.Fatalf("load %s spec: %v", shape, err)
	}
	v, err := newValidator(doc, shape)
	if err != nil {
		tb.Fatalf("build %s validator: %v", shape, err)
	}
	a := &fuzzApp{shape: shape, call: &fuzzCall{}}
	a.e = echo.New()
	a.e.HideBanner, a.e.HidePort = true, true
	a.e.HTTPErrorHandler = errorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))
	a.e.Use(v.middleware)
	a.e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			a.call.validated = true
			return next(c)
		}
	})
	gen.RegisterHandlers(a.e, gen.NewStrictHandler(fuzzStub{a.call}, nil))
	return a
}

// serve runs one request; no recover middleware, so a panic fails the fuzz input.
func (a *fuzzApp) serve(req *http.Request) (*httptest.ResponseRecorder, fuzzCall) {
	*a.call = fuzzCall{}
	rec := httptest.NewRecorder()
	a.e.ServeHTTP(rec, req)
	return rec, *a.call
}

var (
	fuzzAppsOnce sync.Once
	fuzzApps     []*fuzzApp
)

func fuzzAppsFor(tb testing.TB) []*fuzzApp {
	fuzzAppsOnce.Do(func() {
		fuzzApps = []*fuzzApp{newFuzzApp(tb, settlement.Schema), newFuzzApp(tb, settlement.Guide)}
	})
	if len(fuzzApps) != 2 {
		tb.Fatal("fuzz apps failed to build")
	}
	return fuzzApps
}

// checkResponse asserts the invariants every response keeps, and returns whether it is a 2xx.
func checkResponse(t *testing.T, shape settlement.Shape, rec *httptest.ResponseRecorder, call fuzzCall) bool {
	t.Helper()
	switch {
	case rec.Code >= 500:
		t.Fatalf("[%s] 5xx: %d %s", shape, rec.Code, rec.Body.String())
	case rec.Code >= 200 && rec.Code < 300:
		if !call.reached {
			t.Fatalf("[%s] %d without reaching the handler", shape, rec.Code)
		}
		return true
	case rec.Code < 400:
		t.Fatalf("[%s] unexpected status %d", shape, rec.Code)
	}
	if call.reached {
		t.Fatalf("[%s] handler ran but the status is %d", shape, rec.Code)
	}
	if mt, _, err := mime.ParseMediaType(rec.Header().Get(echo.HeaderContentType)); err != nil || mt != "application/json" {
		t.Fatalf("[%s] %d error body is not JSON: Content-Type %q", shape, rec.Code, rec.Header().Get(echo.HeaderContentType))
	}
	var body struct {
		Error struct {
			Type    string  `json:"type"`
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("[%s] %d error body does not decode: %v: %s", shape, rec.Code, err, rec.Body.String())
	}
	if body.Error.Type == "" || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("[%s] %d error body lacks type, code or message: %s", shape, rec.Code, rec.Body.String())
	}
	if body.Error.Param != nil && *body.Error.Param == "" {
		t.Fatalf("[%s] %d error body has an empty param: %s", shape, rec.Code, rec.Body.String())
	}
	return false
}

// decodeObject returns the body as a JSON object when it is exactly one valid JSON object
// (RFC 8259: only space, tab, CR and LF around it), numbers kept as json.Number.
func decodeObject(body []byte) (map[string]any, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("not a single valid JSON text")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("top-level value is %T, not an object", v)
	}
	return m, nil
}

// intIn reads a JSON number that is mathematically an integer within [lo, hi].
func intIn(v any, lo, hi int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v (%T) is not a number", v, v)
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || !r.IsInt() {
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	if r.Cmp(big.NewRat(lo, 1)) < 0 || r.Cmp(big.NewRat(hi, 1)) > 0 {
		return 0, fmt.Errorf("%s is outside [%d, %d]", n, lo, hi)
	}
	return r.Num().Int64(), nil
}

// boundedString reads an optional or required string member: at most max code points, no NUL.
func boundedString(m map[string]any, key string, max int, required bool) (*string, error) {
	v, present := m[key]
	if !present {
		if required {
			return nil, fmt.Errorf("%s is missing", key)
		}
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s is %T, not a string", key, v)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return nil, fmt.Errorf("%s has %d code points (max %d)", key, n, max)
	}
	if strings.ContainsRune(s, 0) {
		return nil, fmt.Errorf("%s contains NUL", key)
	}
	return &s, nil
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func strPtr[T ~string](p *T) *string {
	if p == nil {
		return nil
	}
	s := string(*p)
	return &s
}

// acceptedContentType reports whether a Content-Type header names application/json.
func acceptedContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func newBodyRequest(path string, body []byte, ct uint8) (*http.Request, string) {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	contentType := fuzzContentTypes[int(ct)%len(fuzzContentTypes)]
	if contentType != "" {
		req.Header.Set(echo.HeaderContentType, contentType)
	}
	return req, contentType
}

// checkPayment is the create-payment contract, checked independently of kin-openapi; it also
// returns the amount it read (nil when absent).
func checkPayment(m map[string]any, minCents int64) (*int64, error) {
	isPayment := true
	if v, present := m["type"]; present {
		switch v {
		case "payment":
		case "deposit":
			isPayment = false
		default:
			return nil, fmt.Errorf("type %v is not payment or deposit", v)
		}
	}
	var amount *int64
	if v, present := m["amount"]; present {
		a, err := intIn(v, minCents, maxCents)
		if err != nil {
			return nil, fmt.Errorf("amount: %w", err)
		}
		amount = &a
	} else if isPayment {
		return nil, fmt.Errorf("a payment without amount")
	}
	if m["currency"] != "USD" {
		return nil, fmt.Errorf("currency %v is not USD", m["currency"])
	}
	if _, err := boundedString(m, "orderId", 255, true); err != nil {
		return nil, err
	}
	if _, err := boundedString(m, "customerRefId", 255, false); err != nil {
		return nil, err
	}
	if _, err := boundedString(m, "customMetadata", 2048, false); err != nil {
		return nil, err
	}
	u, err := boundedString(m, "redirectUrl", 2048, false)
	if err != nil {
		return nil, err
	}
	if u != nil {
		parsed, err := url.Parse(*u)
		if err != nil || parsed.Scheme == "" || strings.ContainsAny(*u, " \t\r\n") {
			return nil, fmt.Errorf("redirectUrl %q is not an absolute URI", *u)
		}
	}
	return amount, nil
}

// checkBoundPayment compares what the generated binder gave the handler with the raw body.
func checkBoundPayment(m map[string]any, amount *int64, b *gen.CreatePaymentRequest) error {
	if b == nil {
		return fmt.Errorf("no body bound")
	}
	if !eqPtr(b.Amount, amount) {
		return fmt.Errorf("bound amount %v, body amount %v", deref(b.Amount), deref(amount))
	}
	if string(b.Currency) != m["currency"] {
		return fmt.Errorf("bound currency %q, body %v", b.Currency, m["currency"])
	}
	if b.OrderId != m["orderId"] {
		return fmt.Errorf("bound orderId %q, body %v", b.OrderId, m["orderId"])
	}
	for key, got := range map[string]*string{"type": strPtr(b.Type), "customerRefId": b.CustomerRefId,
		"customMetadata": b.CustomMetadata, "redirectUrl": b.RedirectUrl} {
		want, _ := boundedString(m, key, 1<<30, false)
		if !eqPtr(got, want) {
			return fmt.Errorf("bound %s %v, body %v", key, deref(got), deref(want))
		}
	}
	return nil
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// FuzzValidateCreatePayment: POST /payments with an arbitrary body and Content-Type never panics
// or answers 5xx; every error is a complete JSON error body; a 2xx needs a single JSON object
// that meets the create-payment contract, and the handler is bound exactly what was validated.
func FuzzValidateCreatePayment(f *testing.F) {
	f.Add([]byte(`{"amount":1000,"currency":"USD","orderId":"o-1"}`), uint8(0))
	f.Add([]byte(`{"type":"deposit","currency":"USD","orderId":"o-1"}`), uint8(1))
	apps := fuzzAppsFor(f)
	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		for _, a := range apps {
			req, contentType := newBodyRequest(fuzzPaymentsPath, body, ct)
			rec, call := a.serve(req)
			m, decodeErr := decodeObject(body)
			if !checkResponse(t, a.shape, rec, call) {
				if call.validated {
					t.Fatalf("[%s] validation accepted the body but binding refused it: %d %s: %q", a.shape, rec.Code, rec.Body.String(), body)
				}
				continue
			}
			if !acceptedContentType(contentType) {
				t.Fatalf("[%s] accepted with Content-Type %q", a.shape, contentType)
			}
			if decodeErr != nil {
				t.Fatalf("[%s] accepted a body that is not a single JSON object (%v): %q", a.shape, decodeErr, body)
			}
			amount, err := checkPayment(m, a.shape.PaymentLimits().MinAmountCents)
			if err != nil {
				t.Fatalf("[%s] accepted an invalid payment (%v): %q", a.shape, err, body)
			}
			if err := checkBoundPayment(m, amount, call.payment); err != nil {
				t.Fatalf("[%s] the handler got something other than what was validated (%v): %q", a.shape, err, body)
			}
		}
	})
}

var (
	recipientRE     = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	zeroAddress     = "0x" + strings.Repeat("0", 40)
	withdrawChainRE = regexp.MustCompile(`^eip155:[1-9][0-9]{0,17}$`) // any chain: the catalogue is data, checked by the service
)

// checkWithdrawal is the create-withdrawal contract of the shape; it returns the chain id.
func checkWithdrawal(m map[string]any, shape settlement.Shape) (int64, error) {
	if _, err := intIn(m["amountInCents"], 100, maxCents); err != nil {
		return 0, fmt.Errorf("amountInCents: %w", err)
	}
	var chainID int64
	if shape == settlement.Guide {
		n, ok := m["chainId"].(json.Number)
		if !ok {
			return 0, fmt.Errorf("guide chainId %v (%T) is not a number", m["chainId"], m["chainId"])
		}
		id, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || id < 1 || n.String() != strconv.FormatInt(id, 10) {
			return 0, fmt.Errorf("guide chainId %s is not a positive integer", n)
		}
		chainID = id
	} else {
		s, ok := m["chainId"].(string)
		if !ok {
			return 0, fmt.Errorf("chainId %v (%T) is not a string", m["chainId"], m["chainId"])
		}
		if !withdrawChainRE.MatchString(s) {
			return 0, fmt.Errorf("chainId %q is not eip155:<id>", s)
		}
		id, err := chains.ParseCAIP2(s)
		if err != nil {
			return 0, fmt.Errorf("chainId %q: %w", s, err)
		}
		chainID = id
	}
	addr, ok := m["recipientAddress"].(string)
	if !ok || !recipientRE.MatchString(addr) || addr == zeroAddress {
		return 0, fmt.Errorf("recipientAddress %v is not a non-zero 0x address", m["recipientAddress"])
	}
	if _, err := boundedString(m, "orderId", 255, false); err != nil {
		return 0, err
	}
	if _, err := boundedString(m, "customMetadata", 2048, false); err != nil {
		return 0, err
	}
	if v, present := m["currency"]; present && v != "USD" {
		return 0, fmt.Errorf("currency %v is not USD", v)
	}
	return chainID, nil
}

func checkBoundWithdrawal(m map[string]any, chainID int64, b *gen.CreateWithdrawalRequest) error {
	if b == nil {
		return fmt.Errorf("no body bound")
	}
	amount, _ := intIn(m["amountInCents"], 100, maxCents)
	if b.AmountInCents != amount {
		return fmt.Errorf("bound amountInCents %d, body %d", b.AmountInCents, amount)
	}
	// What the production handler does next: the bound chain id must be canonical CAIP-2.
	if id, err := chains.ParseCAIP2(string(b.ChainId)); err != nil || id != chainID {
		return fmt.Errorf("bound chainId %q, body chain %d", b.ChainId, chainID)
	}
	if b.RecipientAddress != m["recipientAddress"] {
		return fmt.Errorf("bound recipientAddress %q, body %v", b.RecipientAddress, m["recipientAddress"])
	}
	for key, got := range map[string]*string{"orderId": b.OrderId, "customMetadata": b.CustomMetadata, "currency": strPtr(b.Currency)} {
		want, _ := boundedString(m, key, 1<<30, false)
		if !eqPtr(got, want) {
			return fmt.Errorf("bound %s %v, body %v", key, deref(got), deref(want))
		}
	}
	return nil
}

// FuzzValidateCreateWithdrawal: POST /withdrawals, the same invariants with the withdrawal
// contract of each shape (CAIP-2 string chainId in the schema shape, integer in the guide's).
func FuzzValidateCreateWithdrawal(f *testing.F) {
	f.Add([]byte(`{"amountInCents":500,"chainId":"eip155:8453","recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`), uint8(0))
	f.Add([]byte(`{"amountInCents":500,"chainId":8453,"recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`), uint8(0))
	f.Add([]byte(`{"amountInCents":500,"chainId":"eip155:1337","recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`), uint8(0))
	f.Add([]byte(`{"amountInCents":500,"chainId":1337,"recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94"}`), uint8(0))
	apps := fuzzAppsFor(f)
	f.Fuzz(func(t *testing.T, body []byte, ct uint8) {
		for _, a := range apps {
			req, contentType := newBodyRequest(fuzzWithdrawalsPath, body, ct)
			rec, call := a.serve(req)
			m, decodeErr := decodeObject(body)
			if !checkResponse(t, a.shape, rec, call) {
				if call.validated {
					t.Fatalf("[%s] validation accepted the body but binding refused it: %d %s: %q", a.shape, rec.Code, rec.Body.String(), body)
				}
				continue
			}
			if !acceptedContentType(contentType) {
				t.Fatalf("[%s] accepted with Content-Type %q", a.shape, contentType)
			}
			if decodeErr != nil {
				t.Fatalf("[%s] accepted a body that is not a single JSON object (%v): %q", a.shape, decodeErr, body)
			}
			chainID, err := checkWithdrawal(m, a.shape)
			if err != nil {
				t.Fatalf("[%s] accepted an invalid withdrawal (%v): %q", a.shape, err, body)
			}
			if err := checkBoundWithdrawal(m, chainID, call.withdraw); err != nil {
				t.Fatalf("[%s] the handler got something other than what was validated (%v): %q", a.shape, err, body)
			}
		}
	})
}

// checkListQuery is the listPayments query contract, read the way net/http reads a query
// (url.ParseQuery, unparsable pairs dropped, first value of a repeated name).
func checkListQuery(raw string, p *gen.ListPaymentsParams) error {
	q, _ := url.ParseQuery(raw)
	first := func(name string) (string, bool) {
		vs, ok := q[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	if p == nil {
		return fmt.Errorf("no parameters bound")
	}
	enum := func(name string, allowed []string, bound *string) error {
		v, sent := first(name)
		if !sent {
			if bound != nil {
				return fmt.Errorf("%s not sent but bound %q", name, *bound)
			}
			return nil
		}
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("%s %q is not one of %v", name, v, allowed)
		}
		if bound == nil || *bound != v {
			return fmt.Errorf("%s %q bound as %v", name, v, deref(bound))
		}
		return nil
	}
	if err := enum("type", []string{"payment", "deposit"}, strPtr(p.Type)); err != nil {
		return err
	}
	if err := enum("status", []string{"pending", "processing", "completed", "failed", "expired", "cancelled"}, strPtr(p.Status)); err != nil {
		return err
	}
	if err := enum("sortBy", []string{"createdAt", "amountInCents"}, strPtr(p.SortBy)); err != nil {
		return err
	}
	if err := enum("sortOrder", []string{"ASC", "DESC"}, strPtr(p.SortOrder)); err != nil {
		return err
	}
	if v, sent := first("search"); sent {
		if n := utf8.RuneCountInString(v); n < 1 || n > 255 || strings.ContainsRune(v, 0) {
			return fmt.Errorf("search %q: %d code points or NUL", v, n)
		}
		if p.Search == nil || *p.Search != v {
			return fmt.Errorf("search %q bound as %v", v, deref(p.Search))
		}
	} else if p.Search != nil {
		return fmt.Errorf("search not sent but bound %q", *p.Search)
	}
	integer := func(name string, lo, hi int64, bound *int32) error {
		v, sent := first(name)
		if !sent {
			if bound != nil {
				return fmt.Errorf("%s not sent but bound %d", name, *bound)
			}
			return nil
		}
		n, err := intIn(json.Number(v), lo, hi)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if bound == nil || int64(*bound) != n {
			return fmt.Errorf("%s %q bound as %v", name, v, deref(bound))
		}
		return nil
	}
	if err := integer("limit", 1, 1000, p.Limit); err != nil {
		return err
	}
	return integer("offset", 0, 1<<31-1, p.Offset)
}

// FuzzListPaymentsQuery: GET /payments with an arbitrary raw query never panics or answers
// 5xx; errors are complete JSON error bodies; a 2xx needs every sent parameter to be valid and
// bound as sent.
func FuzzListPaymentsQuery(f *testing.F) {
	f.Add("limit=10&offset=0")
	f.Add("limit=")
	apps := fuzzAppsFor(f)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		for _, a := range apps {
			req := httptest.NewRequest(http.MethodGet, fuzzPaymentsPath, nil)
			req.URL.RawQuery = rawQuery
			req.RequestURI = fuzzPaymentsPath + "?" + rawQuery
			rec, call := a.serve(req)
			if !checkResponse(t, a.shape, rec, call) {
				if call.validated {
					t.Fatalf("[%s] validation accepted the query but binding refused it: %d %s: %q", a.shape, rec.Code, rec.Body.String(), rawQuery)
				}
				continue
			}
			if err := checkListQuery(rawQuery, call.list); err != nil {
				t.Fatalf("[%s] accepted an invalid query (%v): %q", a.shape, err, rawQuery)
			}
		}
	})
}

func (s fuzzStub) ListMerchantMembers(context.Context, gen.ListMerchantMembersRequestObject) (gen.ListMerchantMembersResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantMembers200JSONResponse{}, nil
}

func (s fuzzStub) UpdateMerchantMember(context.Context, gen.UpdateMerchantMemberRequestObject) (gen.UpdateMerchantMemberResponseObject, error) {
	s.call.reached = true
	return gen.UpdateMerchantMember200JSONResponse{}, nil
}

func (s fuzzStub) RemoveMerchantMember(context.Context, gen.RemoveMerchantMemberRequestObject) (gen.RemoveMerchantMemberResponseObject, error) {
	s.call.reached = true
	return gen.RemoveMerchantMember204Response{}, nil
}

func (s fuzzStub) ListMerchantInvitations(context.Context, gen.ListMerchantInvitationsRequestObject) (gen.ListMerchantInvitationsResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantInvitations200JSONResponse{}, nil
}

func (s fuzzStub) CreateMerchantInvitation(context.Context, gen.CreateMerchantInvitationRequestObject) (gen.CreateMerchantInvitationResponseObject, error) {
	s.call.reached = true
	return gen.CreateMerchantInvitation201JSONResponse{}, nil
}

func (s fuzzStub) RevokeMerchantInvitation(context.Context, gen.RevokeMerchantInvitationRequestObject) (gen.RevokeMerchantInvitationResponseObject, error) {
	s.call.reached = true
	return gen.RevokeMerchantInvitation204Response{}, nil
}

func (s fuzzStub) ListMerchantAuditLog(context.Context, gen.ListMerchantAuditLogRequestObject) (gen.ListMerchantAuditLogResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantAuditLog200JSONResponse{}, nil
}
