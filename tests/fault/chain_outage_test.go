package fault

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/chain/chaintest"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Chains fail alone, with the real binary, on SQLite and PostgreSQL: `serve` runs the embedded devnet (eip155:1337) and
// watches Base Sepolia (eip155:84532) over two URLs that refuse connections at start. Behind
// them, later, a second devnet (`paymentsd devnet`) seen through proxies that answer
// eth_chainId 84532 stands in for Base Sepolia.
//
//  1. Both URLs dead: serve starts, /readyz is 200 and says the chain is down, the chain list
//     reads isEnabled false, a payment is quoted on the devnet only and settles there, and a
//     withdrawal is paid on the devnet.
//  2. The second URL comes up (the first stays dead): the chain is quoted again within the down
//     window (2 s here), through the second URL (failover, degraded).
//  3. It goes down while a payment quoted on it is open, and the payment is paid meanwhile: the
//     chain is not quoted any more, the payment stays pending.
//  4. Both URLs answer, but for another chain id: still not quoted, and nothing is read from
//     them (the payment stays pending).
//  5. They answer the right chain id again: the chain is quoted and the payment paid during the
//     outage completes (no block skipped).
func TestChainsFailAlone(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { chainsFailAlone(t, testdb.URL(t, backend)) })
	}
}

