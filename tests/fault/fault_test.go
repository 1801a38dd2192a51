// Package fault crashes paymentsd under load and checks that nothing is lost or done twice.
//
// It builds bin/paymentsd, runs it on SQLite and on a private PostgreSQL cluster, drives
// concurrent creates (payments and withdrawals, each with its own Idempotency-Key and orderId),
// and then either kill -9s the server mid-load or takes the database away for a few seconds.
// Every request whose answer was lost is retried with the same key and body; each must get a
// definite answer (201: a replay or a first creation) within 5 s of the server being ready
// again (kill -9) or of the database being back (outage). Then the database is checked
// directly: no payment or withdrawal exists twice, every acknowledged one exists, and the
// ledger equals the withdrawals.
package fault

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	paymentsPath    = "/v1/external/secretkey-auth/payments"
	withdrawalsPath = "/v1/external/secretkey-auth/withdrawals"
	recipient       = "0x9858effd232b4033e47d90003d41ec34ecaeda94"

	workers        = 8
	perWorkerMax   = 400                    // hard bound on the load, whatever the timing
	killLoad       = 2 * time.Second        // kill -9: the load's length
	minBeforeFault = 700 * time.Millisecond // the fault comes once the load has run this long…
	minAckedBefore = 10                     // …and at least this many creates were acknowledged
	outageFor      = 3 * time.Second        // how long the database is gone
	// SQLite's outage outlasts the client's 5 s timeout (but not its own 10 s busy timeout), so
	// requests are lost there too and the retry path runs on both databases.
	sqliteOutageFor = 7 * time.Second
	answerWithin    = 5 * time.Second        // the bound on a definite answer after recovery
	lostPause       = 100 * time.Millisecond // a client pauses after a failed request
	retryPause      = 75 * time.Millisecond
	requestTimeout  = 5 * time.Second
	retryConcurrent = 8
)

func TestFault(t *testing.T) {
	bin := paymentsdBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		for _, fault := range []string{"kill9", "outage"} {
			t.Run(fault, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "paymentsd.db")
				runScenario(t, scenario{bin: bin, backend: "sqlite", dbURL: path, fault: fault,
					outage: func(t *testing.T) (time.Time, time.Time) { return sqliteOutage(t, path, sqliteOutageFor) }})
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		cluster := newPGCluster(t)
		for _, fault := range []string{"kill9", "outage"} {
			t.Run(fault, func(t *testing.T) {
				url := cluster.createDB("fault_" + fault)
				runScenario(t, scenario{bin: bin, backend: "postgres", dbURL: url, fault: fault,
					outage: func(t *testing.T) (time.Time, time.Time) { return cluster.outage(t, outageFor) }})
			})
		}
	})
}

type scenario struct {
	bin, backend, dbURL string
	fault               string                                    // kill9 | outage
	outage              func(t *testing.T) (down, back time.Time) // takes the database away, then back
}

// call is one create request: its load-time outcome and, if its answer was lost, the retry's.
// Each call is written by one goroutine at a time and read after that goroutine is waited for.
type call struct {
	n        int
	kind     string // payment | withdrawal
	orderID  string
	key      string
	amount   int64
	body     []byte
	sentAt   time.Time
	answerAt time.Time

	acked      bool   // 201 during the load
	id         string // created id from the 201 (load or retry)
	lost       string // why the answer was lost (transport error or 5xx), empty if not lost
	unexpected string // any other answer during the load

	retryOK       bool
	replayed      bool
	retryAfter    time.Duration // from recovery to the definite answer
	retryAttempts int
	retryLast     string // the last non-definite retry answer
	retryFatal    bool   // a retry got a definite wrong answer (409 reused, 4xx)
}

func (c *call) answered() bool { return c.acked || c.retryOK }

func (c *call) path() string {
	if c.kind == "withdrawal" {
		return withdrawalsPath
	}
	return paymentsPath
}

// api sends authenticated requests to the current server process.
type api struct {
	mu     sync.Mutex
	base   string
	key    string
	client *http.Client
}

