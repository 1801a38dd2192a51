package fault

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/pricing"
)

// The chaos of TestPayoutBatchSurvivesRandomKills.
const (
	batchKills        = 3                      // kill -9s of the server while the batch is paid
	batchFirstWave    = 8                      // withdrawals created before the first kill…
	batchWave         = 4                      // …and after each restart, while the new process waits for the payout lease
	batchKillMin      = 50 * time.Millisecond  // a kill comes this long at least…
	batchKillSpread   = 600 * time.Millisecond // …plus up to this much after the process started paying
	batchCompleteWait = 90 * time.Second       // from the last restart until every withdrawal is completed
	batchSeedEnv      = "PAYOUT_CHAOS_SEED"    // replays a run: the seed the test logs
)

// batchMerchant is a merchant whose withdrawal configuration pays in one token on the devnet.
type batchMerchant struct {
	token string // symbol
	key   string // secret key
}

// batchWithdrawal is one withdrawal of the batch, as asked for.
type batchWithdrawal struct {
	id     string
	token  string // symbol of the merchant's configured token
	key    string // the merchant's secret key
	cents  int64
	to     common.Address
	idem   string
	status string
	rec    map[string]any // the receipt, once completed
}

// kill -9 of the real binary at random moments while a batch of withdrawals in USDC, USDT and
// native ETH is being paid on the devnet, a restart after each kill; then every withdrawal is
// completed and the chain itself is counted: each recipient holds exactly its withdrawal's
// amount (not zero, not twice) in the right token, each receipt names a mined transaction of the
// hot wallet that pays that recipient, the hot wallet sent exactly one transaction per
// withdrawal, and its outflow is exactly the sum paid (plus the gas of those transactions).
//
// The kills land after the restarted process has taken the chain's payout lease (a process
// killed with -9 keeps it until it expires, about 15 s later; until then the new process pays
// nothing), at a random 50-650 ms into its work: on the devnet (a block every 200 ms, two
// confirmations) a wave is signed, sent, mined and settled in about half a second. New
// withdrawals are created while each new process waits for the lease, so a kill finds signing,
// broadcasting, confirming or settling under way. Three kills, not more: each costs a lease
// expiry.
// The seed is logged; PAYOUT_CHAOS_SEED=<seed> replays the same amounts, tokens and kill delays.
func TestPayoutBatchSurvivesRandomKills(t *testing.T) {
	seed := mrand.Uint64()
	if s := os.Getenv(batchSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", batchSeedEnv, s, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, batchSeedEnv, seed)
	for i, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			runPayoutBatch(t, backend, mrand.New(mrand.NewPCG(seed, uint64(i))))
		})
	}
}

