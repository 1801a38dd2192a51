// Package metrics owns paymentsd's Prometheus metrics. One Metrics value wraps one registry
// built by the app wiring and passed down explicitly: no global registry, no init() side
// effects. Every method is safe on a nil *Metrics (a process or test wired without metrics).
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every paymentsd metric.
const Namespace = "paymentsd"

// UnmatchedRoute is the route label of a request that matched no registered route: the raw
// URL is never a label (its cardinality is the client's to choose).
const UnmatchedRoute = "unmatched"

// Sweep results, the values of paymentsd_expiry_sweeps_total's result label.
const (
	SweepDone    = "swept"
	SweepSkipped = "skipped" // another process held the lease
	SweepFailed  = "failed"
)

// Metrics holds the collectors of one process and the registry they are registered on.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	httpRequests       *prometheus.CounterVec
	httpDuration       *prometheus.HistogramVec
	paymentsCreated    *prometheus.CounterVec
	withdrawalsCreated prometheus.Counter
	replays            *prometheus.CounterVec
	sweeps             *prometheus.CounterVec
	expired            *prometheus.CounterVec
}

// New registers paymentsd's metrics and the Go runtime and process collectors on reg.
func New(reg *prometheus.Registry) (*Metrics, error) {
	m := &Metrics{reg: reg}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by method, route pattern and status."}, []string{"method", "route", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by method, route pattern and status.",
		Buckets: prometheus.DefBuckets}, []string{"method", "route", "status"})
	m.paymentsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "payments_created_total",
		Help: "Payments and deposits created (idempotent replays excluded), by type."}, []string{"type"})
	m.withdrawalsCreated = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "withdrawals_created_total",
		Help: "Withdrawals created (idempotent replays excluded)."})
	m.replays = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "idempotent_replays_total",
		Help: "Requests answered with a stored outcome (Idempotent-Replayed: true), by route pattern."}, []string{"route"})
	m.sweeps = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "expiry_sweeps_total",
		Help: "Expiry sweeps, by result: swept, skipped (another process held the lease) or failed."}, []string{"result"})
	m.expired = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "expired_total",
		Help: "Payments and quotes moved to expired by the expiry sweep, by kind."}, []string{"kind"})
	// Known label values start at zero, so a dashboard sees the series before the first event.
	for _, t := range []string{"payment", "deposit"} {
		m.paymentsCreated.WithLabelValues(t)
	}
	for _, r := range []string{SweepDone, SweepSkipped, SweepFailed} {
		m.sweeps.WithLabelValues(r)
	}
	for _, k := range []string{"payment", "quote"} {
		m.expired.WithLabelValues(k)
	}
	for _, c := range []prometheus.Collector{m.httpRequests, m.httpDuration, m.paymentsCreated, m.withdrawalsCreated,
		m.replays, m.sweeps, m.expired, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	return m, nil
}

// Registry is the registry the metrics are registered on.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus exposition format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// ObserveDB exports db's connection pool statistics (go_sql_*{db_name="paymentsd"}).
func (m *Metrics) ObserveDB(db *sql.DB) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(collectors.NewDBStatsCollector(db, Namespace))
}

// Request counts one answered HTTP request. route is the router's pattern or UnmatchedRoute.
func (m *Metrics) Request(method, route string, status int, took time.Duration) {
	if m == nil {
		return
	}
	s := strconv.Itoa(status)
	method = normalizeMethod(method)
	m.httpRequests.WithLabelValues(method, route, s).Inc()
	m.httpDuration.WithLabelValues(method, route, s).Observe(took.Seconds())
}

// normalizeMethod keeps the method label bounded: a client may send any token as a method.
func normalizeMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// PaymentCreated counts a payment or deposit that was created (not replayed).
func (m *Metrics) PaymentCreated(typ string) {
	if m == nil {
		return
	}
	m.paymentsCreated.WithLabelValues(typ).Inc()
}

// WithdrawalCreated counts a withdrawal that was created (not replayed).
func (m *Metrics) WithdrawalCreated() {
	if m == nil {
		return
	}
	m.withdrawalsCreated.Inc()
}

// IdempotentReplay counts a request answered with the stored outcome of its Idempotency-Key.
func (m *Metrics) IdempotentReplay(route string) {
	if m == nil {
		return
	}
	m.replays.WithLabelValues(route).Inc()
}

// ExpirySweep counts one expiry sweep and what it expired (a failed sweep may have expired
// some rows before it failed: each expiry commits on its own).
func (m *Metrics) ExpirySweep(payments, quotes int, skipped bool, err error) {
	if m == nil {
		return
	}
	result := SweepDone
	switch {
	case err != nil:
		result = SweepFailed
	case skipped:
		result = SweepSkipped
	}
	m.sweeps.WithLabelValues(result).Inc()
	m.expired.WithLabelValues("payment").Add(float64(payments))
	m.expired.WithLabelValues("quote").Add(float64(quotes))
}
