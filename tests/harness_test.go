// Package tests drives paymentsd from the outside: real HTTP through the full Echo stack
// (validation, auth, idempotency, handlers, store) on SQLite and PostgreSQL, with every
// response validated against openapi.yaml.
package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/paymentsd/paymentsd/domain"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/gen/client"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/server"
	"github.com/paymentsd/paymentsd/settlement"
)

// testXPub is the m/44'/60'/0'/0 key of the public BIP-39 test mnemonic "abandon … about":
// index 0 is 0x9858effd232b4033e47d90003d41ec34ecaeda94.
const testXPub = "xpub6EF8jXqFeFEW5bwMU7RpQtHkzE4KJxcqJtvkCjJumzW8CPpacXkb92ek4WzLQXjL93HycJwTPUAcuNxCqFPKKU5m5Z2Vq4nCyh5CyPeBFFr"

type env struct {
	t      testing.TB
	app    *app.App
	srv    *httptest.Server
	router routers.Router
	idp    *oidcProvider // the external issuer of dashboard tokens
	// issuer mints e.token's dashboard tokens: "" (the built-in issuer) or "oidc".
	issuer string
}

// newEnv starts paymentsd in the typed-schema shape on a fresh database of the backend.
func newEnv(t testing.TB, backend string) *env {
	t.Helper()
	return newShapedEnv(t, backend, settlement.Schema)
}

// specFiles are the specs each shape's responses are validated against.
var specFiles = map[settlement.Shape]string{settlement.Schema: "../openapi.yaml", settlement.Guide: "../gen/guide-openapi.yaml"}

// newShapedEnv starts paymentsd serving shape; every response is validated against that shape's spec.
func newShapedEnv(t testing.TB, backend string, shape settlement.Shape) *env {
	t.Helper()
	return newEnvWith(t, backend, func(c *config.Config) { c.ResponseShape = shape })
}

// newEnvWith starts paymentsd with the test configuration as edit changes it.
func newEnvWith(t testing.TB, backend string, edit func(*config.Config)) *env {
	t.Helper()
	idp := newOIDCProvider(t)
	cfg := config.Config{DatabaseURL: testdb.URL(t, backend), PublicBaseURL: "https://pay.example.test",
		Networks: chains.All, XPub: testXPub, QuoteTTL: 15 * time.Minute, PaymentTTL: 24 * time.Hour,
		MerchantFeeBps: 100, IdempotencyTTL: 24 * time.Hour, MaxBodyBytes: "1M",
		Pricing: config.Pricing{Source: "static"}, ResponseShape: settlement.Schema, Chains: config.Chains{ServeUnwatched: true},
		Webhooks:  config.Webhooks{SecretsKey: strings.Repeat("5e", 32)},
		Dashboard: config.Dashboard{OIDCIssuer: idp.srv.URL, OIDCAudience: oidcAudience, OIDCMerchantClaim: oidcMerchantClaim}}
	edit(&cfg)
	shape := cfg.ResponseShape
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	h, err := a.Handler()
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = server.JSONErrorListener(srv.Listener, nil) // as server.Serve: net/http's refusals answer JSON
	srv.Start()
	t.Cleanup(srv.Close)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specFiles[shape])
	require.NoError(t, err)
	doc.Servers = nil
	r, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)
	return &env{t: t, app: a, srv: srv, router: r, idp: idp}
}

// forEachBackend runs fn as a subtest per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, b))
		})
	}
}

// forEachBackendAndIssuer runs fn per backend, once with dashboard tokens of the built-in
// issuer and once with tokens of the external OIDC issuer (e.token mints them).
func forEachBackendAndIssuer(t *testing.T, fn func(t *testing.T, e *env)) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, issuer := range []string{"", "oidc"} {
			name := "builtin"
			if issuer != "" {
				name = issuer
			}
			t.Run(name, func(t *testing.T) {
				sub := *e
				sub.t, sub.issuer = t, issuer
				fn(t, &sub)
			})
		}
	})
}

type merchantOpts struct {
	deposits, withdrawals bool
	name                  string
	mode                  domain.Mode // the first key's; "" is live here (these tests exercise mainnet chains)
}