func runPayoutBatch(t *testing.T, backend string, rng *mrand.Rand) {
	bin := paymentsdBinary(t)
	began := time.Now()          // after the one build of the binary
	db := testdb.URL(t, backend) // a fresh SQLite file, or a fresh database (skipped without DATABASE_URL)
	rpc := startDevnet(t, bin, db, "200ms")
	eth, err := ethclient.Dial(rpc)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	ctx := context.Background()

	hot := devnet.AccountAddress(devnet.HotWalletAccount)
	usdc, usdt := common.HexToAddress(devnet.USDCAddress), common.HexToAddress(devnet.USDTAddress)
	balances := func(who common.Address) map[string]*big.Int {
		t.Helper()
		b := map[string]*big.Int{}
		var err error
		if b["ETH"], err = eth.BalanceAt(ctx, who, nil); err != nil {
			t.Fatal(err)
		}
		if b["USDC"], err = chain.ERC20Balance(ctx, eth, usdc, who); err != nil {
			t.Fatal(err)
		}
		if b["USDT"], err = chain.ERC20Balance(ctx, eth, usdt, who); err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Nothing but the service's payout manager signs with the devnet hot wallet (account 9; the
	// devnet deploys its tokens from another account, payers use accounts 0-8), and nothing is
	// paid into a deposit address on chain here (the balances come from `payments settle`), so
	// nothing is swept to the hot wallet and no gas top-up leaves it: its nonce and balances move
	// only by the payouts of this test.
	hotBefore := balances(hot)
	nonceBefore, err := eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}

	chainEnv := []string{"PAYMENTS_RPC_URLS=eip155:1337=" + rpc, "PAYMENTS_DEVNET=off", "PAYMENTS_SERVE_UNWATCHED=false",
		"PAYMENTS_WATCH_INTERVAL=100ms", "PAYMENTS_PAYOUT_BUMP_AFTER=2s"}
	// One merchant per token: a withdrawal pays in the token of its merchant's configuration.
	var merchants []batchMerchant
	for _, token := range []string{"USDC", "USDT", "ETH"} {
		created := createMerchant(t, bin, db, chainEnv, "Batch "+token, "--withdrawals")
		var cfg struct {
			Token  string   `json:"token"`
			Chains []string `json:"chains"`
		}
		out := runCLIEnv(t, bin, db, chainEnv, "merchants", "withdrawal-config", "--merchant", created.MerchantID,
			"--token", token, "--chains", "eip155:1337")
		if err := json.Unmarshal(out, &cfg); err != nil || cfg.Token != token || !slices.Equal(cfg.Chains, []string{"eip155:1337"}) {
			t.Fatalf("merchants withdrawal-config: %v: %s", err, out)
		}
		merchants = append(merchants, batchMerchant{token: token, key: created.SecretKey})
	}

	srv := newServer(t, bin, db)
	srv.env = chainEnv
	srv.start()
	// A balance for each: a $100 payment settled by the operator.
	for i, m := range merchants {
		p := apiJSON(t, srv.base, m.key, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": 10000, "currency": "USD", "orderId": "fund-`+m.token+`"}`)["payment"].(map[string]any)
		runCLIEnv(t, bin, db, chainEnv, "payments", "settle", "--payment", p["id"].(string),
			"--tx-hash", fmt.Sprintf("0x%064x", 0xfd00+i))
	}

	// The batch: 7 USDC, 7 USDT and 6 ETH withdrawals of $1.00-$3.00 in a random order, each to a
	// fresh address.
	var plan []string
	for i := range 20 {
		plan = append(plan, merchants[i%3].token)
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	var batch []*batchWithdrawal
	create := func(n int) {
		t.Helper()
		for range n {
			if len(batch) == len(plan) {
				return
			}
			w := &batchWithdrawal{token: plan[len(batch)], cents: 100 + rng.Int64N(201), idem: "batch-" + randHex(12)}
			_, _ = rand.Read(w.to[:])
			for _, m := range merchants {
				if m.token == w.token {
					w.key = m.key
				}
			}
			body := `{"amountInCents": ` + strconv.FormatInt(w.cents, 10) + `, "chainId": "eip155:1337", "recipientAddress": "` +
				strings.ToLower(w.to.Hex()) + `", "orderId": "batch-` + strconv.Itoa(len(batch)) + `"}`
			got := postWithdrawal(t, srv.base, w.key, w.idem, body)
			w.id = got["id"].(string)
			batch = append(batch, w)
		}
	}

	// The chaos: kill -9 at a random moment after the process has started paying, restart, and
	// give the new process more withdrawals while it waits for the lease.
	created := time.Now()
	create(batchFirstWave)
	t.Logf("%s: %d withdrawals created in %s", backend, len(batch), time.Since(created).Round(time.Millisecond))
	for k := 1; k <= batchKills; k++ {
		leaseAt := waitPayoutLease(t, srv, 30*time.Second)
		delay := batchKillMin + time.Duration(rng.Int64N(int64(batchKillSpread)))
		time.Sleep(delay - time.Since(leaseAt))
		signed, paid := countLog(t, srv.logPath, "payout signed and stored"), countLog(t, srv.logPath, "withdrawal paid")
		srv.kill9()
		t.Logf("%s: kill %d at %s into paying (so far %d payouts signed, %d withdrawals paid, of %d created)",
			backend, k, time.Since(leaseAt).Round(time.Millisecond), signed, paid, len(batch))
		srv.start()
		create(batchWave)
	}
	if len(batch) != len(plan) {
		create(len(plan) - len(batch))
	}
	lastStart := time.Now()
	leaseAt := waitPayoutLease(t, srv, 30*time.Second)
	t.Logf("%s: after the last kill the new process took the payout lease in %s", backend, leaseAt.Sub(lastStart).Round(time.Millisecond))

	// Every withdrawal completes.
	deadline := lastStart.Add(batchCompleteWait)
	for {
		if !srv.running() {
			t.Fatalf("paymentsd exited while the test waited for the withdrawals (not killed by the test: %v)", srv.waitErr)
		}
		var open []string
		for i, w := range batch {
			if w.status == "completed" {
				continue
			}
			got := apiJSON(t, srv.base, w.key, http.MethodGet, "/v1/external/secretkey-auth/withdrawals/"+w.id, "")
			w.status, _ = got["status"].(string)
			switch w.status {
			case "completed":
				w.rec, _ = got["receipt"].(map[string]any)
				if w.rec == nil {
					t.Fatalf("withdrawal %d (%s) is completed without a receipt: %v", i, w.id, got)
				}
			case "failed", "cancelled":
				t.Fatalf("withdrawal %d (%s, %d cents of %s) %s: %v", i, w.id, w.cents, w.token, w.status, got["errorMessage"])
			default:
				open = append(open, fmt.Sprintf("%d %s: %s", i, w.id, w.status))
			}
		}
		if len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d withdrawal(s) not completed %s after the last restart:\n%s", len(open), batchCompleteWait, strings.Join(open, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s: all %d withdrawals completed %s after the last restart (%s after the batch began); %d fee bumps, %d kills",
		backend, len(batch), time.Since(lastStart).Round(time.Millisecond), time.Since(created).Round(time.Millisecond),
		countLog(t, srv.logPath, "fees bumped"), batchKills)

	// A few more blocks and payout rounds: anything sent twice would be mined by now.
	time.Sleep(time.Second)

	// The chain's own count.
	transferTopic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	sent := map[string]*big.Int{"ETH": new(big.Int), "USDC": new(big.Int), "USDT": new(big.Int)}
	gas := new(big.Int)
	nonces := map[uint64]string{}
	signer := types.LatestSignerForChainID(big.NewInt(devnet.ChainID))
	for i, w := range batch {
		r := w.rec
		tok, _ := r["settledToken"].(map[string]any)
		if tok == nil || tok["symbol"] != w.token {
			t.Errorf("withdrawal %d (%s): settled in %v, want %s", i, w.id, tok, w.token)
			continue
		}
		decimals := int(tok["decimals"].(float64))
		want := expectedUnits(t, w.cents, decimals, tok)
		if got := r["settledAmountAsset"]; got != want.String() {
			t.Errorf("withdrawal %d (%s): receipt settledAmountAsset %v, want %s (%d cents of %s)", i, w.id, got, want, w.cents, w.token)
		}
		if got, wantUSD := r["settledAmountUsd"], fmt.Sprintf("%d.%02d", w.cents/100, w.cents%100); got != wantUSD {
			t.Errorf("withdrawal %d (%s): receipt settledAmountUsd %v, want %s", i, w.id, got, wantUSD)
		}
		// The recipient holds exactly that, in that token, and nothing of the others.
		held := balances(w.to)
		for sym, b := range held {
			expect := new(big.Int)
			if sym == w.token {
				expect = want
			}
			if b.Cmp(expect) != 0 {
				t.Errorf("withdrawal %d (%s): recipient %s holds %s %s units on chain, want %s (%d cents of %s)",
					i, w.id, w.to.Hex(), b, sym, expect, w.cents, w.token)
			}
		}
		sent[w.token].Add(sent[w.token], want)

		// The receipt's transaction: mined, successful, from the hot wallet, paying this recipient.
		hash := common.HexToHash(r["txHash"].(string))
		tx, pending, err := eth.TransactionByHash(ctx, hash)
		if err != nil || pending {
			t.Errorf("withdrawal %d (%s): receipt tx %s: pending %v, %v", i, w.id, hash.Hex(), pending, err)
			continue
		}
		rc, err := eth.TransactionReceipt(ctx, hash)
		if err != nil {
			t.Errorf("withdrawal %d (%s): receipt of tx %s: %v", i, w.id, hash.Hex(), err)
			continue
		}
		from, err := types.Sender(signer, tx)
		if err != nil || from != hot {
			t.Errorf("withdrawal %d (%s): tx %s sent by %s (%v), want the hot wallet %s", i, w.id, hash.Hex(), from.Hex(), err, hot.Hex())
		}
		if prev, dup := nonces[tx.Nonce()]; dup {
			t.Errorf("withdrawals %s and %s were paid by transactions with the same nonce %d", prev, w.id, tx.Nonce())
		}
		nonces[tx.Nonce()] = w.id
		if rc.Status != types.ReceiptStatusSuccessful || rc.BlockNumber.Int64() != int64(r["txBlockNumber"].(float64)) ||
			rc.GasUsed != uint64(r["txGasUsed"].(float64)) {
			t.Errorf("withdrawal %d (%s): tx %s status %d block %d gas %d; the receipt says block %v gas %v",
				i, w.id, hash.Hex(), rc.Status, rc.BlockNumber, rc.GasUsed, r["txBlockNumber"], r["txGasUsed"])
		}
		cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
		if r["txTotalCost"] != cost.String() {
			t.Errorf("withdrawal %d (%s): receipt txTotalCost %v, the chain's %s", i, w.id, r["txTotalCost"], cost)
		}
		if !strings.EqualFold(r["txSenderAddress"].(string), hot.Hex()) {
			t.Errorf("withdrawal %d (%s): receipt txSenderAddress %v, want %s", i, w.id, r["txSenderAddress"], hot.Hex())
		}
		gas.Add(gas, cost)
		if w.token == "ETH" {
			if tx.To() == nil || *tx.To() != w.to || tx.Value().Cmp(want) != 0 {
				t.Errorf("withdrawal %d (%s): tx %s sends %s wei to %v, want %s to %s", i, w.id, hash.Hex(), tx.Value(), tx.To(), want, w.to.Hex())
			}
			continue
		}
		contract := usdc
		if w.token == "USDT" {
			contract = usdt
		}
		var transfers int
		for _, l := range rc.Logs {
			if l.Address == contract && len(l.Topics) == 3 && l.Topics[0] == transferTopic &&
				common.BytesToAddress(l.Topics[1].Bytes()) == hot && common.BytesToAddress(l.Topics[2].Bytes()) == w.to &&
				new(big.Int).SetBytes(l.Data).Cmp(want) == 0 {
				transfers++
			}
		}
		if tx.To() == nil || *tx.To() != contract || transfers != 1 {
			t.Errorf("withdrawal %d (%s): tx %s to %v has %d Transfer(hot wallet → %s, %s) logs of %s, want 1",
				i, w.id, hash.Hex(), tx.To(), transfers, w.to.Hex(), want, w.token)
		}
	}

	// The hot wallet sent one transaction per withdrawal, nothing else, nothing still pending.
	nonceAfter, err := eth.NonceAt(ctx, hot, nil)
	if err != nil {
		t.Fatal(err)
	}
	pendingNonce, err := eth.PendingNonceAt(ctx, hot)
	if err != nil {
		t.Fatal(err)
	}
	if n := nonceAfter - nonceBefore; n != uint64(len(batch)) || len(nonces) != len(batch) || pendingNonce != nonceAfter {
		t.Errorf("the hot wallet's nonce went %d → %d (pending %d): %d transactions mined, %d distinct nonces in the receipts; want %d each, none pending",
			nonceBefore, nonceAfter, pendingNonce, n, len(nonces), len(batch))
	}
	for n := nonceBefore; n < nonceBefore+uint64(len(batch)); n++ {
		if _, ok := nonces[n]; !ok {
			t.Errorf("no withdrawal's receipt names the hot wallet's transaction of nonce %d", n)
		}
	}
	// Its outflow is exactly the sum paid: per token, and in ETH the value sent plus the gas of
	// those transactions.
	hotAfter := balances(hot)
	for sym, paid := range sent {
		out := new(big.Int).Sub(hotBefore[sym], hotAfter[sym])
		want := new(big.Int).Set(paid)
		if sym == "ETH" {
			want.Add(want, gas)
		}
		if out.Cmp(want) != 0 {
			t.Errorf("the hot wallet's %s outflow is %s units; the withdrawals paid %s (ETH: plus %s wei of gas), so want %s",
				sym, out, paid, gas, want)
		}
	}
	t.Logf("%s: paid %s USDC units, %s USDT units, %s wei (+%s wei gas) in %d transactions; %s in all",
		backend, sent["USDC"], sent["USDT"], sent["ETH"], gas, nonceAfter-nonceBefore, time.Since(began).Round(time.Millisecond))
}

// expectedUnits converts cents to the token's smallest unit as the service promises: stablecoins
// at 1.00, others at the static development price (PAYMENTS_PRICING=static), rounded down.
func expectedUnits(t *testing.T, cents int64, decimals int, tok map[string]any) *big.Int {
	t.Helper()
	price := big.NewRat(1, 1)
	if tok["type"] != "stablecoin" {
		p, ok := pricing.DefaultStatic()[fmt.Sprint(tok["marketApiId"])]
		if !ok {
			t.Fatalf("no static price for %v", tok["marketApiId"])
		}
		if _, ok := price.SetString(p.String()); !ok {
			t.Fatalf("static price %s", p)
		}
	}
	num := new(big.Int).Mul(big.NewInt(cents), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	q := new(big.Rat).Quo(new(big.Rat).SetInt(num), new(big.Rat).Mul(price, big.NewRat(100, 1)))
	return new(big.Int).Quo(q.Num(), q.Denom())
}

// postWithdrawal creates a withdrawal with an Idempotency-Key; anything but 201 ends the test.
func postWithdrawal(t *testing.T, base, key, idem, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/external/secretkey-auth/withdrawals", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Service-Secret-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || res.StatusCode != http.StatusCreated || out["id"] == nil {
		t.Fatalf("POST withdrawal %s: %d %s %v", body, res.StatusCode, b, err)
	}
	return out
}

// waitPayoutLease waits until the running process holds the devnet's payout lease, i.e. has run
// a payout round that was not skipped: its /metrics then has the chain's waiting gauge, which
// only such a round sets. It returns when it saw that.
func waitPayoutLease(t *testing.T, s *server, timeout time.Duration) time.Time {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !s.running() {
			t.Fatalf("paymentsd exited while the test waited for it to take the payout lease (not killed by the test: %v)\n%s",
				s.waitErr, logTail(s.logPath))
		}
		if res, err := client.Get(s.base + "/metrics"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if bytes.Contains(b, []byte(`paymentsd_payout_withdrawals_waiting{chain="eip155:1337"}`)) {
				return time.Now()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server did not take the payout lease within %s\n%s", timeout, logTail(s.logPath))
	return time.Time{}
}

// countLog counts the log lines holding text.
func countLog(t *testing.T, path, text string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if strings.Contains(sc.Text(), text) {
			n++
		}
	}
	return n
}