func chainsFailAlone(t *testing.T, db string) {
	bin := paymentsdBinary(t)
	devAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	// Created where the devnet is served: its withdrawal configuration names eip155:1337.
	created := createMerchant(t, bin, db, []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false"},
		"Chains fail alone", "--withdrawals")
	key := created.SecretKey
	other := startDevnet(t, bin, db, "250ms") // Base Sepolia's stand-in, reached only through the proxies
	firstAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	secondAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	const sepolia = "eip155:84532"
	srv := newServer(t, bin, db)
	srv.env = []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms", "PAYMENTS_CHAIN_DOWN_AFTER=2s", "PAYMENTS_RPC_TIMEOUT=2s",
		"PAYMENTS_CONFIRMATIONS=" + sepolia + "=1",
		"PAYMENTS_RPC_URLS=" + sepolia + "=http://" + firstAddr + "/?key=FIRSTSECRET," + sepolia + "=http://" + secondAddr}
	srv.start()

	getBody := func(path string) []byte {
		t.Helper()
		res, err := http.Get(srv.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		return b
	}
	readyChain := func(caip string) map[string]any {
		t.Helper()
		var body struct {
			Chains map[string]map[string]any `json:"chains"`
		}
		if err := json.Unmarshal(getBody("/readyz"), &body); err != nil {
			t.Fatal(err)
		}
		return body.Chains[caip]
	}
	enabled := func(caip string) bool {
		t.Helper()
		var list struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal(getBody("/v1/external/chains?limit=1000"), &list); err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Data {
			if c["chainId"] == caip {
				return c["isEnabled"].(bool)
			}
		}
		t.Fatalf("%s not in the chain list", caip)
		return false
	}
	type quote struct{ id, chain, symbol, deposit, amount string }
	newPayment := func(order string) (string, []quote) {
		t.Helper()
		p := apiJSON(t, srv.base, key, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": 1234, "currency": "USD", "orderId": "`+order+`"}`)["payment"].(map[string]any)
		var qs []quote
		for _, q := range p["quotes"].([]any) {
			q := q.(map[string]any)
			tok := q["token"].(map[string]any)
			qs = append(qs, quote{q["id"].(string), tok["chain"].(map[string]any)["chainId"].(string), tok["symbol"].(string),
				q["depositAddress"].(map[string]any)["address"].(string), q["expectedAmountAsset"].(string)})
		}
		return p["id"].(string), qs
	}
	quotedOn := func(qs []quote, caip string) *quote {
		for i := range qs {
			if qs[i].chain == caip {
				return &qs[i]
			}
		}
		return nil
	}
	waitFor := func(what string, timeout time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, timeout)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	status := func(id string) string {
		return apiJSON(t, srv.base, key, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")["status"].(string)
	}
	metric := func(line string) bool { return strings.Contains(string(getBody("/metrics")), line) }

	// 1. Both URLs refuse connections.
	if st := readyChain(sepolia)["state"]; st != "down" {
		t.Fatalf("readyz: %s is %v, want down", sepolia, st)
	}
	if st := readyChain("eip155:1337")["state"]; st != "up" {
		t.Fatalf("readyz: the devnet is %v, want up", st)
	}
	if enabled(sepolia) || !enabled("eip155:1337") {
		t.Fatal("the chain list should read isEnabled false for the dead chain only")
	}
	if !metric(`paymentsd_chain_up{chain="eip155:84532"} 0`) || !metric(`paymentsd_chain_up{chain="eip155:1337"} 1`) {
		t.Fatal("paymentsd_chain_up should be 0 for the dead chain, 1 for the devnet")
	}
	id1, qs := newPayment("outage-1")
	if quotedOn(qs, sepolia) != nil || quotedOn(qs, "eip155:1337") == nil {
		t.Fatalf("quoted on the devnet only while %s is down: %+v", sepolia, qs)
	}
	pay := exec.Command(bin, "devnet", "pay", "--payment", id1, "--rpc", "http://"+devAddr, "--account", "3")
	pay.Env = append(daemonEnv(db), "PAYMENTS_DEVNET="+devAddr)
	if b, err := pay.CombinedOutput(); err != nil {
		t.Fatalf("devnet pay: %v\n%s", err, b)
	}
	waitFor("the devnet payment completes", 60*time.Second, func() bool { return status(id1) == "completed" })
	w := apiJSON(t, srv.base, key, http.MethodPost, "/v1/external/secretkey-auth/withdrawals",
		`{"amountInCents": 500, "chainId": "eip155:1337", "recipientAddress": "0x5f2c6f0d9c4e0b7a3e1d2c4b6a8f9e0d1c2b3a4f"}`)
	waitFor("the devnet withdrawal is paid", 60*time.Second, func() bool {
		return apiJSON(t, srv.base, key, http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+w["id"].(string), "")["status"] == "completed"
	})

	// 2. The second URL answers; the first stays dead.
	second, err := chaintest.NewFlakyProxyAt(other, secondAddr)
	if err != nil {
		t.Fatal(err)
	}
	second.AnswerChainID(84532)
	up := time.Now()
	waitFor("the chain is quoted again", 30*time.Second, func() bool { return enabled(sepolia) })
	t.Logf("%s served again %s after its RPC came up", sepolia, time.Since(up).Round(time.Millisecond))
	if st := readyChain(sepolia)["state"]; st != "degraded" {
		t.Errorf("readyz: %s answering through its second URL is %v, want degraded", sepolia, st)
	}
	idB, qs := newPayment("outage-2")
	q := quotedOn(qs, sepolia)
	if q == nil {
		t.Fatalf("not quoted on %s once it answers: %+v", sepolia, qs)
	}
	for _, x := range qs {
		if x.chain == sepolia && x.symbol == "ETH" {
			q = &x
		}
	}
	if q.symbol != "ETH" {
		t.Fatalf("no ETH quote on %s: %+v", sepolia, qs)
	}

	// 3. Down again with payment B open; B is paid on the chain meanwhile.
	second.Close()
	waitFor("the chain is no longer quoted", 30*time.Second, func() bool { return !enabled(sepolia) })
	if _, qs := newPayment("outage-3"); quotedOn(qs, sepolia) != nil {
		t.Fatalf("quoted on %s while it is down: %+v", sepolia, qs)
	}
	eth, err := ethclient.Dial(other)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	payer, err := devnet.AccountKey(5)
	if err != nil {
		t.Fatal(err)
	}
	wei, ok := new(big.Int).SetString(q.amount, 10)
	if !ok {
		t.Fatalf("expectedAmountAsset %q", q.amount)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := devnet.Pay(ctx, eth, payer, "", common.HexToAddress(q.deposit), wei); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // blocks go by on the chain nobody can read
	if st := status(idB); st != "pending" {
		t.Fatalf("payment B is %s while its chain is down, want pending", st)
	}

	// 4. Both URLs answer, for another chain: nothing is read from them.
	first, err := chaintest.NewFlakyProxyAt(other, firstAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	first.AnswerChainID(10)
	second, err = chaintest.NewFlakyProxyAt(other, secondAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.AnswerChainID(10)
	waitFor("readyz says wrong_chain_id", 30*time.Second, func() bool { return readyChain(sepolia)["state"] == "wrong_chain_id" })
	time.Sleep(time.Second)
	if enabled(sepolia) || status(idB) != "pending" {
		t.Fatalf("a chain answering another chain id must stay unserved and unread (payment B %s)", status(idB))
	}

	// 5. The right chain id again: caught up.
	first.AnswerChainID(84532)
	second.AnswerChainID(84532)
	waitFor("the chain is quoted again", 30*time.Second, func() bool { return enabled(sepolia) })
	waitFor("payment B, paid during the outage, completes", 60*time.Second, func() bool { return status(idB) == "completed" })
	if !metric(`paymentsd_chain_up{chain="eip155:84532"} 1`) || !metric(`paymentsd_chain_head_lag_seconds{chain="eip155:84532"}`) {
		t.Error("paymentsd_chain_up should be 1 and the head lag reported once the chain is back")
	}
	if logs, err := os.ReadFile(srv.logPath); err != nil || strings.Contains(string(logs), "FIRSTSECRET") {
		t.Error("an RPC URL's secret reached the log")
	}
}
