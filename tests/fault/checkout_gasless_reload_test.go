package fault

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/devnet"
)

// A signed payment still waiting to be relayed survives a reload of the checkout (review of
// issue 24: the reloaded page offered the wallet buttons again, and a second signature was
// relayed too). The hot wallet holds no ETH, so the customer's authorization stays accepted:
// the reloaded page shows no wallet button and says the signed payment is waiting; once the hot
// wallet is funded the relay goes out and the payment completes, the wallet having signed once.
func TestGaslessInFlightAfterReloadInChromium(t *testing.T) {
	ctx := browser(t)
	hotKey, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	d := newServedDevnet(t, false, "PAYMENTS_HOT_WALLET_KEY="+common.Bytes2Hex(crypto.FromECDSA(hotKey)))
	srv, eth, rpc := d.srv, d.eth, d.rpc
	bg := context.Background()
	id, secret, payURL, q := d.payment(t, 1850, "gasless-reload", "USDC")
	quoteID, amount := q.id, q.amount

	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	payer := crypto.PubkeyToAddress(key.PublicKey)
	fundUSDC(t, eth, payer, mustBig(t, amount), mustBig(t, amount))

	w := newTestWallet(key, devnet.ChainID)
	w.rpc = map[int64]string{devnet.ChainID: rpc}
	tctx := walletTab(t, ctx, w)
	if err := chromedp.Do(tctx, chromedp.Navigate(payURL), chromedp.WaitVisible(chromedp.CSS(`input[value="`+quoteID+`"]`)),
		chromedp.Click(chromedp.CSS(`input[value="`+quoteID+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the gasless button", `[...document.querySelectorAll("#wallet-buttons button")].some(b => b.textContent === "Pay with Go Test Wallet without gas")`, 15*time.Second)
	ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`(() => { const b = [...document.querySelectorAll("#wallet-buttons button")].find(b => b.textContent.endsWith("without gas")); if (!b) return false; b.click(); return true; })()`))
	if err != nil || !ok {
		t.Fatalf("click the gasless button: %v (found %v)", err, ok)
	}
	gasless := func() map[string]any {
		g, _ := checkoutView(t, srv.base, id, secret)["gaslessPayment"].(map[string]any)
		return g
	}
	for deadline := time.Now().Add(30 * time.Second); gasless() == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the signed payment was not posted")
		}
	}
	time.Sleep(time.Second) // a few payout rounds: the relay waits for the hot wallet's gas
	if g := gasless(); g["status"] != "accepted" {
		t.Fatalf("the signed payment is %v, want accepted (the hot wallet holds no ETH)", g["status"])
	}

	// Reloaded: no wallet button at all (past the wallets' discovery), the waiting said.
	if err := chromedp.Do(tctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the signed payment said waiting", `document.getElementById("wallet-status").textContent === "Your signed payment is waiting to be sent to the network, with the fee paid for you. No need to sign again."`, 15*time.Second)
	time.Sleep(time.Second)
	waitJS(t, tctx, "no wallet button", `document.getElementById("wallet-pay").hidden && document.querySelectorAll("#wallet-buttons button").length === 0`, time.Second)

	// The hot wallet funded: relayed, paid; one signature in all.
	funder, err := devnet.AccountKey(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devnet.Pay(bg, eth, funder, "", crypto.PubkeyToAddress(hotKey.PublicKey), big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 60*time.Second)
	if n := len(w.signatures()); n != 1 {
		t.Fatalf("the wallet signed %d times, want once", n)
	}
	if v := cspViolations(tctx); len(v) > 0 {
		t.Fatalf("CSP violations: %v", v)
	}
}
