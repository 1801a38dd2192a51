package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
)

type treasuryToken struct {
	Token            string `json:"token"`
	HotWallet        string `json:"hotWallet"`
	UnsweptRecorded  string `json:"unsweptRecorded"`
	UnsweptOnChain   string `json:"unsweptOnChain"`
	UnsweptAddresses int    `json:"unsweptAddresses"`
	Swept            string `json:"swept"`
}

type treasuryReport struct {
	Test struct {
		AvailableCents int64 `json:"availableCents"`
	} `json:"test"`
	Chains []struct {
		Chain     string          `json:"chain"`
		HotWallet string          `json:"hotWallet"`
		Error     string          `json:"error"`
		Tokens    []treasuryToken `json:"tokens"`
	} `json:"chains"`
}

func (r treasuryReport) token(t *testing.T, symbol string) treasuryToken {
	t.Helper()
	for _, c := range r.Chains {
		if c.Chain != "eip155:1337" {
			continue
		}
		if c.Error != "" {
			t.Fatalf("treasury could not read the devnet: %s", c.Error)
		}
		for _, tok := range c.Tokens {
			if tok.Token == symbol {
				return tok
			}
		}
	}
	t.Fatalf("treasury has no devnet %s line: %+v", symbol, r)
	return treasuryToken{}
}

// The embedded default (SQLite, the devnet, the development deposit key kept in a file beside
// the database) sweeps on demand with the real binary: `paymentsd sweep` asked with no worker
// running says so and leaves its request; once `serve` runs, the USDC paid to a deposit address
// (an ERC-20: gas topped up from the hot wallet first) moves to the hot wallet, and
// `paymentsd treasury` shows it swept, on chain and in the ledger.
func TestSweepAndTreasuryOnTheEmbeddedDefault(t *testing.T) {
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	devAddr := devnetAddr(t)
	rpc := "http://" + devAddr
	env := []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms", "PAYMENTS_SWEEP_MIN_USD=1000000"} // only on request
	created := createMerchant(t, bin, db, env, "Sweeps")
	if st, err := os.Stat(db + ".deposit-key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the development deposit key file beside the database, mode 0600: %v %v", st, err)
	}

	// No worker yet: the request is kept, and the command says why it gave up waiting.
	cmd := exec.Command(bin, "sweep", "--chain", "eip155:1337", "--wait", "1s")
	cmd.Dir, cmd.Env = rootDir, append(daemonEnv(db), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "no worker took the request up") {
		t.Fatalf("sweep with no worker: want a clear failure, got %v: %s", err, stderr.String())
	}

	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 2500, "currency": "USD", "orderId": "sweep-1"}`)["payment"].(map[string]any)
	var quoteID, deposit, units string
	for _, q := range p["quotes"].([]any) {
		q := q.(map[string]any)
		if tok := q["token"].(map[string]any); tok["symbol"] == "USDC" && tok["chain"].(map[string]any)["chainId"] == "eip155:1337" {
			quoteID, units = q["id"].(string), q["expectedAmountAsset"].(string)
			deposit = q["depositAddress"].(map[string]any)["address"].(string)
		}
	}
	if quoteID == "" {
		t.Fatalf("no USDC quote: %v", p["quotes"])
	}
	runCLIEnv(t, bin, db, env, "devnet", "pay", "--payment", p["id"].(string), "--quote", quoteID, "--rpc", rpc, "--account", "4")
	waitStatus(t, srv.base, created.SecretKey, p["id"].(string), "completed", 60*time.Second)

	treasury := func() treasuryReport {
		var r treasuryReport
		if err := json.Unmarshal(runCLIEnv(t, bin, db, env, "treasury", "--json"), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := treasury().token(t, "USDC")
	// The earlier request may already be done by now (the worker took it up); either way a sweep
	// asked now is done before the command returns.
	if before.UnsweptRecorded != units && before.Swept != units {
		t.Fatalf("treasury before the sweep: want %s USDC unswept (or already swept by the first request), got %+v", units, before)
	}
	var res struct {
		Requests []struct {
			Result string `json:"result"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(runCLIEnv(t, bin, db, env, "sweep", "--chain", "eip155:1337", "--wait", "60s", "--json"), &res); err != nil ||
		len(res.Requests) != 1 || !strings.HasPrefix(res.Requests[0].Result, "done") {
		t.Fatalf("sweep --json: %v %+v", err, res)
	}
	after := treasury().token(t, "USDC")
	if after.Swept != units || after.UnsweptRecorded != "0" || after.UnsweptAddresses != 0 {
		t.Fatalf("treasury after the sweep: want %s USDC swept and none unswept, got %+v", units, after)
	}
	// The chain agrees: the deposit address holds no USDC, the hot wallet got exactly the amount.
	eth, err := ethclient.Dial(rpc)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	ctx := context.Background()
	left, err := chain.ERC20Balance(ctx, eth, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(deposit))
	if err != nil || left.Sign() != 0 {
		t.Fatalf("deposit address still holds %v USDC (%v)", left, err)
	}
	hot, err := chain.ERC20Balance(ctx, eth, common.HexToAddress(devnet.USDCAddress), devnet.AccountAddress(devnet.HotWalletAccount))
	if err != nil {
		t.Fatal(err)
	}
	if want := decimal.RequireFromString(before.HotWallet).Add(decimal.RequireFromString(units)); before.Swept == "0" &&
		!want.Equal(decimal.NewFromBigInt(hot, 0)) {
		t.Fatalf("hot wallet USDC %s, want %s", hot, want)
	}
	if after.HotWallet != hot.String() {
		t.Fatalf("treasury's hot wallet USDC %s, the chain says %s", after.HotWallet, hot)
	}
}

// waitStatus polls a payment until it reaches status.
func waitStatus(t *testing.T, base, key, id, status string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if apiJSON(t, base, key, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")["status"] == status {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("payment %s not %s within %s", id, status, timeout)
}
