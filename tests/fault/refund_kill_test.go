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

// kill -9 of the real binary while refunds are being paid — between storing a signed refund
// payout and broadcasting it, right after broadcasting, and at moments nobody chose while a batch
// is being paid — and after the last restart every recipient's balance on chain is counted: each
// got its refund exactly once.
func TestRefundsSurviveKill9(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "paymentsd.db")
			if backend == "postgres" {
				db = testdb.URL(t, "postgres")
			}
			rig := newDevnetRig(t, db)
			bin, eth, chainEnv := rig.bin, rig.eth, rig.env
			key := rig.merchant(t, "Refunds").SecretKey
			srv := rig.server(t, "PAYMENTS_FAULT_PAUSE_AFTER_SIGN=5s")

			// A $500 payment settled by the operator in devnet USDC: what the refunds come out of.
			p := apiJSON(t, srv.base, key, http.MethodPost, "/v1/external/secretkey-auth/payments",
				`{"amount": 50000, "currency": "USD", "orderId": "refunded"}`)["payment"].(map[string]any)
			pid := p["id"].(string)
			quote, _, _ := paymentQuote(t, p, "eip155:1337", "USDC")
			runCLIEnv(t, bin, db, chainEnv, "payments", "settle", "--payment", pid, "--quote", quote, "--tx-hash", "0x"+strings.Repeat("ef", 32))

			want := map[common.Address]int64{} // recipient → USDC units it must hold at the end
			ids := map[string]bool{}
			refund := func(cents int) {
				var b [20]byte
				_, _ = rand.Read(b[:])
				to := common.BytesToAddress(b[:])
				r := apiJSON(t, srv.base, key, http.MethodPost, "/v1/external/secretkey-auth/payments/"+pid+"/refunds",
					`{"amountInCents": `+strconv.Itoa(cents)+`, "recipientAddress": "`+strings.ToLower(to.Hex())+`"}`)
				want[to] = int64(cents) * 10_000
				ids[r["id"].(string)] = true
			}
			hot := devnet.AccountAddress(devnet.HotWalletAccount)
			pendingNonce := func() uint64 {
				n, err := eth.PendingNonceAt(context.Background(), hot)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}

			// 1. Killed between storing a signed refund payout and broadcasting it.
			refund(1111)
			waitLog(t, srv, "pausing between storing a signed payout and broadcasting it", 30*time.Second)
			srv.kill9()
			srv.env = chainEnv
			srv.start()

			// 2. Killed right after a broadcast: the hot wallet's pending nonce moved.
			before := pendingNonce()
			refund(2222)
			for deadline := time.Now().Add(30 * time.Second); pendingNonce() <= before; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the refund was never broadcast")
				}
			}
			srv.kill9()
			srv.start()

			// 3. A batch paid while the process is killed three times at moments nobody chose.
			for i := range 8 {
				refund(301 + i)
			}
			for _, after := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 700 * time.Millisecond} {
				time.Sleep(after)
				srv.kill9()
				srv.start()
			}

			deadline := time.Now().Add(90 * time.Second)
			for id := range ids {
				for {
					r := apiJSON(t, srv.base, key, http.MethodGet, "/v1/external/secretkey-auth/refunds/"+id, "")
					if r["status"] == "completed" {
						break
					}
					if r["status"] == "failed" || r["status"] == "cancelled" || time.Now().After(deadline) {
						t.Fatalf("refund %s is %v: %v", id, r["status"], r)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			time.Sleep(time.Second) // a few more blocks and rounds: nothing is sent again
			for to, units := range want {
				b, err := devnet.TokenBalance(context.Background(), eth, common.HexToAddress(devnet.USDCAddress), to)
				if err != nil {
					t.Fatal(err)
				}
				if b.Cmp(big.NewInt(units)) != 0 {
					t.Errorf("recipient %s holds %s USDC units, want exactly %d: paid once", to.Hex(), b, units)
				}
			}
			got := apiJSON(t, srv.base, key, http.MethodGet, "/v1/external/secretkey-auth/payments/"+pid, "")
			total := int64(0)
			for _, u := range want {
				total += u / 10_000
			}
			if got["amountRefundedCents"] != float64(total) {
				t.Errorf("amountRefundedCents = %v, want %d", got["amountRefundedCents"], total)
			}
		})
	}
}
