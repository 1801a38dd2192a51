package fault

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math/big"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// The embedded default end to end, from outside, as a newcomer runs it: `paymentsd serve` on
// a fresh data directory (SQLite + the devnet), a payment created over the API, paid with
// `paymentsd devnet pay` (a real signed transaction over the devnet's JSON-RPC), watched until
// it completes, and its receipt compared with the chain's own answer. Then the process is
// killed (-9) and started again: the devnet is a new chain, the watcher starts over on it, the
// completed payment stays as it was, and a new payment completes on the new chain.
func TestEmbeddedDefaultTakesAPaymentOnChain(t *testing.T) {
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	created := createMerchant(t, bin, db, nil, "On chain")
	devAddr := devnetAddr(t) // and its second chain on the port after
	srv := newServer(t, bin, db)
	srv.env = []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms"}
	srv.start()
	rpc := "http://" + devAddr

	pay := func() (id string, receipt map[string]any, tx string) {
		t.Helper()
		p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": 1234, "currency": "USD", "orderId": "chain-1"}`)["payment"].(map[string]any)
		id = p["id"].(string)
		quotes := p["quotes"].([]any)
		if len(quotes) != 6 {
			t.Fatalf("the embedded default quotes the devnet's two chains only (ETH, USDC, USDT on each): got %d quotes", len(quotes))
		}
		cmd := exec.Command(bin, "devnet", "pay", "--payment", id, "--rpc", rpc, "--account", "3")
		cmd.Env = append(daemonEnv(db), "PAYMENTS_DEVNET="+devAddr)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("devnet pay: %v\n%s", err, stderr.String())
		}
		tx = strings.TrimSpace(stdout.String())
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			got := apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
			if got["status"] == "completed" {
				return id, got["receipt"].(map[string]any), tx
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("payment %s not completed within 60 s", id)
		return
	}

	id, r, tx := pay()
	eth, err := ethclient.Dial(rpc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc, err := eth.TransactionReceipt(ctx, common.HexToHash(tx))
	if err != nil {
		t.Fatal(err)
	}
	header, err := eth.HeaderByNumber(ctx, rc.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	want := map[string]any{
		"txHash":          strings.ToLower(tx),
		"txBlockNumber":   float64(rc.BlockNumber.Int64()),
		"txTimestamp":     time.Unix(int64(header.Time), 0).UTC().Format(time.RFC3339),
		"txSenderAddress": "0x90f79bf6eb2c4f870365e785982e1f101e93b906", // test account 3
		"txGasUsed":       float64(rc.GasUsed),
		"txTotalCost":     cost.String(),
		"txIsSponsored":   false,
		"processedBy":     "cron",
		"txRiskSeverity":  "NO_RISK",
		"txRiskProvider":  "sanctions-list",
	}
	for k, v := range want {
		got := r[k]
		if k == "txTimestamp" {
			ts, _ := time.Parse(time.RFC3339Nano, got.(string))
			got = ts.UTC().Format(time.RFC3339)
		}
		if got != v {
			t.Errorf("receipt %s = %v, want %v (the chain's answer)", k, got, v)
		}
	}

	// kill -9 and start again: a new devnet; nothing is mis-credited.
	srv.kill9()
	srv.start()
	again := apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
	if again["status"] != "completed" || again["receipt"].(map[string]any)["txHash"] != strings.ToLower(tx) {
		t.Fatalf("after a restart the completed payment changed: %v", again)
	}
	id2, _, _ := pay()
	if id2 == id {
		t.Fatal("a new payment was expected")
	}
	if logs := logTail(srv.logPath); !strings.Contains(logs, "genesis changed") {
		t.Errorf("the watcher should say it started over on the new devnet; log tail:\n%s", logs)
	}
}

// apiJSON calls the API with the merchant key and decodes the JSON object answered (2xx only).
func apiJSON(t *testing.T, base, key, method, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Service-Secret-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %v %v", method, path, res.StatusCode, out, err)
	}
	return out
}

// Two `paymentsd serve` processes on one PostgreSQL, both watching one devnet run apart by
// `paymentsd devnet`: every payment completes, and each is credited and announced once.
func TestTwoServeProcessesOnePostgresOneDevnet(t *testing.T) {
	bin := paymentsdBinary(t)
	db := testdb.URL(t, "postgres")
	rpc := startDevnet(t, bin, db, "250ms")

	created := createMerchant(t, bin, db, nil, "Two processes")
	var servers []*server
	for range 2 {
		s := newServer(t, bin, db)
		s.env = []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_WATCH_INTERVAL=100ms"}
		s.start()
		servers = append(servers, s)
	}
	var ids []string
	for i := range 6 {
		s := servers[i%2]
		p := apiJSON(t, s.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": 1000, "currency": "USD", "orderId": "two-`+strconv.Itoa(i)+`"}`)["payment"].(map[string]any)
		id := p["id"].(string)
		cmd := exec.Command(bin, "devnet", "pay", "--payment", id, "--rpc", rpc, "--account", strconv.Itoa(i))
		cmd.Env = daemonEnv(db)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("devnet pay: %v\n%s", err, b)
		}
		ids = append(ids, id)
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range ids {
		for {
			got := apiJSON(t, servers[1].base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
			if got["status"] == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("payment %s not completed: %v", id, got["status"])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// From the database itself: one credit and one payment.completed event per payment.
	conn, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, id := range ids {
		var credits, completed, transfers int
		if err := conn.QueryRow(`SELECT
			(SELECT count(*) FROM ledger_entries WHERE payment_id = $1),
			(SELECT count(*) FROM events WHERE entity_id = $1 AND type = 'payment.completed'),
			(SELECT count(*) FROM transfers WHERE payment_id = $1)`, id).Scan(&credits, &completed, &transfers); err != nil {
			t.Fatal(err)
		}
		if credits != 1 || completed != 1 || transfers != 1 {
			t.Errorf("payment %s: %d credits, %d completed events, %d transfers; want 1 each", id, credits, completed, transfers)
		}
	}
}

// startDevnet runs `paymentsd devnet` (its chain eip155:1337 only) on a free port until the
// test ends and returns its URL once it answers.
func startDevnet(t *testing.T, bin, db, blockTime string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	dev := exec.Command(bin, "devnet", "--addr", addr, "--chain-id", "1337", "--block-time", blockTime)
	dev.Env = daemonEnv(db)
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Process.Kill(); _ = dev.Wait() })
	rpc := "http://" + addr
	waitRPC(t, rpc)
	waitTokens(t, rpc)
	return rpc
}

// waitTokens waits until the devnet's tokens are deployed: it answers JSON-RPC a moment before
// (block 1 carries the deployments), and a balanceOf then reads no contract.
func waitTokens(t *testing.T, url string) {
	t.Helper()
	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ready := true
		for _, a := range []string{devnet.USDCAddress, devnet.USDTAddress} {
			code, err := c.CodeAt(context.Background(), common.HexToAddress(a), nil)
			if err != nil || len(code) == 0 {
				ready = false
			}
		}
		if ready {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the devnet at %s never deployed its tokens", url)
}

// waitRPC waits until a JSON-RPC endpoint answers.
func waitRPC(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := ethclient.Dial(url); err == nil {
			_, err = c.ChainID(context.Background())
			c.Close()
			if err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no JSON-RPC at %s", url)
}

// An API process (`--role api`: no chain connections, no keys) and a worker (`--role worker`:
// watchers and payouts, health and metrics only) on one PostgreSQL take a payment on chain and
// pay a withdrawal together.
func TestAPIAndWorkerRoles(t *testing.T) {
	bin := paymentsdBinary(t)
	db := testdb.URL(t, "postgres")
	rpc := startDevnet(t, bin, db, "250ms")
	chainEnv := []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_WATCH_INTERVAL=100ms"}
	created := createMerchant(t, bin, db, chainEnv, "Roles", "--withdrawals")
	api, worker := newServer(t, bin, db), newServer(t, bin, db)
	api.env = append(chainEnv, "PAYMENTS_ROLE=api")
	worker.env = append(chainEnv, "PAYMENTS_ROLE=worker")
	api.start()
	worker.start()

	// The worker serves no API.
	res, err := http.Get(worker.base + "/v1/external/chains")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 == 2 {
		t.Errorf("a worker answered the API: %d", res.StatusCode)
	}

	p := apiJSON(t, api.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 5000, "currency": "USD", "orderId": "roles"}`)["payment"].(map[string]any)
	id := p["id"].(string)
	cmd := exec.Command(bin, "devnet", "pay", "--payment", id, "--rpc", rpc)
	cmd.Env = daemonEnv(db)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("devnet pay: %v\n%s", err, b)
	}
	waitStatus := func(path, want string) map[string]any {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			got := apiJSON(t, api.base, created.SecretKey, http.MethodGet, path, "")
			if got["status"] == want {
				return got
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s never %s", path, want)
		return nil
	}
	waitStatus("/v1/external/secretkey-auth/payments/"+id, "completed")
	w := apiJSON(t, api.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
		`{"amountInCents": 1000, "chainId": "eip155:1337", "recipientAddress": "0x9858effd232b4033e47d90003d41ec34ecaeda94"}`)
	got := waitStatus("/v1/external/secretkey-auth/withdrawals/"+w["id"].(string), "completed")
	if r, _ := got["receipt"].(map[string]any); r == nil || r["processedBy"] != "cron" {
		t.Errorf("completed withdrawal without its receipt: %v", got)
	}
	if logs := logTail(api.logPath); strings.Contains(logs, "devnet started") || strings.Contains(logs, "DEVELOPMENT HOT WALLET") {
		t.Errorf("the API process ran the devnet or loaded a hot wallet:\n%s", logs)
	}
}
