package fault

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/devnet"
)

// The refund claim page (checkout.RefundPageHTML and its assets, under checkout.RefundPageCSP)
// in a real Chromium against a stand-in of the refund-claim API that checks what the real one
// checks: the secret header, and an EIP-712 signature recovering (go-ethereum apitypes) to an
// address that paid. It needs no backend, so the page's own behaviour is pinned down:
//   - a wrong secret: a clear message;
//   - no wallet on the device: said so; a mistyped address refused on the page; a typed address
//     claimed without a signature, told it waits for the merchant's approval;
//   - an EIP-6963 wallet (Go signing with a devnet key): declined signature and wrong network
//     (the wallet cannot switch) each get their message; then the page switches the wallet's
//     network, signs the documented typed data with the connected address as recipient, and
//     the claim is accepted;
//   - a wallet that did not pay: told so, Sign stays off;
//   - a wallet that only sets window.ethereum is offered too.
//
// axe-core and the CSP are checked at each step, at phone width.
func TestRefundClaimPageInChromium(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	site := newClaimSite(t)
	payerKey, payer, api := site.payerKey, site.payer, site.api
	otherKey, err := devnet.AccountKey(6)
	if err != nil {
		t.Fatal(err)
	}

	tab := func(w *testWallet) chromedpCtx {
		tctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		failOnDialogs(t, tctx)
		watchCSP(t, tctx)
		if w != nil {
			injectWallet(t, tctx, w)
		}
		tctx, cancel2 := within(tctx, 90*time.Second)
		t.Cleanup(cancel2)
		// Not a mobile viewport: one would widen the layout to fit the content, hiding overflow.
		if err := viewport(tctx, 390, 844, false, "light"); err != nil {
			t.Fatal(err)
		}
		return tctx
	}
	visit := func(tctx chromedpCtx, refund, secret string) { site.visit(t, tctx, refund, "", secret) }

	// A wrong secret.
	plain := tab(nil)
	r1 := api.add(false)
	visit(plain, r1, "rcs_wrong")
	waitText(t, plain, "This refund link is not valid", 10*time.Second)
	checkPage(t, plain, axe, "claim page, wrong secret")

	// No wallet: the typed address, checked on the page first.
	visit(plain, r1, api.secret(r1))
	waitText(t, plain, "1.50 USDC", 10*time.Second) // 1500000 at 6 decimals, written as a price
	waitText(t, plain, "No browser wallet was found", 5*time.Second)
	noWide(t, plain, "claim page")
	checkPage(t, plain, axe, "claim page without a wallet")
	fill(t, plain, "Address to receive the refund", "0x1234")
	press(t, plain, "button", "Claim to this address")
	waitText(t, plain, "0x followed by 40 hexadecimal characters", 5*time.Second)
	const typed = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65"
	fill(t, plain, "Address to receive the refund", typed)
	press(t, plain, "button", "Claim to this address")
	waitText(t, plain, "approves the refund", 10*time.Second)
	checkPage(t, plain, axe, "claim page after a typed claim")
	if c := api.claimOf(r1); c.Recipient != typed || c.Source != "typed_address" {
		t.Fatalf("the typed claim reached the API as %+v", c)
	}

	// An EIP-6963 wallet that paid, on another network and unable to switch at first.
	w := newTestWallet(payerKey, 1)
	w.set(func(w *testWallet) { w.switchable = false; w.decline["eth_signTypedData_v4"] = true })
	wt := tab(w)
	r2 := api.add(false)
	visit(wt, r2, api.secret(r2))
	press(t, wt, "button", "Connect Go Test Wallet")
	waitText(t, wt, payer, 10*time.Second)
	noWide(t, wt, "claim page with a wallet connected")
	checkPage(t, wt, axe, "claim page with a wallet connected")
	shot(t, wt, "refund-claim-connected-phone-light")
	press(t, wt, "button", "Sign and claim the refund")
	waitText(t, wt, "Your wallet is on the wrong network (it is on chain id 1). Switch it to Devnet (chain id 1337)", 10*time.Second)
	w.set(func(w *testWallet) { w.switchable = true })
	press(t, wt, "button", "Sign and claim the refund")
	waitText(t, wt, "You declined the signature in your wallet", 10*time.Second)
	if api.claimOf(r2).Recipient != "" {
		t.Fatal("a declined signature claimed the refund")
	}
	w.set(func(w *testWallet) { w.decline = map[string]bool{} })
	press(t, wt, "button", "Sign and claim the refund")
	waitText(t, wt, "Claimed.", 10*time.Second)
	checkPage(t, wt, axe, "claim page after a signed claim")
	if c := api.claimOf(r2); c.Recipient != payer || c.Source != "payer_signature" {
		t.Fatalf("the signed claim reached the API as %+v", c)
	}
	sigs := w.signatures()
	if len(sigs) != 1 {
		t.Fatalf("the wallet signed %d times, want once", len(sigs))
	}
	if m := sigs[0].Message; sigs[0].PrimaryType != "RefundClaim" || m["refundId"] != r2 || !strings.EqualFold(m["recipient"].(string), payer) ||
		sigs[0].Domain.Name != "paymentsd refund" || sigs[0].Domain.Version != "1" {
		t.Fatalf("the wallet was asked to sign %+v", sigs[0])
	}

	// A wallet that did not pay: told so, nothing to sign.
	o := newTestWallet(otherKey, 1337)
	ot := tab(o)
	r3 := api.add(true)
	visit(ot, r3, api.secret(r3))
	press(t, ot, "button", "Connect Go Test Wallet")
	waitText(t, ot, "This wallet address did not pay this payment", 10*time.Second)
	noWide(t, ot, "claim page, a wallet that did not pay")
	waitJS(t, ot, "Sign off", `[...document.querySelectorAll("button")].find(b => b.textContent === "Sign and claim the refund").disabled`, 5*time.Second)
	if err := chromedp.Do(ot, colorScheme("dark")); err != nil {
		t.Fatal(err)
	}
	checkPage(t, ot, axe, "claim page, a wallet that did not pay (dark)")
	shot(t, ot, "refund-claim-not-payer-phone-dark")

	// A wallet that only injects window.ethereum (no EIP-6963).
	l := newTestWallet(payerKey, 1337)
	l.legacy = true
	lt := tab(l)
	visit(lt, r3, api.secret(r3))
	press(t, lt, "button", "Connect browser wallet")
	press(t, lt, "button", "Sign and claim the refund")
	waitText(t, lt, "Claimed.", 10*time.Second)
	if c := api.claimOf(r3); c.Recipient != payer || c.Source != "payer_signature" {
		t.Fatalf("the window.ethereum claim reached the API as %+v", c)
	}
}