// merchant creates a merchant and returns it with its secret key.
func (e *env) merchant(o merchantOpts) merchants.Created {
	e.t.Helper()
	if o.name == "" {
		o.name = "Acme Coffee"
	}
	if o.mode == "" {
		o.mode = domain.ModeLive
	}
	c, err := e.app.Merchants.Create(context.Background(), merchants.CreateInput{Name: o.name, ShortName: o.name,
		DepositsEnabled: o.deposits, WithdrawalsEnabled: o.withdrawals, Mode: o.mode})
	require.NoError(e.t, err)
	return c
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), string(r.Body))
	return m
}

// errorCode returns error.code, error.type and error.param of an error body.
func (r response) errorFields(t testing.TB) (code, typ, param string) {
	t.Helper()
	m := r.JSON(t)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "not an error body: %s", r.Body)
	code, _ = e["code"].(string)
	typ, _ = e["type"].(string)
	param, _ = e["param"].(string)
	return
}

// do sends a request and validates the response against openapi.yaml when the route is in the spec.
func (e *env) do(method, path, key string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Service-Secret-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := validatingDoer{e}.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// validatingDoer is the HTTP transport of every test request, raw or through the generated
// client: each response is checked against the active shape's spec before the test sees it.
type validatingDoer struct{ e *env }

func (v validatingDoer) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	v.e.validate(req, res, raw)
	res.Body = io.NopCloser(bytes.NewReader(raw))
	return res, nil
}

// api is the Go client generated from openapi.yaml (gen/client), authenticated as key. Tests
// use it for every well-formed request; e.do remains for deliberately malformed ones (invalid
// JSON, wrong types, empty query values) that a typed client cannot express.
func (e *env) api(key string) *client.ClientWithResponses {
	e.t.Helper()
	c, err := client.NewClientWithResponses(e.srv.URL, client.WithHTTPClient(validatingDoer{e}),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			if key != "" {
				req.Header.Set("X-Service-Secret-Key", key)
			}
			return nil
		}))
	require.NoError(e.t, err)
	return c
}

// validate checks a response against the spec: every documented status, header and body.
func (e *env) validate(req *http.Request, res *http.Response, body []byte) {
	e.t.Helper()
	require.NotEmpty(e.t, res.Header.Get("X-Request-Id"), "every response carries a request id")
	if res.StatusCode >= 400 {
		require.Equal(e.t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0], "error bodies are JSON: %s", body)
		var eb struct {
			Error struct{ Type, Code, Message string } `json:"error"`
		}
		require.NoError(e.t, json.Unmarshal(body, &eb), "error body: %s", body)
		require.NotEmpty(e.t, eb.Error.Type, "error.type: %s", body)
		require.NotEmpty(e.t, eb.Error.Code, "error.code: %s", body)
		require.NotEmpty(e.t, eb.Error.Message, "error.message: %s", body)
	}
	vreq := req.Clone(context.Background())
	vreq.URL.Host, vreq.URL.Scheme = "", ""
	route, params, err := e.router.FindRoute(vreq)
	if err != nil {
		return // not a spec route (health, spec, unknown paths): checked above only
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	require.NoError(e.t, openapi3filter.ValidateResponse(context.Background(), in),
		"%s %s → %d does not match openapi.yaml: %s", req.Method, req.URL.Path, res.StatusCode, body)
}

const (
	paymentsPath    = "/v1/external/secretkey-auth/payments"
	withdrawalsPath = "/v1/external/secretkey-auth/withdrawals"
	chainsPath      = "/v1/external/chains"
)

func payment(amount int64, extra ...any) map[string]any {
	m := map[string]any{"amount": amount, "currency": "USD", "orderId": "order-1"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

// createPayment creates a payment through the generated client and returns the create
// response body as a map. It uses the client's untyped layer, which works in both shapes (the
// typed layer decodes schema-shape bodies only).
func (e *env) createPayment(key string, body map[string]any) map[string]any {
	e.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(e.t, err)
	res, err := e.api(key).ClientInterface.CreatePaymentWithBody(context.Background(), &client.CreatePaymentParams{},
		"application/json", bytes.NewReader(raw))
	require.NoError(e.t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusCreated, res.StatusCode, string(out))
	var m map[string]any
	require.NoError(e.t, json.Unmarshal(out, &m))
	return m
}
