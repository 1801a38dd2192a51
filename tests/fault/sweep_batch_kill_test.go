package fault

import (
	"context"
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

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
)

// kill -9 of the real binary between storing a signed sweep batch (three deposit addresses'
// USDC, pulled through EIP-7702 delegations) and broadcasting it: after a restart the stored
// batch goes out, exactly once — the hot wallet sent one transaction, the deposit addresses are
// empty of USDC and never held any native token, the hot wallet got exactly the three payments,
// and the treasury shows them swept.
func TestSweepBatchSurvivesKill9(t *testing.T) {
	rig := newDevnetRig(t, filepath.Join(t.TempDir(), "paymentsd.db"), "PAYMENTS_SWEEP_MIN_USD=1000000") // only on request
	bin, db, rpc, eth, env := rig.bin, rig.db, rig.rpc, rig.eth, rig.env
	ctx := context.Background()
	created := rig.merchant(t, "Sweeps")
	srv := rig.server(t, "PAYMENTS_FAULT_PAUSE_AFTER_SIGN=5s")

	usdc := common.HexToAddress(devnet.USDCAddress)
	hot := devnet.AccountAddress(devnet.HotWalletAccount)
	var deposits []common.Address
	total := new(big.Int)
	for i := range 3 {
		p := apiJSON(t, srv.base, created.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": `+strconv.Itoa(2000+100*i)+`, "currency": "USD", "orderId": "batch-`+strconv.Itoa(i)+`"}`)["payment"].(map[string]any)
		var quoteID string
		for _, q := range p["quotes"].([]any) {
			q := q.(map[string]any)
			if tok := q["token"].(map[string]any); tok["symbol"] == "USDC" && tok["chain"].(map[string]any)["chainId"] == "eip155:1337" {
				quoteID = q["id"].(string)
				units, _ := new(big.Int).SetString(q["expectedAmountAsset"].(string), 10)
				total.Add(total, units)
				deposits = append(deposits, common.HexToAddress(q["depositAddress"].(map[string]any)["address"].(string)))
			}
		}
		runCLIEnv(t, bin, db, env, "devnet", "pay", "--payment", p["id"].(string), "--quote", quoteID, "--rpc", rpc, "--account", strconv.Itoa(3+i))
		waitStatus(t, srv.base, created.SecretKey, p["id"].(string), "completed", 60*time.Second)
	}
	hotUSDC, err := chain.ERC20Balance(ctx, eth, usdc, hot)
	if err != nil {
		t.Fatal(err)
	}
	hotNonce, err := eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The operator asks for a sweep; the worker signs the batch, stores it, and dies before sending it.
	req := exec.Command(bin, "sweep", "--chain", "eip155:1337", "--wait", "1s")
	req.Dir, req.Env = rootDir, append(daemonEnv(db), env...)
	_ = req.Run() // gives up waiting at once: the request stays for the worker
	waitLog(t, srv, "pausing between storing a signed payout and broadcasting it", 30*time.Second)
	srv.kill9()
	if n, err := eth.PendingNonceAt(ctx, hot); err != nil || n != hotNonce {
		t.Fatalf("the batch reached the node before the kill (pending nonce %d, was %d; %v)", n, hotNonce, err)
	}
	srv.env = env
	srv.start()
	var res struct {
		Requests []struct {
			Result string `json:"result"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(runCLIEnv(t, bin, db, env, "sweep", "--chain", "eip155:1337", "--wait", "60s", "--json"), &res); err != nil ||
		len(res.Requests) == 0 || !strings.HasPrefix(res.Requests[len(res.Requests)-1].Result, "done") {
		t.Fatalf("sweep --json: %v %+v", err, res)
	}
	time.Sleep(time.Second) // a few more blocks and rounds: nothing is sent again

	for _, d := range deposits {
		left, err := chain.ERC20Balance(ctx, eth, usdc, d)
		if err != nil || left.Sign() != 0 {
			t.Errorf("deposit address %s still holds %v USDC (%v)", d.Hex(), left, err)
		}
		native, err := eth.BalanceAt(ctx, d, nil)
		if err != nil || native.Sign() != 0 {
			t.Errorf("deposit address %s holds %v wei: no native token may be sent there (%v)", d.Hex(), native, err)
		}
	}
	got, err := chain.ERC20Balance(ctx, eth, usdc, hot)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Add(hotUSDC, total); got.Cmp(want) != 0 {
		t.Errorf("hot wallet holds %s USDC units, want %s (exactly the three payments)", got, want)
	}
	if n, err := eth.NonceAt(ctx, hot, nil); err != nil || n != hotNonce+1 {
		t.Errorf("the hot wallet sent %d transactions, want exactly one batch (%v)", n-hotNonce, err)
	}
	var r treasuryReport
	if err := json.Unmarshal(runCLIEnv(t, bin, db, env, "treasury", "--json"), &r); err != nil {
		t.Fatal(err)
	}
	if tok := r.token(t, "USDC"); tok.Swept != total.String() || tok.UnsweptRecorded != "0" {
		t.Errorf("treasury: want %s USDC swept and none unswept, got %+v", total, tok)
	}
}
