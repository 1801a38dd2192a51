package fault

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/paymentsd/paymentsd/devnet"
)

// What most tests here start from, written once: a merchant made by the real CLI, a devnet of
// their own that outlives every kill -9 of serve, and a payment's quote found by chain and token.

// createdMerchant is what `paymentsd merchants create --json` prints that the tests use.
type createdMerchant struct {
	MerchantID string `json:"merchantId"`
	SecretKey  string `json:"secretKey"`
}

// createMerchant makes a merchant with the CLI (name, then flags such as "--withdrawals"), with
// env added to the process's settings.
func createMerchant(t *testing.T, bin, db string, env []string, name string, flags ...string) createdMerchant {
	t.Helper()
	args := append([]string{"merchants", "create", "--name", name, "--json"}, flags...)
	out := runCLIEnv(t, bin, db, env, args...)
	var m createdMerchant
	if err := json.Unmarshal(out, &m); err != nil || m.SecretKey == "" || m.MerchantID == "" {
		t.Fatalf("merchants create --json: %v: %s", err, out)
	}
	return m
}

// devnetRig is a database, a `paymentsd devnet` process on a free port (eip155:1337, 200 ms
// blocks) with a client of it, and the settings that point serve and the CLI at it by RPC URL,
// watched every 100 ms. The devnet is its own process so serve can be killed without it.
type devnetRig struct {
	bin, db, rpc string
	eth          *ethclient.Client
	env          []string
}

// newDevnetRig starts the devnet for db; extra settings are added to env.
func newDevnetRig(t *testing.T, db string, extra ...string) *devnetRig {
	t.Helper()
	bin := paymentsdBinary(t)
	rpc := startDevnet(t, bin, db, "200ms")
	eth, err := ethclient.Dial(rpc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eth.Close)
	env := append([]string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_DEVNET=off", "PAYMENTS_SERVE_UNWATCHED=false",
		"PAYMENTS_WATCH_INTERVAL=100ms"}, extra...)
	return &devnetRig{bin: bin, db: db, rpc: rpc, eth: eth, env: env}
}

// merchant creates a merchant on the rig's database.
func (r *devnetRig) merchant(t *testing.T, name string, flags ...string) createdMerchant {
	t.Helper()
	return createMerchant(t, r.bin, r.db, r.env, name, flags...)
}

// server returns serve on the rig's database and chain, with extra settings, started.
func (r *devnetRig) server(t *testing.T, extra ...string) *server {
	t.Helper()
	srv := newServer(t, r.bin, r.db)
	srv.env = append(append([]string{}, r.env...), extra...)
	srv.start()
	return srv
}

// paymentQuote finds the quote of chainID ("eip155:1337") and token symbol in a payment as the
// secret-key API returns it; none ends the test.
func paymentQuote(t *testing.T, payment map[string]any, chainID, symbol string) (id, deposit, amount string) {
	t.Helper()
	for _, x := range payment["quotes"].([]any) {
		q := x.(map[string]any)
		if q["chainId"] == chainID && q["token"].(map[string]any)["symbol"] == symbol {
			return q["id"].(string), q["depositAddress"].(map[string]any)["address"].(string), q["expectedAmountAsset"].(string)
		}
	}
	t.Fatalf("no %s quote on %s: %v", symbol, chainID, payment["quotes"])
	return "", "", ""
}

// servedDevnet is serve running the devnet in its own process (PAYMENTS_DEVNET on a free port,
// 250 ms blocks, watched every 100 ms; its second chain only when l2), a merchant "Corner
// Bakery", and a client of the first chain: what the checkout's browser tests start from.
type servedDevnet struct {
	srv       *server
	key       string // the merchant's secret key
	rpc, rpc2 string // the chains' RPC URLs (rpc2 "" without the second chain)
	eth       *ethclient.Client
}

func newServedDevnet(t *testing.T, l2 bool, extra ...string) *servedDevnet {
	t.Helper()
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	l1, second := devnetAddr(t), "off"
	if l2 {
		second = devnetAddr(t)
	}
	env := append([]string{"PAYMENTS_DEVNET=" + l1, "PAYMENTS_DEVNET_L2=" + second, "PAYMENTS_SERVE_UNWATCHED=false",
		"PAYMENTS_DEVNET_BLOCK_TIME=250ms", "PAYMENTS_WATCH_INTERVAL=100ms"}, extra...)
	m := createMerchant(t, bin, db, env, "Corner Bakery")
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	d := &servedDevnet{srv: srv, key: m.SecretKey, rpc: "http://" + l1}
	if l2 {
		d.rpc2 = "http://" + second
	}
	eth, err := ethclient.Dial(d.rpc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eth.Close)
	d.eth = eth
	return d
}

// devnetQuote is a payment's quote on the first devnet chain.
type devnetQuote struct{ id, deposit, amount string }

// payment creates a payment of cents and answers its id, secret, page URL (on 127.0.0.1, the
// browser's origin) and its quote of symbol on the first devnet chain.
func (d *servedDevnet) payment(t *testing.T, cents int, order, symbol string) (id, secret, payURL string, q devnetQuote) {
	t.Helper()
	created := apiJSON(t, d.srv.base, d.key, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": `+strconv.Itoa(cents)+`, "currency": "USD", "orderId": "`+order+`"}`)
	q.id, q.deposit, q.amount = paymentQuote(t, created["payment"].(map[string]any), "eip155:1337", symbol)
	return created["paymentId"].(string), created["secret"].(string),
		strings.Replace(created["paymentUrl"].(string), "http://localhost:", "http://127.0.0.1:", 1), q
}

// walletTab opens a new browser context with the test wallet injected and the CSP watched, for at
// most two minutes.
func walletTab(t *testing.T, browserCtx context.Context, w *testWallet) context.Context {
	t.Helper()
	tctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	watchCSP(t, tctx)
	injectWallet(t, tctx, w)
	tctx, cancel2 := within(tctx, 120*time.Second)
	t.Cleanup(cancel2)
	return tctx
}

// fundUSDC sends units of the devnet's USDC from a funded devnet account to who, and waits until
// who holds exactly want (its balance after the transfer).
func fundUSDC(t *testing.T, eth *ethclient.Client, who common.Address, units, want *big.Int) {
	t.Helper()
	ctx := context.Background()
	funder, err := devnet.AccountKey(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devnet.Pay(ctx, eth, funder, devnet.USDCAddress, who, units); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := devnet.TokenBalance(ctx, eth, common.HexToAddress(devnet.USDCAddress), who)
		if err == nil && b.Cmp(want) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %v USDC units (%v), want %s", who.Hex(), b, err, want)
		}
	}
}
