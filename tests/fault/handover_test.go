package fault

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// SIGTERM of the process holding the background leases hands every one of them — the chain's
// watch, its payouts and sweeps (one lease: one hot wallet's nonces), expiry, the Idempotency-Key
// purge — to the other serve process on the same PostgreSQL at once, not after the lease expires
// (15 s to 3 h): its loops finish their rounds and give their leases up before its database
// closes. Webhook delivery holds no lease (every process delivers, each attempt claimed on its
// row): the other process delivers a webhook within the same 3 s.
func TestGracefulStopHandsLeasesOver(t *testing.T) {
	bin := paymentsdBinary(t)
	db := testdb.URL(t, "postgres")
	rpc := startDevnet(t, bin, db, "250ms")
	created := createMerchant(t, bin, db, nil, "Hand-over")
	recv := newObjectReceiver(t)
	runCLIEnv(t, bin, db, []string{"PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true"}, "webhooks", "create", "--merchant", created.MerchantID,
		"--url", recv.srv.URL, "--events", "payment.created")
	var servers []*server
	for range 2 {
		s := newServer(t, bin, db)
		s.env = []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_WATCH_INTERVAL=100ms",
			"PAYMENTS_EXPIRY_INTERVAL=200ms", "PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true"}
		servers = append(servers, s)
	}
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	leases := []string{"watch:eip155:1337", "payout:eip155:1337", "expiry-sweep", "idempotency-keys"}
	// holders reads which server (0 or 1; -1 none) holds each lease.
	holders := func() map[string]int {
		out := map[string]int{}
		for _, name := range leases {
			out[name] = -1
			var holder string
			if err := conn.QueryRow(`SELECT holder FROM leases WHERE name = $1 AND expires_at > now()`, name).Scan(&holder); err != nil {
				continue
			}
			for i, s := range servers {
				if s.running() && strings.Contains(holder, fmt.Sprintf("/%d/", s.cmd.Process.Pid)) {
					out[name] = i
				}
			}
		}
		return out
	}
	// The leader starts first and takes every lease; the other then runs beside it, holding none.
	const leader, other = 0, 1
	servers[leader].start()
	var held map[string]int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		held = holders()
		all := true
		for _, name := range leases {
			all = all && held[name] == leader
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leases were never all taken by the first process: %v", held)
		}
	}
	servers[other].start()
	time.Sleep(time.Second) // the other process's loops try the leases (every ~100 ms to 1 s) and skip
	if now := holders(); fmt.Sprint(now) != fmt.Sprint(held) {
		t.Fatalf("the leases moved while the leader ran: before %v, now %v", held, now)
	}
	t.Logf("before: %v; stopping server %d (SIGTERM)", held, leader)
	signalled := time.Now()
	servers[leader].stop()
	stopped := time.Since(signalled)
	p := apiJSON(t, servers[other].base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 1000, "currency": "USD", "orderId": "after-hand-over"}`)["payment"].(map[string]any)
	pending := map[string]bool{}
	for _, name := range leases {
		pending[name] = true
	}
	for deadline := signalled.Add(3 * time.Second); len(pending) > 0; time.Sleep(50 * time.Millisecond) {
		now := holders()
		for name := range pending {
			if now[name] == other {
				t.Logf("%s taken over %v after the signal", name, time.Since(signalled).Round(time.Millisecond))
				delete(pending, name)
			}
		}
		if len(pending) > 0 && time.Now().After(deadline) {
			t.Fatalf("not taken over by the other process within 3 s of SIGTERM (the process took %v to stop): %v; holders now %v",
				stopped.Round(time.Millisecond), pending, now)
		}
	}
	until(t, "payment.created delivered by the other process", time.Until(signalled.Add(3*time.Second)), func() bool {
		return !recv.arrived("payment.created", p["id"].(string)).IsZero()
	})
	t.Logf("webhook delivered by the other process %v after the signal",
		recv.arrived("payment.created", p["id"].(string)).Sub(signalled).Round(time.Millisecond))
	if log := logTail(servers[leader].logPath); !strings.Contains(log, "leases released") {
		t.Errorf("the stopped process did not say its background work stopped:\n%s", log)
	}
}
