package fault

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// SIGTERM of the process holding the background leases hands every one of them to the other
// serve process on the same PostgreSQL at once — not after the lease expires (15–25 s before):
// its loops finish their rounds and give their leases up before its database closes.
func TestGracefulStopHandsLeasesOver(t *testing.T) {
	bin := paymentsdBinary(t)
	db := testdb.URL(t, "postgres")
	rpc := startDevnet(t, bin, db, "250ms")
	var created struct {
		SecretKey string `json:"secretKey"`
	}
	if err := json.Unmarshal(runCLI(t, bin, db, "merchants", "create", "--name", "Hand-over", "--json"), &created); err != nil {
		t.Fatal(err)
	}
	var servers []*server
	for range 2 {
		s := newServer(t, bin, db)
		s.env = []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_WATCH_INTERVAL=100ms",
			"PAYMENTS_EXPIRY_INTERVAL=200ms"}
		s.start()
		servers = append(servers, s)
	}
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	leases := []string{"watch:eip155:1337", "payout:eip155:1337", "expiry-sweep"}
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
	var held map[string]int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		held = holders()
		if held[leases[0]] >= 0 && held[leases[1]] >= 0 && held[leases[2]] >= 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leases were never all taken: %v", held)
		}
	}
	leader := held[leases[0]]
	other := 1 - leader
	t.Logf("before: %v; stopping server %d (SIGTERM)", held, leader)
	signalled := time.Now()
	servers[leader].stop()
	stopped := time.Since(signalled)
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
	if log := logTail(servers[leader].logPath); !strings.Contains(log, "leases released") {
		t.Errorf("the stopped process did not say its background work stopped:\n%s", log)
	}
}
