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
	watchRounds        *prometheus.CounterVec
	watchBlocks        *prometheus.CounterVec
	watchTransfers     *prometheus.CounterVec
	watchReorgs        *prometheus.CounterVec
	watchSettled       *prometheus.CounterVec
	watchHead          *prometheus.GaugeVec
	watchCursor        *prometheus.GaugeVec
	payoutWallet       *prometheus.GaugeVec
	payoutWaiting      *prometheus.GaugeVec
	payouts            *prometheus.CounterVec
	webhookAttempts    *prometheus.CounterVec
	workerRounds       *prometheus.CounterVec
	workerSuccess      *prometheus.GaugeVec
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
	m.watchRounds = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "watcher_rounds_total",
		Help: "Chain watcher rounds, by chain and result: scanned, skipped (another process held the chain's lease) or failed."},
		[]string{"chain", "result"})
	m.watchBlocks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "watcher_blocks_scanned_total",
		Help: "Blocks scanned by the chain watcher, by chain."}, []string{"chain"})
	m.watchTransfers = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "watcher_transfers_total",
		Help: "Transfers to deposit addresses recorded (new or revived after a reorg), by chain."}, []string{"chain"})
	m.watchReorgs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "watcher_reorged_blocks_total",
		Help: "Blocks the chain watcher walked back over on reorgs, by chain."}, []string{"chain"})
	m.watchSettled = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "watcher_payment_changes_total",
		Help: "Payments moved by on-chain settlement, and transfers credited on their own (late), by chain and kind."},
		[]string{"chain", "kind"})
	m.watchHead = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "watcher_head_block",
		Help: "The chain's head block as last read by the watcher."}, []string{"chain"})
	m.watchCursor = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "watcher_cursor_block",
		Help: "The last block the watcher processed (head minus this is how far behind it is)."}, []string{"chain"})
	m.payoutWallet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "payout_hot_wallet_configured",
		Help: "1 when this process has a hot wallet key to sign the chain's payouts, 0 when withdrawals there wait for one."}, []string{"chain"})
	m.payoutWaiting = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "payout_withdrawals_waiting",
		Help: "Pending withdrawals left waiting by the last payout round (no key, or the hot wallet short of funds)."}, []string{"chain"})
	m.payouts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "payouts_total",
		Help: "Transactions of the payout manager, by chain and what happened: withdrawals signed, completed, failed; deposit-address sweeps (or their gas top-ups) signed, sweeps confirmed."}, []string{"chain", "event"})
	m.webhookAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "webhook_attempts_total",
		Help: "Webhook delivery attempts by outcome: delivered (2xx), retry (another attempt scheduled), failed (the schedule ran out), disabled (410 Gone)."},
		[]string{"outcome"})
	m.workerRounds = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "worker_rounds_total",
		Help: "Rounds of the background loops (internal/worker), by worker and outcome: ok, error, panic (recovered), skipped (another process held the loop's lease)."},
		[]string{"worker", "outcome"})
	m.workerSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "worker_last_success_timestamp_seconds",
		Help: "Unix time of the background loop's last round that ended ok (0: none yet in this process)."}, []string{"worker"})
	for _, o := range []string{"delivered", "retry", "failed", "disabled"} {
		m.webhookAttempts.WithLabelValues(o)
	}
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
		m.replays, m.sweeps, m.expired, m.watchRounds, m.watchBlocks, m.watchTransfers, m.watchReorgs, m.watchSettled,
		m.watchHead, m.watchCursor, m.payoutWallet, m.payoutWaiting, m.payouts, m.webhookAttempts, m.workerRounds, m.workerSuccess, collectors.NewGoCollector(),
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

// WatchRound records one chain watcher round: result scanned, skipped or failed; the blocks it
// scanned (from..to), the transfers it recorded, the blocks walked back, the payments moved
// and the late credits; the head read and the cursor reached (-1: not known).
func (m *Metrics) WatchRound(chain, result string, blocks, transfers, reorged, settled, credited int, head, cursor int64) {
	if m == nil {
		return
	}
	m.watchRounds.WithLabelValues(chain, result).Inc()
	m.watchBlocks.WithLabelValues(chain).Add(float64(blocks))
	m.watchTransfers.WithLabelValues(chain).Add(float64(transfers))
	m.watchReorgs.WithLabelValues(chain).Add(float64(reorged))
	m.watchSettled.WithLabelValues(chain, "payment").Add(float64(settled))
	m.watchSettled.WithLabelValues(chain, "late_credit").Add(float64(credited))
	if head >= 0 {
		m.watchHead.WithLabelValues(chain).Set(float64(head))
	}
	if cursor >= 0 {
		m.watchCursor.WithLabelValues(chain).Set(float64(cursor))
	}
}

// PayoutRound records one payout round of a chain.
func (m *Metrics) PayoutRound(chain string, wallet, skipped, failed bool, signed, completed, failedOnChain, waiting, sweepsSigned, sweepsConfirmed int) {
	if m == nil {
		return
	}
	w := 0.0
	if wallet {
		w = 1
	}
	m.payoutWallet.WithLabelValues(chain).Set(w)
	if skipped {
		return
	}
	m.payoutWaiting.WithLabelValues(chain).Set(float64(waiting))
	m.payouts.WithLabelValues(chain, "signed").Add(float64(signed))
	m.payouts.WithLabelValues(chain, "completed").Add(float64(completed))
	m.payouts.WithLabelValues(chain, "failed").Add(float64(failedOnChain))
	m.payouts.WithLabelValues(chain, "sweep_signed").Add(float64(sweepsSigned))
	m.payouts.WithLabelValues(chain, "sweep_confirmed").Add(float64(sweepsConfirmed))
}

// WebhookAttempt counts one webhook attempt by outcome.
func (m *Metrics) WebhookAttempt(outcome string) {
	if m == nil {
		return
	}
	m.webhookAttempts.WithLabelValues(outcome).Inc()
}

// Worker outcomes started at zero by WorkerKnown (internal/worker's outcome constants).
var workerOutcomes = []string{"ok", "error", "panic", "skipped"}

// WorkerKnown starts a background loop's series at zero, so a dashboard sees it before its first
// round (and an alert on a stale last success fires for a loop that never succeeded).
func (m *Metrics) WorkerKnown(worker string) {
	if m == nil {
		return
	}
	for _, o := range workerOutcomes {
		m.workerRounds.WithLabelValues(worker, o)
	}
	m.workerSuccess.WithLabelValues(worker)
}

// WorkerProgress stamps a worker's last success for a round that did its work though some of
// its items failed (counted as an error).
func (m *Metrics) WorkerProgress(worker string, now time.Time) {
	if m == nil {
		return
	}
	m.workerSuccess.WithLabelValues(worker).Set(float64(now.UnixNano()) / 1e9)
}

// WorkerRound counts one round of a background loop; an ok round is its last success at now.
func (m *Metrics) WorkerRound(worker, outcome string, now time.Time) {
	if m == nil {
		return
	}
	m.workerRounds.WithLabelValues(worker, outcome).Inc()
	if outcome == "ok" {
		m.workerSuccess.WithLabelValues(worker).Set(float64(now.UnixNano()) / 1e9)
	}
}
