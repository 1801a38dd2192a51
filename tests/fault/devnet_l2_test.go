package fault

import (
	"bytes"
	"context"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
)

// devnetAddr is a loopback address whose port and the port after it are both free and handed
// out to nothing else in this test process (freePort reserves both): `serve` puts the devnet's
// second chain on the port after PAYMENTS_DEVNET's.
func devnetAddr(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(freePort(t))
}

// The embedded default runs two devnet chains, as a merchant meets several chains in
// production: `serve` with only PAYMENTS_DEVNET set runs eip155:31337 on the port after it and
// logs both URLs; a payment is quoted on both; `paymentsd devnet pay --quote` (no --rpc: it
// finds the second chain where serve put it) pays the L2's USDC quote, the payment settles on
// eip155:31337 with the L2's transaction in its receipt, and a withdrawal on eip155:31337 is paid
// by the development hot wallet on that chain, not on the other.
func TestSecondDevnetChainTakesAPaymentAndPaysAWithdrawal(t *testing.T) {
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	devAddr := devnetAddr(t)
	port, _ := strconv.Atoi(devAddr[strings.LastIndex(devAddr, ":")+1:])
	rpc1, rpc2 := "http://"+devAddr, "http://127.0.0.1:"+strconv.Itoa(port+1)
	env := []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms"}
	created := createMerchant(t, bin, db, env, "Two chains", "--withdrawals")
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	waitRPC(t, rpc2)
	waitTokens(t, rpc2)
	logBytes, err := os.ReadFile(srv.logPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := string(logBytes)
	for _, want := range []string{"eip155:1337 (Devnet) at " + rpc1, "eip155:31337 (Devnet L2) at " + rpc2} {
		if !strings.Contains(logs, want) {
			t.Errorf("serve should log %q; log tail:\n%s", want, logTail(srv.logPath))
		}
	}
	l1, err := ethclient.Dial(rpc1)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Close()
	l2, err := ethclient.Dial(rpc2)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	ctx := context.Background()
	if id, err := l2.ChainID(ctx); err != nil || id.Int64() != devnet.L2ChainID {
		t.Fatalf("the port after PAYMENTS_DEVNET's answers chain %v (%v), want %d", id, err, devnet.L2ChainID)
	}

	// A payment, quoted on both chains; paid on the L2 with `devnet pay --quote`.
	p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 2000, "currency": "USD", "orderId": "l2-1"}`)["payment"].(map[string]any)
	id := p["id"].(string)
	byChain := map[string][]string{}
	var quoteID, units, deposit string
	for _, q := range p["quotes"].([]any) {
		q := q.(map[string]any)
		tok := q["token"].(map[string]any)
		caip := tok["chain"].(map[string]any)["chainId"].(string)
		byChain[caip] = append(byChain[caip], tok["symbol"].(string))
		if caip == "eip155:31337" && tok["symbol"] == "USDC" {
			quoteID, units = q["id"].(string), q["expectedAmountAsset"].(string)
			deposit = q["depositAddress"].(map[string]any)["address"].(string)
		}
	}
	if len(byChain) != 2 || len(byChain["eip155:1337"]) != 3 || len(byChain["eip155:31337"]) != 3 || quoteID == "" {
		t.Fatalf("want ETH, USDC and USDT quotes on eip155:1337 and eip155:31337, got %v", byChain)
	}
	cmd := exec.Command(bin, "devnet", "pay", "--payment", id, "--quote", quoteID, "--account", "6")
	cmd.Dir, cmd.Env = rootDir, append(daemonEnv(db), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("devnet pay --quote: %v\n%s", err, stderr.String())
	}
	tx := strings.TrimSpace(stdout.String())
	rc, err := l2.TransactionReceipt(ctx, common.HexToHash(tx))
	if err != nil {
		t.Fatalf("the transaction %s is not on the L2: %v (devnet pay: %s)", tx, err, stderr.String())
	}
	if _, err := l1.TransactionReceipt(ctx, common.HexToHash(tx)); err == nil {
		t.Fatalf("the transaction %s is on eip155:1337 too", tx)
	}
	got, err := chain.ERC20Balance(ctx, l2, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(deposit))
	if err != nil || got.String() != units {
		t.Fatalf("the deposit address holds %v L2 USDC (%v), want %s", got, err, units)
	}
	waitStatus(t, srv.base, created.SecretKey, id, "completed", 60*time.Second)
	done := apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
	r := done["receipt"].(map[string]any)
	if r["txHash"] != strings.ToLower(tx) || r["txBlockNumber"] != float64(rc.BlockNumber.Int64()) ||
		r["settledChain"].(map[string]any)["chainId"] != "eip155:31337" || r["settledAmountAsset"] != units ||
		r["selectedQuote"].(map[string]any)["id"] != quoteID {
		t.Fatalf("receipt of the L2 payment: %v", r)
	}

	// A withdrawal on the L2: the development hot wallet pays it there, in the L2's USDC.
	recipient := "0x" + strings.Repeat("4b", 20)
	w := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
		`{"amountInCents": 1000, "chainId": "eip155:31337", "recipientAddress": "`+recipient+`"}`)
	wid := w["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	var wd map[string]any
	for {
		wd = apiJSON(t, srv.base, created.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+wid, "")
		if wd["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the L2 withdrawal never completed: %v", wd)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wr, _ := wd["receipt"].(map[string]any)
	if wr == nil || wr["processedBy"] != "cron" {
		t.Fatalf("completed L2 withdrawal without its receipt: %v", wd)
	}
	wtx, _ := wr["txHash"].(string)
	if wrc, err := l2.TransactionReceipt(ctx, common.HexToHash(wtx)); err != nil || wrc.Status != 1 {
		t.Fatalf("the withdrawal's transaction %q on the L2: %v %v", wtx, wrc, err)
	}
	sent, err := chain.ERC20Balance(ctx, l2, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(recipient))
	if err != nil || sent.Cmp(big.NewInt(10_000_000)) != 0 {
		t.Fatalf("the recipient holds %v L2 USDC (%v), want 10000000 ($10.00 at 6 decimals)", sent, err)
	}
	other, err := chain.ERC20Balance(ctx, l1, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(recipient))
	if err != nil || other.Sign() != 0 {
		t.Fatalf("the recipient holds %v USDC on eip155:1337 (%v): the withdrawal was paid on the wrong chain", other, err)
	}
}
