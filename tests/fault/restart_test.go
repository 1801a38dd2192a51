package fault

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// restartBound is how soon each kind of background work must be going again after a graceful
// restart (the requirement).
const restartBound = 3 * time.Second

// objectReceiver is a webhook endpoint that notes when each object's first event of a type
// arrived (signatures are the webhooks tests' concern).
type objectReceiver struct {
	mu    sync.Mutex
	first map[string]time.Time // type/object id → first arrival
	srv   *httptest.Server
}

func newObjectReceiver(t *testing.T) *objectReceiver {
	r := &objectReceiver{first: map[string]time.Time{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		var body struct {
			Type string `json:"type"`
			Data struct {
				Object struct {
					ID string `json:"id"`
				} `json:"object"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(b, &body)
		r.mu.Lock()
		key := body.Type + "/" + body.Data.Object.ID
		if _, ok := r.first[key]; !ok {
			r.first[key] = at
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// arrived is when the object's first event of the type arrived (zero: not yet).
func (r *objectReceiver) arrived(typ, id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first[typ+"/"+id]
}

// until polls ok every 20 ms and returns when it first held; the test fails after timeout.
func until(t *testing.T, what string, timeout time.Duration, ok func() bool) time.Time {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if ok() {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
	}
}

// devnetPay pays a payment's devnet quote from a test account and returns once it is mined
// (`devnet pay` polls the receipt every 200 ms: it was mined at most that long before).
func devnetPay(t *testing.T, bin, db, rpc, paymentID string, account int) time.Time {
	t.Helper()
	cmd := exec.Command(bin, "devnet", "pay", "--payment", paymentID, "--rpc", rpc, "--account", strconv.Itoa(account))
	cmd.Dir = rootDir
	cmd.Env = daemonEnv(db)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("devnet pay: %v\n%s", err, b)
	}
	return time.Now()
}

// A graceful restart (SIGTERM, exit, start again on the same database) picks every kind of
// background work up at once, on SQLite and on PostgreSQL: the old process gave its leases up
// on the way out, so the new one need not wait for them to expire. Measured after the restart:
// a payment paid is processing within 3 s of being mined (watching), a quote due expires within
// 3 s (expiry), a withdrawal is signed and sent within 3 s (payouts), and a new payment's
// payment.created webhook arrives within 3 s (delivery).
func TestGracefulRestartResumesBackgroundWork(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			bin := paymentsdBinary(t)
			db := filepath.Join(t.TempDir(), "paymentsd.db")
			if backend == "postgres" {
				db = testdb.URL(t, "postgres")
			}
			rpc := startDevnet(t, bin, db, "250ms")
			recv := newObjectReceiver(t)
			env := []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_WATCH_INTERVAL=100ms",
				"PAYMENTS_EXPIRY_INTERVAL=200ms", "PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true", "PAYMENTS_QUOTE_TTL=10s"}
			m := createMerchant(t, bin, db, env, "Restart", "--withdrawals")
			runCLIEnv(t, bin, db, env, "webhooks", "create", "--merchant", m.MerchantID, "--url", recv.srv.URL, "--events", "payment.created")
			s := newServer(t, bin, db)
			s.env = env
			s.start()
			create := func(order string) map[string]any {
				return apiJSON(t, s.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
					`{"amount": 5000, "currency": "USD", "orderId": "`+order+`"}`)["payment"].(map[string]any)
			}
			get := func(path string) map[string]any {
				return apiJSON(t, s.base, m.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/"+path, "")
			}

			// Before the restart: money to withdraw later, and a payment whose quotes fall due after it.
			funding := create("funding")["id"].(string)
			devnetPay(t, bin, db, rpc, funding, 0)
			until(t, "the funding payment completed", 60*time.Second, func() bool { return get("payments/" + funding)["status"] == "completed" })
			due := create("quotes-due")
			var quotesDue time.Time
			for _, q := range due["quotes"].([]any) {
				at, err := time.Parse(time.RFC3339Nano, q.(map[string]any)["expiresAt"].(string))
				if err != nil {
					t.Fatal(err)
				}
				if at.After(quotesDue) {
					quotesDue = at
				}
			}

			signalled := time.Now()
			s.stop()
			t.Logf("stopped %v after SIGTERM (exit: %v)", time.Since(signalled).Round(time.Millisecond), s.waitErr)
			if log := logTail(s.logPath); !strings.Contains(log, "leases released") {
				t.Fatalf("the process did not say its background work stopped and its leases were released:\n%s", log)
			}
			readyAt := s.start()
			if !readyAt.Before(quotesDue) {
				t.Fatalf("the restart took too long for this test: quotes were due at %s, ready at %s", quotesDue, readyAt)
			}

			// Watching and delivery: a payment created and paid now.
			p := create("after-restart")
			id, createdAt := p["id"].(string), time.Now()
			mined := devnetPay(t, bin, db, rpc, id, 1)
			seen := until(t, "the payment paid after the restart seen", 30*time.Second, func() bool {
				st := get("payments/" + id)["status"]
				return st == "processing" || st == "completed"
			})
			until(t, "payment.created delivered", 30*time.Second, func() bool { return !recv.arrived("payment.created", id).IsZero() })
			delivered := recv.arrived("payment.created", id)

			// Payouts: a withdrawal made now is signed and sent.
			w := apiJSON(t, s.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
				`{"amountInCents": 1000, "chainId": "eip155:1337", "recipientAddress": "0x9858effd232b4033e47d90003d41ec34ecaeda94"}`)
			wid, withdrawnAt := w["id"].(string), time.Now()
			sent := until(t, "the withdrawal sent", 30*time.Second, func() bool {
				st := get("withdrawals/" + wid)["status"]
				return st == "processing" || st == "completed"
			})

			// Expiry: the quotes due after the restart expire.
			expired := until(t, "the quotes due expired", 30*time.Second, func() bool {
				for _, q := range get("payments/" + due["id"].(string))["quotes"].([]any) {
					if q.(map[string]any)["status"] != "expired" {
						return false
					}
				}
				return true
			})

			took := map[string]time.Duration{
				"watching (mined → processing)":       seen.Sub(mined),
				"webhooks (created → delivered)":      delivered.Sub(createdAt),
				"payouts (created → signed and sent)": sent.Sub(withdrawnAt),
				"expiry (due → expired)":              expired.Sub(quotesDue), // ready before they were due (checked above)
			}
			for what, d := range took {
				t.Logf("after the restart, %s: %v", what, d.Round(time.Millisecond))
				if d > restartBound {
					t.Errorf("%s took %v after a graceful restart; want at most %v", what, d.Round(time.Millisecond), restartBound)
				}
			}
		})
	}
}
