package tests

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/internal/testlog"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/settlement"
)

// scrape reads GET /metrics and parses it as a Prometheus scraper does.
func (e *env) scrape() map[string]*dto.MetricFamily {
	e.t.Helper()
	r := e.do(http.MethodGet, "/metrics", "", nil)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	require.True(e.t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain"), r.Header.Get("Content-Type"))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	require.NoError(e.t, err, "GET /metrics is not valid exposition text")
	return families
}

// sample finds the metric of family name with exactly these labels (nil when absent).
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if match {
			return m
		}
	}
	return nil
}

func counter(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := sample(families, name, labels)
	require.NotNil(t, m, "no %s%v", name, labels)
	return m.GetCounter().GetValue()
}

func TestMetricsScrape(t *testing.T) {
	e := newEnv(t, "sqlite")
	m := e.merchant(merchantOpts{})
	const route = "/v1/external/secretkey-auth/payments"
	const byID = "/v1/external/secretkey-auth/payments/:paymentId"

	first := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "metrics-1")
	require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
	again := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000), "Idempotency-Key", "metrics-1")
	require.Equal(t, http.StatusCreated, again.Status, string(again.Body))
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	id := first.JSON(t)["paymentId"].(string)
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, paymentsPath+"/"+id, m.SecretKey, nil).Status)
	missing := uuid.Must(uuid.NewV7()).String()
	require.Equal(t, http.StatusNotFound, e.do(http.MethodGet, paymentsPath+"/"+missing, m.SecretKey, nil).Status)
	require.Equal(t, http.StatusNotFound, e.do(http.MethodGet, "/no/such/route/"+missing, "", nil).Status)
	require.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, paymentsPath, "", nil).Status)

	fam := e.scrape()

	reqs := func(method, route, status string) float64 {
		return counter(t, fam, "paymentsd_http_requests_total", map[string]string{"method": method, "route": route, "status": status})
	}
	assert.Equal(t, 2.0, reqs("POST", route, "201"), "the create and its replay")
	assert.Equal(t, 1.0, reqs("GET", byID, "200"))
	assert.Equal(t, 1.0, reqs("GET", byID, "404"), "a 404 of a matched route keeps its pattern")
	assert.Equal(t, 1.0, reqs("GET", "unmatched", "404"), "an unknown path collapses to one label")
	assert.Equal(t, 1.0, reqs("GET", route, "401"))
	// The route label is always a pattern: no URL (and so no id) ever becomes a label value.
	for _, s := range fam["paymentsd_http_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			assert.NotContains(t, l.GetValue(), id)
			assert.NotContains(t, l.GetValue(), missing)
		}
	}

	h := sample(fam, "paymentsd_http_request_duration_seconds", map[string]string{"method": "POST", "route": route, "status": "201"})
	require.NotNil(t, h, "duration histogram of the creates")
	assert.Equal(t, dto.MetricType_HISTOGRAM, fam["paymentsd_http_request_duration_seconds"].GetType())
	assert.EqualValues(t, 2, h.GetHistogram().GetSampleCount())
	assert.Positive(t, h.GetHistogram().GetSampleSum())

	assert.Equal(t, 1.0, counter(t, fam, "paymentsd_payments_created_total", map[string]string{"type": "payment"}), "the replay created nothing")
	assert.Equal(t, 0.0, counter(t, fam, "paymentsd_payments_created_total", map[string]string{"type": "deposit"}))
	assert.Equal(t, 0.0, counter(t, fam, "paymentsd_withdrawals_created_total", map[string]string{}))
	assert.Equal(t, 1.0, counter(t, fam, "paymentsd_idempotent_replays_total", map[string]string{"route": route}))

	pool := sample(fam, "go_sql_max_open_connections", map[string]string{"db_name": "paymentsd"})
	require.NotNil(t, pool, "database pool statistics")
	assert.Equal(t, 1.0, pool.GetGauge().GetValue(), "SQLite runs on one connection")
	assert.NotNil(t, sample(fam, "go_sql_in_use_connections", map[string]string{"db_name": "paymentsd"}))
	assert.Contains(t, fam, "go_goroutines", "Go runtime collector")
	assert.Contains(t, fam, "process_start_time_seconds", "process collector")
	assert.NotNil(t, sample(fam, "paymentsd_expiry_sweeps_total", map[string]string{"result": "swept"}))

	// Scrapes are counted like any request, once answered.
	assert.Equal(t, 1.0, counter(t, e.scrape(), "paymentsd_http_requests_total",
		map[string]string{"method": "GET", "route": "/metrics", "status": "200"}))
}