func newAPI(key string) *api {
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConns: 64, MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	return &api{key: key, client: &http.Client{Timeout: requestTimeout, Transport: tr}}
}

func (a *api) setBase(base string) {
	a.mu.Lock()
	a.base = base
	a.mu.Unlock()
	a.client.Transport.(*http.Transport).CloseIdleConnections()
}

func (a *api) url(path string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.base + path
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a *api) do(ctx context.Context, method, path, idemKey string, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url(path), rd)
	if err != nil {
		return answer{}, err
	}
	// No transparent resend by net/http (it replays requests carrying an Idempotency-Key when a
	// reused connection breaks): every retry in this test is an explicit, counted request.
	req.GetBody = nil
	req.Header.Set("X-Service-Secret-Key", a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	res, err := a.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, fmt.Errorf("reading the %d response: %w", res.StatusCode, err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: raw}, nil
}

// createdID returns the id of a 201 body: paymentId for payments, id for withdrawals.
func createdID(kind string, body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	field := "paymentId"
	if kind == "withdrawal" {
		field = "id"
	}
	id, _ := m[field].(string)
	return id
}

func errorCode(body []byte) string {
	var m struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Error.Code
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func runScenario(t *testing.T, sc scenario) {
	name := sc.backend + "/" + sc.fault

	// Setup, as an operator would: a merchant from the CLI, the server, a funded balance.
	created := createMerchant(t, sc.bin, sc.dbURL, nil, "Fault "+sc.fault, "--deposits", "--withdrawals", "--mode", "live")
	srv := newServer(t, sc.bin, sc.dbURL)
	srv.start()
	a := newAPI(created.SecretKey)
	a.setBase(srv.base)
	fund, err := a.do(context.Background(), http.MethodPost, paymentsPath, "fund-"+randHex(8),
		[]byte(`{"amount":100000000,"currency":"USD","orderId":"fund"}`))
	if err != nil || fund.status != http.StatusCreated {
		t.Fatalf("funding payment: %v %d %s", err, fund.status, snippet(fund.body))
	}
	fundID := createdID("payment", fund.body)
	if fundID == "" {
		t.Fatalf("funding payment: no paymentId in %s", snippet(fund.body))
	}
	runCLI(t, sc.bin, sc.dbURL, "payments", "settle", "--payment", fundID, "--tx-hash", "0x"+randHex(32), "--json")

	// The load, with the fault in its middle.
	ld := &load{t: t, api: a, tag: sc.backend + "-" + sc.fault + "-" + randHex(4), stop: make(chan struct{})}
	ld.start()
	defer ld.halt() // no client may outlive the test, whichever way it ends
	if !ld.waitUnderWay(minBeforeFault, minAckedBefore, 30*time.Second) {
		ld.halt()
		t.Fatalf("the load never got under way: %d creates acknowledged in 30s", ld.ackedCount.Load())
	}
	var faultAt, recoveredAt time.Time
	var recoveredWhat string
	switch sc.fault {
	case "kill9":
		faultAt = time.Now()
		srv.kill9()
		// The clients keep going against the dead server until the load's time is up.
		ld.haltAt(maxTime(ld.began.Add(killLoad), faultAt.Add(500*time.Millisecond)))
		recoveredAt, recoveredWhat = srv.start(), "the restarted server was ready"
		a.setBase(srv.base)
	case "outage":
		var back time.Time
		faultAt, back = sc.outage(t)
		// The load ends when the database is back; requests in flight then are still recorded.
		ld.halt()
		if !srv.running() {
			t.Fatalf("paymentsd exited during the database outage: %v", srv.waitErr)
		}
		recoveredAt, recoveredWhat = back, "the database was back"
	default:
		t.Fatalf("unknown fault %q", sc.fault)
	}
	calls := ld.calls

	var lost []*call
	acked, stalled := 0, 0
	for _, c := range calls {
		if c.acked {
			acked++
		}
		if c.lost != "" {
			lost = append(lost, c)
		}
		// Hit by the fault: in flight while the database was away (outage), or in flight when
		// the process died or sent while it was dead (kill -9).
		if c.sentAt.Before(recoveredAt) && c.answerAt.After(faultAt) {
			stalled++
		}
	}
	if acked == 0 {
		t.Errorf("no create was acknowledged during the load")
	}
	// The fault must have hit the load, or the scenario tested nothing.
	if sc.fault == "kill9" && len(lost) == 0 {
		t.Errorf("kill -9 mid-load lost no answer: the kill did not hit the load")
	}
	if sc.fault == "outage" && stalled == 0 {
		t.Errorf("no request was in flight during the database outage: the outage did not hit the load")
	}

	// Retry every lost request with the same key and body until it gets a definite answer.
	retryLost(a, lost, recoveredAt)
	replayed, createdOnRetry, unanswered := 0, 0, 0
	var maxAfter time.Duration
	var failures []string
	for _, c := range lost {
		switch {
		case c.retryOK && c.replayed:
			replayed++
		case c.retryOK:
			createdOnRetry++
		default:
			unanswered++
			why := "no definite answer within " + answerWithin.String() + " of recovery"
			if c.retryFatal {
				why = "definite wrong answer"
			}
			failures = append(failures, fmt.Sprintf("%s %s (key %s, lost during load: %s): %s after %d attempts; last answer: %s",
				c.kind, c.orderID, c.key, c.lost, why, c.retryAttempts, c.retryLast))
		}
		if c.retryOK && c.retryAfter > maxAfter {
			maxAfter = c.retryAfter
		}
	}
	t.Logf("%s: sent %d creates (%d payments, %d withdrawals) with %d clients; acknowledged during load %d, lost %d, "+
		"hit by the fault %d; on retry: replayed %d, created %d, no definite answer %d; "+
		"max %.2fs from recovery (%s) to a definite answer",
		name, len(calls), countKind(calls, "payment"), countKind(calls, "withdrawal"), workers, acked, len(lost), stalled,
		replayed, createdOnRetry, unanswered, maxAfter.Seconds(), recoveredWhat)
	if len(failures) > 0 {
		sort.Strings(failures)
		shown := failures
		if len(shown) > 10 {
			shown = shown[:10]
		}
		t.Errorf("%d of %d lost requests got no definite answer (201, replayed or created) within %s after %s when retried with the same Idempotency-Key; first %d:\n  %s",
			len(failures), len(lost), answerWithin, recoveredWhat, len(shown), strings.Join(shown, "\n  "))
	}
	if maxAfter > answerWithin {
		t.Errorf("slowest definite answer came %.2fs after recovery; the bound is %s", maxAfter.Seconds(), answerWithin)
	}

	verify(t, sc, a, calls, fundID)
}

func countKind(calls []*call, kind string) int {
	n := 0
	for _, c := range calls {
		if c.kind == kind {
			n++
		}
	}
	return n
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// load runs the concurrent clients. Each request gets a unique Idempotency-Key and orderId.
type load struct {
	t    *testing.T
	api  *api
	tag  string
	stop chan struct{}

	began      time.Time
	next       atomic.Int64
	ackedCount atomic.Int64
	stopOnce   sync.Once
	wg         sync.WaitGroup
	mu         sync.Mutex
	calls      []*call // complete only after halt
}

func (l *load) start() {
	l.began = time.Now()
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go l.worker()
	}
}

// waitUnderWay waits until the load has run minRun and minAcked creates were acknowledged.
func (l *load) waitUnderWay(minRun time.Duration, minAcked int64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if time.Since(l.began) >= minRun && l.ackedCount.Load() >= minAcked {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// halt stops the clients after their current request and waits for them.
func (l *load) halt() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// haltAt lets the clients run until at, then halts them.
func (l *load) haltAt(at time.Time) {
	select {
	case <-time.After(time.Until(at)):
	case <-l.stop:
	}
	l.halt()
}

func (l *load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *load) newCall() *call {
	n := int(l.next.Add(1))
	c := &call{n: n, orderID: fmt.Sprintf("fault-%d", n), key: fmt.Sprintf("fault-%s-%d", l.tag, n)}
	if n%2 == 0 {
		c.kind, c.amount = "withdrawal", 100+mrand.Int64N(901)
		c.body, _ = json.Marshal(map[string]any{"amountInCents": c.amount, "chainId": "eip155:8453",
			"recipientAddress": recipient, "orderId": c.orderID})
	} else {
		c.kind, c.amount = "payment", 400+mrand.Int64N(4601)
		c.body, _ = json.Marshal(map[string]any{"amount": c.amount, "currency": "USD", "orderId": c.orderID})
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	return c
}

func (l *load) worker() {
	defer l.wg.Done()
	for i := 0; i < perWorkerMax && !l.stopped(); i++ {
		c := l.newCall()
		c.sentAt = time.Now()
		ans, err := l.api.do(context.Background(), http.MethodPost, c.path(), c.key, c.body)
		c.answerAt = time.Now()
		switch {
		case err != nil:
			c.lost = "transport error: " + err.Error()
		case ans.status >= 500:
			c.lost = fmt.Sprintf("%d %s", ans.status, snippet(ans.body))
		case ans.status == http.StatusCreated:
			c.id = createdID(c.kind, ans.body)
			if c.id == "" {
				c.unexpected = "201 without an id"
				l.t.Errorf("load: %s %s: 201 without an id: %s", c.kind, c.orderID, snippet(ans.body))
			} else if ans.header.Get("Idempotent-Replayed") == "true" {
				c.unexpected = "replayed"
				l.t.Errorf("load: %s %s: 201 marked Idempotent-Replayed although key %s was sent once", c.kind, c.orderID, c.key)
			} else {
				c.acked = true
				l.ackedCount.Add(1)
			}
		default:
			c.unexpected = fmt.Sprintf("%d %s", ans.status, snippet(ans.body))
			l.t.Errorf("load: %s %s (key %s): unexpected %d: %s", c.kind, c.orderID, c.key, ans.status, snippet(ans.body))
		}
		if c.lost != "" {
			select { // a client backs off after a failure
			case <-time.After(lostPause):
			case <-l.stop:
			}
		}
	}
}

// retryLost retries each lost request with its own key and body until it gets a definite
// answer or the window after recovery closes. A 201 is definite (replay or first creation);
// transport errors, 5xx and 409 idempotency_key_in_use are not (the pool may be reconnecting,
// or the original may legitimately still be running), so they are retried within the window;
// any other answer (409 idempotency_key_reused, another 4xx) is a definite wrong answer.
func retryLost(a *api, lost []*call, recoveredAt time.Time) {
	deadline := recoveredAt.Add(answerWithin)
	sem := make(chan struct{}, retryConcurrent)
	var wg sync.WaitGroup
	for _, c := range lost {
		wg.Add(1)
		go func(c *call) {
			defer wg.Done()
			for {
				if !time.Now().Before(deadline) {
					if c.retryLast == "" {
						c.retryLast = "(never sent: the window had closed)"
					}
					return
				}
				sem <- struct{}{}
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				c.retryAttempts++
				ans, err := a.do(ctx, http.MethodPost, c.path(), c.key, c.body)
				at := time.Now()
				cancel()
				<-sem
				switch {
				case err != nil:
					c.retryLast = "transport error: " + err.Error()
				case ans.status == http.StatusCreated:
					c.id = createdID(c.kind, ans.body)
					if c.id == "" {
						c.retryLast, c.retryFatal = "201 without an id: "+snippet(ans.body), true
						return
					}
					c.retryOK, c.replayed, c.retryAfter = true, ans.header.Get("Idempotent-Replayed") == "true", at.Sub(recoveredAt)
					return
				case ans.status >= 500:
					c.retryLast = fmt.Sprintf("%d %s", ans.status, snippet(ans.body))
				case ans.status == http.StatusConflict && errorCode(ans.body) == "idempotency_key_in_use":
					c.retryLast = fmt.Sprintf("%d %s", ans.status, snippet(ans.body))
				default:
					c.retryLast, c.retryFatal = fmt.Sprintf("%d %s", ans.status, snippet(ans.body)), true
					return
				}
				select {
				case <-time.After(retryPause):
				case <-time.After(time.Until(deadline)):
				}
			}
		}(c)
	}
	wg.Wait()
}

type row struct {
	id      string
	orderID string
	amount  int64
}

// verify checks the database directly and the withdrawals list through the API.
func verify(t *testing.T, sc scenario, a *api, calls []*call, fundID string) {
	t.Helper()
	driver := "sqlite"
	dsn := sc.dbURL + "?_pragma=busy_timeout(10000)"
	if sc.backend == "postgres" {
		driver, dsn = "pgx", sc.dbURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open the database for the checks: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	query := func(q string) *sql.Rows {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rows
	}
	scanRows := func(table string) map[string][]row {
		t.Helper()
		rows := query("SELECT CAST(id AS TEXT), order_id, amount_in_cents FROM " + table + " WHERE order_id LIKE 'fault-%'")
		defer rows.Close()
		out := map[string][]row{}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.orderID, &r.amount); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			out[r.orderID] = append(out[r.orderID], r)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		return out
	}

	// No payment or withdrawal exists twice.
	for _, table := range []string{"payments", "withdrawals"} {
		rows := query("SELECT order_id, COUNT(*) FROM " + table + " WHERE order_id LIKE 'fault-%' GROUP BY order_id HAVING COUNT(*) > 1")
		for rows.Next() {
			var order string
			var n int
			if err := rows.Scan(&order, &n); err != nil {
				t.Fatal(err)
			}
			t.Errorf("%s: orderId %s exists %d times (created more than once)", table, order, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}

	byTable := map[string]map[string][]row{"payment": scanRows("payments"), "withdrawal": scanRows("withdrawals")}
	sent := map[string]*call{}
	answered, missing, mismatched := 0, 0, 0
	for _, c := range calls {
		sent[c.orderID] = c
		if other := map[string]string{"payment": "withdrawal", "withdrawal": "payment"}[c.kind]; len(byTable[other][c.orderID]) > 0 {
			t.Errorf("%s %s was sent as a %s but exists as a %s", c.kind, c.orderID, c.kind, other)
		}
		if !c.answered() {
			continue
		}
		answered++
		rs := byTable[c.kind][c.orderID]
		switch {
		case len(rs) == 0:
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged %s %s (id %s, acknowledged during load: %v) does not exist in the database", c.kind, c.orderID, c.id, c.acked)
			}
		case len(rs) == 1 && (rs[0].id != c.id || rs[0].amount != c.amount):
			mismatched++
			if mismatched <= 10 {
				t.Errorf("%s %s: answered with id %s amount %d, but the database holds id %s amount %d", c.kind, c.orderID, c.id, c.amount, rs[0].id, rs[0].amount)
			}
		}
	}
	if missing > 10 || mismatched > 10 {
		t.Errorf("in all: %d acknowledged creates missing, %d with another id or amount in the database", missing, mismatched)
	}
	stored := 0
	for kind, m := range byTable {
		for order, rs := range m {
			stored += len(rs)
			if c, ok := sent[order]; !ok || c.kind != kind {
				t.Errorf("%s %s exists in the database but was never sent as a %s", kind, order, kind)
			}
		}
	}
	// Every request that got a 201 exists, once; when every request got one, that is all there is.
	if answered == len(calls) && stored != answered {
		t.Errorf("%d fault-* payments and withdrawals exist, but %d distinct requests were answered 201", stored, answered)
	}
	if answered < len(calls) {
		t.Logf("%d of %d requests never got a 201, so the database may legitimately hold between %d and %d fault-* rows; it holds %d",
			len(calls)-answered, len(calls), answered, len(calls), stored)
	}

	// The ledger equals the withdrawals: one debit per withdrawal, summing to minus their
	// amounts; the only credit is the funding payment; nothing else moved the balance.
	scalar := func(q string) (int64, int64) {
		t.Helper()
		var x, y int64
		if err := db.QueryRowContext(ctx, q).Scan(&x, &y); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return x, y
	}
	wSum, wCount := scalar("SELECT COALESCE(CAST(SUM(amount_in_cents) AS BIGINT), 0), COUNT(*) FROM withdrawals")
	dSum, dCount := scalar("SELECT COALESCE(CAST(SUM(amount_cents) AS BIGINT), 0), COUNT(*) FROM ledger_entries WHERE kind = 'withdrawal_debit'")
	rSum, rCount := scalar("SELECT COALESCE(CAST(SUM(amount_cents) AS BIGINT), 0), COUNT(*) FROM ledger_entries WHERE kind = 'withdrawal_reversal'")
	cSum, cCount := scalar("SELECT COALESCE(CAST(SUM(amount_cents) AS BIGINT), 0), COUNT(*) FROM ledger_entries WHERE kind = 'payment_credit'")
	allSum, _ := scalar("SELECT COALESCE(CAST(SUM(amount_cents) AS BIGINT), 0), COUNT(*) FROM ledger_entries")
	if dSum != -wSum || dCount != wCount {
		t.Errorf("ledger: %d withdrawal debits summing to %d cents, but %d withdrawals of %d cents in all", dCount, dSum, wCount, wSum)
	}
	bad, _ := scalar("SELECT COUNT(*), 0 FROM withdrawals w WHERE (SELECT COUNT(*) FROM ledger_entries l " +
		"WHERE l.kind = 'withdrawal_debit' AND l.withdrawal_id = w.id) <> 1")
	if bad != 0 {
		t.Errorf("ledger: %d withdrawals do not have exactly one debit", bad)
	}
	if rCount != 0 {
		t.Errorf("ledger: %d withdrawal reversals (%d cents) although no withdrawal was failed or cancelled", rCount, rSum)
	}
	if cCount != 1 {
		t.Errorf("ledger: %d payment credits (%d cents); only the funding payment %s was settled", cCount, cSum, fundID)
	}
	if allSum != cSum-wSum {
		t.Errorf("ledger: balance %d cents, want the funding credit %d minus the withdrawals %d = %d", allSum, cSum, wSum, cSum-wSum)
	}

	// The API agrees: GET /withdrawals lists exactly the withdrawals in the database.
	dbIDs := map[string]bool{}
	for _, rs := range byTable["withdrawal"] {
		for _, r := range rs {
			dbIDs[r.id] = true
		}
	}
	apiIDs := map[string]bool{}
	listed, total := 0, -1
	for offset := 0; ; offset += 1000 {
		ans, err := a.do(ctx, http.MethodGet, fmt.Sprintf("%s?limit=1000&offset=%d", withdrawalsPath, offset), "", nil)
		if err != nil || ans.status != http.StatusOK {
			t.Fatalf("GET withdrawals offset %d: %v %d %s", offset, err, ans.status, snippet(ans.body))
		}
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			Pagination struct {
				Total   int  `json:"total"`
				HasMore bool `json:"hasMore"`
			} `json:"pagination"`
		}
		if err := json.Unmarshal(ans.body, &page); err != nil {
			t.Fatalf("GET withdrawals: %v: %s", err, snippet(ans.body))
		}
		total = page.Pagination.Total
		for _, w := range page.Data {
			listed++
			apiIDs[w.ID] = true
		}
		if !page.Pagination.HasMore || len(page.Data) == 0 {
			break
		}
	}
	if total != int(wCount) || listed != int(wCount) || len(apiIDs) != int(wCount) {
		t.Errorf("GET withdrawals: total %d, %d listed (%d distinct), but the database holds %d withdrawals", total, listed, len(apiIDs), wCount)
	}
	for id := range dbIDs {
		if !apiIDs[id] {
			t.Errorf("GET withdrawals does not list withdrawal %s", id)
			break
		}
	}
}
