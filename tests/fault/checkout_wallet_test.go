package fault

import (
	"context"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/devnet"
)

// Paying from a browser wallet on the hosted checkout (issue 24), in a real Chromium against a
// real paymentsd serving the two devnet chains, with the test wallet (an EIP-1193 provider
// announced by EIP-6963, answered in Go with a devnet key, sending through the devnet's RPC):
//   - one click pays the native quote from a wallet on the other devnet chain: the page switches
//     it, the payment completes, its receipt names the wallet's transaction and processedBy
//     frontend, and the deposit address holds exactly the quote's amount on chain;
//   - one click pays the USDC quote from a wallet that does not know the chain: the page adds it
//     (wallet_addEthereumChain with the view's walletNetworks) and pays transfer(deposit, amount);
//   - the page's report races the watcher: reported again from the page, the hash answers its one
//     transfer, and the payment settled the quote's amount once;
//   - a forged report from another payment's page (a real transaction that paid someone else)
//     answers no_transfer and leaves that payment pending;
//   - a declined transaction and an empty wallet each get their message; the QR code stays;
//   - a wallet that only sets window.ethereum is offered too; no CSP violation anywhere, and
//     axe-core finds nothing serious with the wallet's button and its messages on the page.
func TestWalletPaymentInChromium(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	d := newServedDevnet(t, true)
	srv, eth, rpc1, rpc2 := d.srv, d.eth, d.rpc, d.rpc2
	m := createdMerchant{SecretKey: d.key}
	newPayment := func(order, symbol string) (id, secret, payURL string, q devnetQuote) {
		return d.payment(t, 1850, order, symbol)
	}
	tab := func(w *testWallet) context.Context { return walletTab(t, ctx, w) }
	open := func(tctx context.Context, payURL, quoteID string) {
		t.Helper()
		if err := chromedp.Do(tctx, chromedp.Navigate(payURL), chromedp.WaitVisible(chromedp.CSS(`input[value="`+quoteID+`"]`)),
			chromedp.Click(chromedp.CSS(`input[value="`+quoteID+`"]`))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tctx, "the wallet button", `[...document.querySelectorAll("#wallet-buttons button")].some(b => b.textContent === "Pay with Go Test Wallet")`, 15*time.Second)
	}
	payClick := func(tctx context.Context) {
		t.Helper()
		if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#wallet-buttons button"))); err != nil {
			t.Fatal(err)
		}
	}
	receiptOf := func(id string) map[string]any {
		t.Helper()
		p := apiJSON(t, srv.base, m.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
		if p["status"] != "completed" {
			t.Fatalf("payment %s is %v", id, p["status"])
		}
		return p["receipt"].(map[string]any)
	}
	noCSP := func(tctx context.Context) {
		t.Helper()
		if v := cspViolations(tctx); len(v) > 0 {
			t.Fatalf("CSP violations: %v", v)
		}
	}
	// reportFromPage posts a transaction report the way the page does, from inside the page (its
	// origin, its secret from the fragment): what a customer, or someone tampering, could send.
	reportFromPage := func(tctx context.Context, quoteID, hash string) map[string]any {
		t.Helper()
		js := `(async () => {
			const id = location.pathname.split("/").pop();
			const secret = new URLSearchParams(location.hash.slice(1)).get("secret");
			const r = await fetch("/v1/external/payment-secret-auth/payments/" + id + "/transactions", {method: "POST",
				headers: {"X-Service-Payment-Secret": secret, "Content-Type": "application/json"},
				body: JSON.stringify({quoteId: ` + strconv.Quote(quoteID) + `, txHash: ` + strconv.Quote(hash) + `})});
			return {code: r.status, body: await r.json()};
		})()`
		out, err := chromedp.Run(tctx, chromedp.Evaluate[map[string]any](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("report from the page: %v", err)
		}
		return out
	}
	keyOf := func(account int) *testWallet {
		key, err := devnet.AccountKey(account)
		if err != nil {
			t.Fatal(err)
		}
		return newTestWallet(key, devnet.L2ChainID)
	}

	// Native ETH, the wallet on the other devnet chain: switched, then paid in one click.
	w1 := keyOf(7)
	w1.rpc = map[int64]string{devnet.ChainID: rpc1, devnet.L2ChainID: rpc2}
	t1 := tab(w1)
	id1, _, url1, q1 := newPayment("bread-1", "ETH")
	open(t1, url1, q1.id)
	waitJS(t, t1, "the wallet's icon", `(document.querySelector("#wallet-buttons img") || {}).src?.startsWith("data:image/svg+xml") === true`, 5*time.Second)
	shot(t, t1, "checkout-wallet-phone-light")
	checkPage(t, t1, axe, "checkout with a wallet button")
	payClick(t1)
	waitJS(t, t1, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 60*time.Second)
	sent := w1.sentHashes()
	if len(sent) != 1 {
		t.Fatalf("the wallet sent %d transactions, want 1", len(sent))
	}
	var on int64
	w1.set(func(w *testWallet) { on = w.chainID })
	if on != devnet.ChainID {
		t.Fatalf("the wallet is on chain %d: the page did not switch it", on)
	}
	r1 := receiptOf(id1)
	if r1["processedBy"] != "frontend" || r1["txHash"] != sent[0] {
		t.Fatalf("receipt: processedBy %v, txHash %v; the wallet sent %s", r1["processedBy"], r1["txHash"], sent[0])
	}
	bal, err := eth.BalanceAt(context.Background(), common.HexToAddress(q1.deposit), nil)
	if err != nil || bal.String() != q1.amount {
		t.Fatalf("the deposit address holds %v wei (%v), want exactly %s", bal, err, q1.amount)
	}
	// The page's report raced the watcher: one transfer all the same. Reported again from the
	// page, the same hash answers the one transfer already recorded, and the payment received the
	// quote once (it settled the quote's amount, not twice it).
	again := reportFromPage(t1, q1.id, sent[0])
	if body, _ := again["body"].(map[string]any); again["code"] != float64(200) || body["status"] != "recorded" || len(body["transfers"].([]any)) != 1 {
		t.Fatalf("the hash reported again: %v", again)
	}
	if got := receiptOf(id1)["settledAmountAsset"]; got != q1.amount {
		t.Fatalf("settled %v wei, the quote is %s: the transfer counted more than once", got, q1.amount)
	}
	noCSP(t1)

	// USDC from a wallet that knows no devnet chain: added, switched, transfer(deposit, amount).
	w2 := keyOf(8)
	w2.rpc = map[int64]string{}
	w2.chainID = 1
	t2 := tab(w2)
	id2, _, url2, q2 := newPayment("bread-2", "USDC")
	open(t2, url2, q2.id)
	payClick(t2)
	waitJS(t, t2, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 60*time.Second)
	var added string
	w2.set(func(w *testWallet) { added = w.rpc[devnet.ChainID] })
	if added != rpc1 {
		t.Fatalf("the page did not add the devnet to the wallet (%q)", added)
	}
	r2 := receiptOf(id2)
	if sent := w2.sentHashes(); r2["processedBy"] != "frontend" || len(sent) != 1 || r2["txHash"] != sent[0] {
		t.Fatalf("receipt: processedBy %v, txHash %v; the wallet sent %v", r2["processedBy"], r2["txHash"], sent)
	}
	got, err := devnet.TokenBalance(context.Background(), eth, common.HexToAddress(devnet.USDCAddress), common.HexToAddress(q2.deposit))
	if err != nil || got.String() != q2.amount {
		t.Fatalf("the deposit address holds %v USDC units (%v), want exactly %s", got, err, q2.amount)
	}
	noCSP(t2)

	// Declined in the wallet: said so, nothing sent, the QR code stays; then paid after all.
	w3 := keyOf(9)
	w3.rpc = map[int64]string{devnet.ChainID: rpc1}
	w3.chainID = devnet.ChainID
	w3.decline["eth_sendTransaction"] = true
	t3 := tab(w3)
	id3, secret3, url3, q3 := newPayment("bread-3", "USDC")
	open(t3, url3, q3.id)
	payClick(t3)
	waitJS(t, t3, "the declined message", `document.getElementById("wallet-error").textContent.includes("You declined the request in Go Test Wallet. Nothing was sent")`, 15*time.Second)
	waitJS(t, t3, "the QR code, still there", `(() => { const i = document.getElementById("qr"); return !document.getElementById("pay").hidden && !i.parentElement.hidden && i.naturalWidth > 0; })()`, 10*time.Second)
	shot(t, t3, "checkout-wallet-declined-phone-light")
	checkPage(t, t3, axe, "checkout after a declined request")
	if v := checkoutView(t, srv.base, id3, secret3); v["status"] != "pending" || len(w3.sentHashes()) != 0 {
		t.Fatalf("after a declined request: %v, sent %v", v["status"], w3.sentHashes())
	}
	w3.set(func(w *testWallet) { w.decline = map[string]bool{} })
	payClick(t3)
	waitJS(t, t3, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 60*time.Second)
	if receiptOf(id3)["processedBy"] != "frontend" {
		t.Fatal("the retried payment's receipt does not say frontend")
	}
	noCSP(t3)

	// An empty wallet: the balance it holds and the amount due, nothing sent; the QR code stays.
	empty, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	w4 := newTestWallet(empty, devnet.ChainID)
	w4.rpc = map[int64]string{devnet.ChainID: rpc1}
	t4 := tab(w4)
	id4, secret4, url4, q4 := newPayment("bread-4", "USDC")
	open(t4, url4, q4.id)
	payClick(t4)
	// Written as the page writes amounts: trailing zeros trimmed down to two decimals.
	due := new(big.Rat).SetFrac(mustBig(t, q4.amount), big.NewInt(1_000_000)).FloatString(6)
	for strings.HasSuffix(due, "0") && len(due)-strings.Index(due, ".") > 3 {
		due = strings.TrimSuffix(due, "0")
	}
	waitJS(t, t4, "the balance message", `document.getElementById("wallet-error").textContent.includes(`+
		strconv.Quote("Your wallet holds 0.00 USDC on Devnet; this payment needs "+due+" USDC. Nothing was sent.")+`)`, 15*time.Second)
	waitJS(t, t4, "the QR code, still there", `!document.getElementById("qr").parentElement.hidden && document.getElementById("qr").naturalWidth > 0`, 10*time.Second)
	if v := checkoutView(t, srv.base, id4, secret4); v["status"] != "pending" || len(w4.sentHashes()) != 0 {
		t.Fatalf("after an empty wallet: %v, sent %v", v["status"], w4.sentHashes())
	}
	// A forged report: the hash of a real transaction that paid another address (the first
	// payment's) posted from this payment's page changes nothing.
	forged := reportFromPage(t4, q4.id, sent[0])
	if body, _ := forged["body"].(map[string]any); forged["code"] != float64(200) || body["status"] != "no_transfer" || len(body["transfers"].([]any)) != 0 {
		t.Fatalf("a forged report: %v", forged)
	}
	if v := checkoutView(t, srv.base, id4, secret4); v["status"] != "pending" {
		t.Fatalf("after a forged report the payment is %v", v["status"])
	}
	noCSP(t4)

	// A wallet that only sets window.ethereum is offered as well.
	w5 := keyOf(9)
	w5.legacy = true
	t5 := tab(w5)
	_, _, url5, q5 := newPayment("bread-5", "USDC")
	if err := chromedp.Do(t5, chromedp.Navigate(url5), chromedp.WaitVisible(chromedp.CSS(`input[value="`+q5.id+`"]`)),
		chromedp.Click(chromedp.CSS(`input[value="`+q5.id+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, t5, "the legacy wallet's button", `[...document.querySelectorAll("#wallet-buttons button")].some(b => b.textContent === "Pay with browser wallet")`, 15*time.Second)
	noCSP(t5)
}

func mustBig(t *testing.T, s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}