// /metrics is outside the contract: no secret key, no spec route, and not under the secret-key prefix.
func TestMetricsNeedsNoKeyAndIsNotInTheSpec(t *testing.T) {
	e := newEnv(t, "sqlite")
	r := e.do(http.MethodGet, "/metrics", "", nil)
	assert.Equal(t, http.StatusOK, r.Status)
	spec := e.do(http.MethodGet, "/openapi.yaml", "", nil)
	require.Equal(t, http.StatusOK, spec.Status)
	assert.NotContains(t, string(spec.Body), "/metrics")
}

// The expiry sweep reports to the metrics through the Expirer's hook, wired by app.Open.
func TestMetricsExpirySweep(t *testing.T) {
	e := newEnv(t, "sqlite")
	require.NotNil(t, e.app.Expirer.Observe)
	e.app.Expirer.Observe(lifecycle.SweepResult{PaymentsExpired: 2, QuotesExpired: 3}, nil)
	fam := e.scrape()
	assert.Equal(t, 1.0, counter(t, fam, "paymentsd_expiry_sweeps_total", map[string]string{"result": "swept"}))
	assert.Equal(t, 2.0, counter(t, fam, "paymentsd_expired_total", map[string]string{"kind": "payment"}))
	assert.Equal(t, 3.0, counter(t, fam, "paymentsd_expired_total", map[string]string{"kind": "quote"}))
}

// noETH prices everything but ETH, which is unavailable.
type noETH struct{ pricing.Source }

func (s noETH) PriceUSD(ctx context.Context, a pricing.Asset) (decimal.Decimal, error) {
	if a.Symbol == "ETH" {
		return decimal.Zero, pricing.ErrPriceUnavailable
	}
	return s.Source.PriceUSD(ctx, a)
}

// Every line logged while serving a request carries its request id, once: the access log and
// a service's warning alike.
func TestMetricsLogLinesCarryTheRequestID(t *testing.T) {
	var logs testlog.Buffer
	cfg := config.Config{DatabaseURL: testdb.URL(t, "sqlite"), PublicBaseURL: "https://pay.example.test",
		Networks: chains.All, XPub: testXPub, QuoteTTL: 15 * time.Minute, PaymentTTL: 24 * time.Hour,
		MerchantFeeBps: 100, IdempotencyTTL: 24 * time.Hour, MaxBodyBytes: "1M",
		Pricing: config.Pricing{Source: "static"}, ResponseShape: settlement.Schema, Chains: config.Chains{ServeUnwatched: true}}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	a.Payments.Prices = noETH{a.Payments.Prices}
	h, err := a.Handler()
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	doc, err := openapi3.NewLoader().LoadFromFile(specFiles[settlement.Schema])
	require.NoError(t, err)
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)
	e := &env{t: t, app: a, srv: srv, router: router}
	m := e.merchant(merchantOpts{})

	r := e.do(http.MethodPost, paymentsPath, m.SecretKey, payment(1000))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	rid := r.Header.Get("X-Request-Id")
	require.NotEmpty(t, rid)

	var warned, accessed bool
	lines, err := logs.Lines()
	require.NoError(t, err)
	for _, l := range lines {
		switch l["msg"] {
		case "no quote for token: price unavailable":
			warned = true
			assert.Equal(t, rid, l["request_id"], "service warning: %v", l)
		case "request":
			accessed = true
			assert.Equal(t, rid, l["request_id"], "access log: %v", l)
		}
	}
	assert.True(t, warned, "the ETH quote was skipped with a warning")
	assert.True(t, accessed, "the request was logged")
	for _, line := range strings.Split(logs.String(), "\n") {
		assert.LessOrEqual(t, strings.Count(line, `"request_id"`), 1, "request_id once per line: %s", line)
	}
}
