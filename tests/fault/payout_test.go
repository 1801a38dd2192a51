package fault

import (
	"context"
	"crypto/rand"
	"math/big"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// kill -9 of the real binary between storing a signed payout and broadcasting it, and again
// right after broadcasting: after a restart each recipient got exactly one transfer.
func TestPayoutSurvivesKill9(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "paymentsd.db")
			if backend == "postgres" {
				db = testdb.URL(t, "postgres")
			}
			rig := newDevnetRig(t, db)
			bin, eth, chainEnv := rig.bin, rig.eth, rig.env
			created := rig.merchant(t, "Payouts", "--withdrawals")
			srv := rig.server(t, "PAYMENTS_FAULT_PAUSE_AFTER_SIGN=5s")
			// A balance: a $100 payment settled by the operator.
			p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
				`{"amount": 10000, "currency": "USD", "orderId": "fund"}`)["payment"].(map[string]any)
			runCLIEnv(t, bin, db, chainEnv, "payments", "settle", "--payment", p["id"].(string), "--tx-hash", "0x"+strings.Repeat("cd", 32))

			withdraw := func(cents int) (string, common.Address) {
				var b [20]byte
				_, _ = rand.Read(b[:])
				to := common.BytesToAddress(b[:])
				w := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
					`{"amountInCents": `+strconv.Itoa(cents)+`, "chainId": "eip155:1337", "recipientAddress": "`+strings.ToLower(to.Hex())+`"}`)
				return w["id"].(string), to
			}
			waitCompleted := func(id string) {
				deadline := time.Now().Add(60 * time.Second)
				for time.Now().Before(deadline) {
					w := apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+id, "")
					if w["status"] == "completed" {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				t.Fatalf("withdrawal %s not completed", id)
			}
			usdc := func(who common.Address) string {
				b, err := devnet.TokenBalance(context.Background(), eth, common.HexToAddress(devnet.USDCAddress), who)
				if err != nil {
					t.Fatal(err)
				}
				return b.String()
			}

			// 1. Killed between storing the signed transaction and broadcasting it.
			id1, to1 := withdraw(1234)
			waitLog(t, srv, "pausing between storing a signed payout and broadcasting it", 30*time.Second)
			srv.kill9()
			srv.env = chainEnv // no pause from now on
			srv.start()
			waitCompleted(id1)

			// 2. Killed right after broadcasting: the hot wallet's pending nonce moved.
			hot := devnet.AccountAddress(devnet.HotWalletAccount)
			before, err := eth.PendingNonceAt(context.Background(), hot)
			if err != nil {
				t.Fatal(err)
			}
			id2, to2 := withdraw(2345)
			deadline := time.Now().Add(30 * time.Second)
			for {
				n, err := eth.PendingNonceAt(context.Background(), hot)
				if err == nil && n > before {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the payout was never broadcast")
				}
				time.Sleep(5 * time.Millisecond)
			}
			srv.kill9()
			srv.start()
			waitCompleted(id2)

			time.Sleep(time.Second) // a few more blocks and rounds: nothing is sent again
			if got := usdc(to1); got != big.NewInt(12_340_000).String() {
				t.Errorf("recipient 1 holds %s USDC units, want exactly 12340000", got)
			}
			if got := usdc(to2); got != big.NewInt(23_450_000).String() {
				t.Errorf("recipient 2 holds %s USDC units, want exactly 23450000", got)
			}
		})
	}
}

// waitLog waits until the server's log holds a line containing s.
func waitLog(t *testing.T, s *server, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(logTail(s.logPath), text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in the log within %s", text, timeout)
}