type chromedpCtx = context.Context

func mathHexOrDecimal(n int64) *math.HexOrDecimal256 { return (*math.HexOrDecimal256)(big.NewInt(n)) }

// shot writes a full-page screenshot to $DASHBOARD_SCREENSHOTS/name.png when that is set.
func shot(t *testing.T, ctx chromedpCtx, name string) {
	t.Helper()
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noWide fails when the page is wider than the window (sideways scrolling on a phone).
func noWide(t *testing.T, ctx chromedpCtx, what string) {
	t.Helper()
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.scrollWidth <= window.innerWidth ? "" :
		[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
			.map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).slice(0, 8).join("; ")`))
	if err != nil {
		t.Fatal(err)
	}
	if wide != "" {
		t.Errorf("%s is wider than the phone: %s", what, wide)
	}
}

// fakeClaimAPI stands in for the refund-claim API: one refund view per id, its secret, and the
// claim it received.
// claimSite is the claim page served with the stand-in API, whose refunds were paid by the
// devnet's account 3 (payerKey, payer).
type claimSite struct {
	api      *fakeClaimAPI
	url      string
	payerKey *ecdsa.PrivateKey
	payer    string
}

func newClaimSite(t *testing.T) claimSite {
	t.Helper()
	key, err := devnet.AccountKey(3)
	if err != nil {
		t.Fatal(err)
	}
	payer := strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex())
	api := newFakeClaimAPI(t, 1337, payer)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return claimSite{api: api, url: srv.URL, payerKey: key, payer: payer}
}

// visit opens a refund's claim page (query: "?lang=…" or "") with secret as its fragment.
func (s claimSite) visit(t *testing.T, tctx context.Context, refund, query, secret string) {
	t.Helper()
	// about:blank first: a URL differing only in its fragment would not load the page again.
	if err := chromedp.Do(tctx, chromedp.Navigate("about:blank"), chromedp.Navigate(s.url+"/refund/"+refund+query+"#"+secret)); err != nil {
		t.Fatal(err)
	}
}

type fakeClaimAPI struct {
	t       *testing.T
	chainID int64
	payer   string
	mu      sync.Mutex
	n       int
	claims  map[string]fakeClaim
	withTD  map[string]bool // typed data with EIP712Domain stated
	i18nJS  []byte          // served as i18n.js instead of the embedded one, when set
}

type fakeClaim struct{ Recipient, Source string }

func newFakeClaimAPI(t *testing.T, chainID int64, payer string) *fakeClaimAPI {
	return &fakeClaimAPI{t: t, chainID: chainID, payer: payer, claims: map[string]fakeClaim{}, withTD: map[string]bool{}}
}

func (f *fakeClaimAPI) add(withDomainType bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	id := "01a20b10-0000-7000-8000-00000000000" + string(rune('0'+f.n))
	f.claims[id] = fakeClaim{}
	f.withTD[id] = withDomainType
	return id
}

func (f *fakeClaimAPI) secret(id string) string { return "rcs_test-" + id[len(id)-4:] }

func (f *fakeClaimAPI) claimOf(id string) fakeClaim {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claims[id]
}

func (f *fakeClaimAPI) typedData(id string, withDomainType bool) apitypes.TypedData {
	types := apitypes.Types{"RefundClaim": {{Name: "refundId", Type: "string"}, {Name: "recipient", Type: "address"}, {Name: "chainId", Type: "uint256"}}}
	if withDomainType {
		types["EIP712Domain"] = []apitypes.Type{{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}}
	}
	return apitypes.TypedData{Types: types, PrimaryType: "RefundClaim",
		Domain:  apitypes.TypedDataDomain{Name: "paymentsd refund", Version: "1", ChainId: mathHexOrDecimal(f.chainID)},
		Message: apitypes.TypedDataMessage{"refundId": id, "recipient": "0x0000000000000000000000000000000000000000", "chainId": float64(f.chainID)}} // as JSON decodes it
}

func (f *fakeClaimAPI) view(id string) map[string]any {
	c := f.claims[id]
	status, recipient := "awaiting_address", any(nil)
	if c.Recipient != "" {
		status, recipient = "pending", c.Recipient
	}
	td := f.typedData(id, f.withTD[id])
	return map[string]any{"id": id, "status": status, "merchantDisplayName": "<b>Corner</b> Bakery", "chainId": "eip155:1337", "chainName": "Devnet",
		"tokenSymbol": "USDC", "tokenDecimals": 6, "tokenAddress": "0x5fbdb2315678afecb367f032d93f642f64180aa3", "amountAsset": "1500000",
		"payerAddresses": []string{f.payer}, "recipientAddress": recipient, "claimExpiresAt": "2026-12-28T10:00:00Z",
		"typedData": map[string]any{"domain": map[string]any{"name": "paymentsd refund", "version": "1", "chainId": f.chainID},
			"types": td.Types, "primaryType": "RefundClaim", "message": td.Message}}
}

func (f *fakeClaimAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/refund/"):
		b, err := checkout.RefundPageHTML(strings.TrimPrefix(path, "/refund/"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Security-Policy", checkout.RefundPageCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
		return
	case strings.HasPrefix(path, "/pay/assets/"):
		b, typ, err := checkout.Asset(strings.TrimPrefix(path, "/pay/assets/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		if f.i18nJS != nil && path == "/pay/assets/i18n.js" {
			b = f.i18nJS
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", typ)
		_, _ = w.Write(b)
		return
	}
	rest, ok := strings.CutPrefix(path, "/v1/external/refund-claim-auth/refunds/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	id, claim := strings.CutSuffix(rest, "/claim")
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := func(status int, code, msg string) {
		answer(status, map[string]any{"error": map[string]string{"type": "invalid_request_error", "code": code, "message": msg}})
	}
	if _, known := f.claims[id]; !known || r.Header.Get("X-Service-Refund-Secret") != f.secret(id) {
		refuse(http.StatusNotFound, "refund_not_found", "No such refund.")
		return
	}
	if !claim {
		answer(http.StatusOK, f.view(id))
		return
	}
	if f.claims[id].Recipient != "" {
		refuse(http.StatusConflict, "invalid_state", "the refund is not awaiting an address")
		return
	}
	var body struct{ RecipientAddress, Signature string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		refuse(http.StatusBadRequest, "parameter_invalid", err.Error())
		return
	}
	c := fakeClaim{Recipient: strings.ToLower(body.RecipientAddress), Source: "typed_address"}
	if body.Signature != "" {
		td := f.typedData(id, true)
		td.Message["recipient"] = body.RecipientAddress
		hash, _, err := apitypes.TypedDataAndHash(td)
		sig, derr := hexutil.Decode(body.Signature)
		if err != nil || derr != nil || len(sig) != 65 {
			refuse(http.StatusBadRequest, "signature_invalid", "bad signature")
			return
		}
		if sig[64] >= 27 {
			sig[64] -= 27
		}
		pub, err := crypto.SigToPub(hash, sig)
		if err != nil || !strings.EqualFold(crypto.PubkeyToAddress(*pub).Hex(), f.payer) {
			refuse(http.StatusBadRequest, "signature_invalid", "the signature does not recover to an address that paid")
			return
		}
		c.Source = "payer_signature"
	}
	f.claims[id] = c
	answer(http.StatusOK, f.view(id))
}
