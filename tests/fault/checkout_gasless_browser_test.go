package fault

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/devnet"
)

// USDC without gas on the hosted checkout (issue 24), in a real Chromium against a real
// paymentsd on the devnet, with the test wallet answering eth_signTypedData_v4 (go-ethereum's
// apitypes, as any wallet hashes EIP-712) for an account that holds USDC and no ETH at all:
//   - the USDC quote offers "Pay with Go Test Wallet without gas" and says, before anything is
//     signed, that the merchant pays the network fee;
//   - a declined signature is said so, nothing is posted, the QR code stays;
//   - one click then signs the token's TransferWithAuthorization (its own domain, the deposit
//     address, the quote's amount, the quote's expiry) — the wallet sends no transaction — and
//     the payment completes: its receipt says txIsSponsored, names the hot wallet as the sender
//     and the real gas from the chain's receipt; the payer still holds no ETH and the deposit
//     address exactly the quote. No CSP violation, nothing serious for axe-core.
func TestGaslessPaymentInChromium(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	d := newServedDevnet(t, false)
	srv, eth, rpc := d.srv, d.eth, d.rpc
	bg := context.Background()

	id, secret, payURL, q := d.payment(t, 1850, "gasless-1", "USDC")
	quoteID, deposit, amount := q.id, q.deposit, q.amount

	// The payer: a new account given twice the quote in USDC, and no ETH.
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	payer := crypto.PubkeyToAddress(key.PublicKey)
	twice := new(big.Int).Mul(mustBig(t, amount), big.NewInt(2))
	fundUSDC(t, eth, payer, twice, twice)
	usdc := func(who common.Address) *big.Int {
		b, err := devnet.TokenBalance(bg, eth, common.HexToAddress(devnet.USDCAddress), who)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noETH := func() {
		t.Helper()
		b, err := eth.BalanceAt(bg, payer, nil)
		if err != nil || b.Sign() != 0 {
			t.Fatalf("the payer holds %v wei (%v), want none", b, err)
		}
	}
	noETH()

	w := newTestWallet(key, devnet.ChainID)
	w.rpc = map[int64]string{devnet.ChainID: rpc}
	w.decline["eth_signTypedData_v4"] = true
	tctx := walletTab(t, ctx, w)

	if err := chromedp.Do(tctx, chromedp.Navigate(payURL), chromedp.WaitVisible(chromedp.CSS(`input[value="`+quoteID+`"]`)),
		chromedp.Click(chromedp.CSS(`input[value="`+quoteID+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the gasless button", `[...document.querySelectorAll("#wallet-buttons button")].some(b => b.textContent === "Pay with Go Test Wallet without gas")`, 15*time.Second)
	waitJS(t, tctx, "who pays the network fee, before signing", `(document.getElementById("wallet-gasless-note") || {}).textContent === "Without gas: no ETH needed. Corner Bakery pays the network fee; you sign exactly 18.50 USDC."`, 5*time.Second)
	shot(t, tctx, "checkout-gasless-phone-light")
	checkPage(t, tctx, axe, "checkout offering a payment without gas")
	clickGasless := func() {
		t.Helper()
		ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`(() => { const b = [...document.querySelectorAll("#wallet-buttons button")].find(b => b.textContent.endsWith("without gas")); if (!b) return false; b.click(); return true; })()`))
		if err != nil || !ok {
			t.Fatalf("click the gasless button: %v (found %v)", err, ok)
		}
	}

	// Declined: said so, nothing posted, the QR code stays.
	clickGasless()
	waitJS(t, tctx, "the declined message", `document.getElementById("wallet-error").textContent.includes("You declined the request in Go Test Wallet.")`, 15*time.Second)
	waitJS(t, tctx, "the QR code, still there", `!document.getElementById("qr").parentElement.hidden && document.getElementById("qr").naturalWidth > 0`, 10*time.Second)
	if v := checkoutView(t, srv.base, id, secret); v["status"] != "pending" || v["gaslessPayment"] != nil {
		t.Fatalf("after a declined signature: %v, %v", v["status"], v["gaslessPayment"])
	}

	// Signed: relayed by the service, paid.
	w.set(func(w *testWallet) { w.decline = map[string]bool{} })
	clickGasless()
	waitJS(t, tctx, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 60*time.Second)
	if sent := w.sentHashes(); len(sent) != 0 {
		t.Fatalf("the wallet sent transactions %v; it should only have signed", sent)
	}
	signed := w.signatures()
	if len(signed) != 1 || signed[0].PrimaryType != "TransferWithAuthorization" || signed[0].Domain.Name != "USD Coin (devnet)" ||
		signed[0].Domain.Version != "2" || !strings.EqualFold(signed[0].Domain.VerifyingContract, devnet.USDCAddress) {
		t.Fatalf("the wallet signed %+v", signed)
	}
	msg := signed[0].Message
	if !strings.EqualFold(msg["to"].(string), deposit) || msg["value"] != amount || msg["validAfter"] != "0" {
		t.Fatalf("the signed message: %v (deposit %s, amount %s)", msg, deposit, amount)
	}
	p := apiJSON(t, srv.base, d.key, http.MethodGet, "/v1/external/secretkey-auth/payments/"+id, "")
	receipt := p["receipt"].(map[string]any)
	hot := strings.ToLower(devnet.AccountAddress(devnet.HotWalletAccount).Hex())
	if p["status"] != "completed" || receipt["txIsSponsored"] != true || receipt["txSenderAddress"] != hot {
		t.Fatalf("payment %v: sponsored %v, sender %v (the hot wallet is %s)", p["status"], receipt["txIsSponsored"], receipt["txSenderAddress"], hot)
	}
	rc, err := eth.TransactionReceipt(bg, common.HexToHash(receipt["txHash"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if got := receipt["txGasUsed"].(float64); uint64(got) != rc.GasUsed {
		t.Fatalf("receipt txGasUsed %v, the chain's %d", got, rc.GasUsed)
	}
	if cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice); receipt["txTotalCost"] != cost.String() {
		t.Fatalf("receipt txTotalCost %v, the chain's %s", receipt["txTotalCost"], cost)
	}
	noETH()
	if got := usdc(common.HexToAddress(deposit)); got.String() != amount {
		t.Fatalf("the deposit address holds %s USDC units, want exactly %s", got, amount)
	}
	if got := usdc(payer); got.String() != mustBig(t, amount).String() {
		t.Fatalf("the payer holds %s USDC units, want %s left", got, amount)
	}
	if v := cspViolations(tctx); len(v) > 0 {
		t.Fatalf("CSP violations: %v", v)
	}
}
