package fault

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/devnet"
)

// The embedded devnet is a new chain at every start (a new genesis). Payouts start over on it:
// a withdrawal signed for the old chain and never broadcast can never be mined on the new one,
// so it fails with the amount back in the balance (it is not re-signed), and the hot wallet's
// nonces start again from the new chain's count — a withdrawal made after the restart is paid.
// Before this was handled, the stored nonce ran ahead of the new chain and every later payout
// waited forever behind the gap.
func TestDevnetRestartStartsPayoutsOver(t *testing.T) {
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	devAddr := devnetAddr(t)
	env := []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=200ms",
		"PAYMENTS_WATCH_INTERVAL=100ms"}
	created := createMerchant(t, bin, db, env, "Restarts", "--withdrawals")
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 10000, "currency": "USD", "orderId": "fund"}`)["payment"].(map[string]any)
	runCLIEnv(t, bin, db, env, "payments", "settle", "--payment", p["id"].(string), "--tx-hash", "0x"+strings.Repeat("ef", 32))
	balance := func() int64 { // every merchant's, by the ledger (the others hold nothing)
		var r treasuryReport
		if err := json.Unmarshal(runCLIEnv(t, bin, db, env, "treasury", "--json"), &r); err != nil {
			t.Fatal(err)
		}
		return r.Test.AvailableCents // devnet money: test mode
	}
	withdraw := func(cents int, to string) string {
		return apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
			`{"amountInCents": `+strconv.Itoa(cents)+`, "chainId": "eip155:1337", "recipientAddress": "`+to+`"}`)["id"].(string)
	}
	waitWithdrawal := func(id, status string) map[string]any {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			w := apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+id, "")
			if w["status"] == status {
				return w
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("withdrawal %s not %s within 60 s", id, status)
		return nil
	}

	// Two payouts on the first chain, so the hot wallet's stored nonce is ahead of a new chain's.
	for i, to := range []string{"0x10000000000000000000000000000000000000a1", "0x10000000000000000000000000000000000000a2"} {
		waitWithdrawal(withdraw(100+i, to), "completed")
	}
	// A third signed and stored, then the process killed before it is broadcast.
	srv.stop()
	srv.env = append(env, "PAYMENTS_FAULT_PAUSE_AFTER_SIGN=60s")
	srv.start()
	lost := withdraw(300, "0x10000000000000000000000000000000000000a3")
	waitLog(t, srv, "pausing between storing a signed payout and broadcasting it", 30*time.Second)
	before := balance()
	srv.kill9()
	srv.env = env
	srv.start() // a new devnet: a new genesis

	w := waitWithdrawal(lost, "failed")
	if msg, _ := w["errorMessage"].(string); !strings.Contains(msg, "the chain was reset") {
		t.Errorf("the failed withdrawal should say why: %v", w["errorMessage"])
	}
	if got := balance(); got != before+300 {
		t.Errorf("balance %v after the failure, want %v (the amount restored)", got, before+300)
	}
	// On the new chain a withdrawal is paid, at the new chain's nonce 0.
	to := "0x10000000000000000000000000000000000000b1"
	paid := waitWithdrawal(withdraw(400, to), "completed")
	eth, err := ethclient.Dial("http://" + devAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	got, err := devnet.TokenBalance(context.Background(), eth, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(to))
	if err != nil || got.String() != "4000000" {
		t.Fatalf("recipient on the new chain holds %v USDC units (%v), want 4000000", got, err)
	}
	tx, _, err := eth.TransactionByHash(context.Background(), common.HexToHash(paid["receipt"].(map[string]any)["txHash"].(string)))
	if err != nil || tx.Nonce() != 0 {
		t.Fatalf("the first payout on the new chain should use its nonce 0: %v %v", tx, err)
	}
	if logs := logTail(srv.logPath); !strings.Contains(logs, "transaction of a chain that no longer exists given up") {
		t.Errorf("the worker should say what it gave up; log tail:\n%s", logs)
	}
}
