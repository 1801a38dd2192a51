package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/qrtest"
)

// chromiumPath finds the distribution's Chromium (make test installs it); CHROMIUM names
// another binary. Missing: the test is skipped locally and fails under CI.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium (make test installs the distribution's chromium)")
	}
	t.Skip("no Chromium installed (apt-get install -y chromium)")
	return ""
}

// browser starts a headless Chromium with a phone-sized window, in English (the pages choose
// their language from the browser's: the tests find elements by their English names, whatever
// the machine's locale; langTab emulates another language per tab).
func browser(t *testing.T) context.Context {
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.WindowSize(412, 915), chromedp.Flag("disable-gpu", true), chromedp.Flag("lang", "en-US"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser on a context without a deadline
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

func within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// waitJS polls a JavaScript condition until it holds.
func waitJS(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	t.Fatalf("%s: not within %s; the page says:\n%s", what, timeout, text)
}

func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// The hosted checkout in a real Chromium, from a real paymentUrl: choose a quote, its QR code
// (read back from a screenshot) is exactly the EIP-681 URI, in the smallest unit, while the page
// writes amounts for people (0.006167 ETH, 18.50 USDC); pay with the devnet's test wallet;
// the page reaches "paid" and redirects with customMetadata in the query string. A wrong secret
// gets a clear message; an expired quote is refreshed. UPDATE_SCREENSHOTS=1 also writes the
// README's screenshots (phone and desktop, light and dark) under docs/.
func TestCheckoutInChromium(t *testing.T) {
	ctx := browser(t)
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	devAddr := devnetAddr(t)
	env := []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms", "PAYMENTS_QUOTE_TTL=10s"}
	m := createMerchant(t, bin, db, env, "Corner Bakery")
	var mu sync.Mutex
	var landed []string
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/done" { // not the browser's /favicon.ico
			mu.Lock()
			landed = append(landed, r.URL.RawQuery)
			mu.Unlock()
		}
		_, _ = w.Write([]byte("<!doctype html><title>Thanks</title><p>Thanks for your order"))
	}))
	t.Cleanup(shop.Close)
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()

	created := apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 1850, "currency": "USD", "orderId": "bread-42", "redirectUrl": "`+shop.URL+`/done", "customMetadata": "{\"order\":42}"}`)
	payURL := strings.Replace(created["paymentUrl"].(string), "http://localhost:", "http://127.0.0.1:", 1)
	var quoteID, ethID, uri string
	for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
		q := q.(map[string]any)
		switch q["token"].(map[string]any)["symbol"] {
		case "USDC":
			quoteID = q["id"].(string)
			checkQuoteUnits(t, q, "1", "18500000") // whole cents already: unchanged
		case "ETH":
			ethID = q["id"].(string)
			checkQuoteUnits(t, q, "3000", "6167000000000000") // 0.0061666… rounded up to 0.006167
		}
	}
	if ethID == "" {
		t.Fatal("no ETH quote on the devnet")
	}
	view := checkoutView(t, srv.base, created["paymentId"].(string), created["secret"].(string))
	for _, q := range view["quotes"].([]any) {
		if q := q.(map[string]any); q["id"] == quoteID {
			uri = q["paymentUri"].(string)
		}
	}

	tctx, cancel := within(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(payURL), chromedp.WaitVisible(chromedp.CSS(`input[value="`+quoteID+`"]`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS(`input[value="`+quoteID+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the QR code", `(() => { const i = document.getElementById("qr"); return !document.getElementById("pay").hidden && i.complete && i.naturalWidth > 0 && i.src.startsWith("blob:"); })()`, 15*time.Second)
	png, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.CSS("#qr")))
	if err != nil {
		t.Fatal(err)
	}
	if got := qrtest.DecodePNG(t, png); got != uri {
		t.Fatalf("the page's QR code reads %q, want the quote's EIP-681 URI %q", got, uri)
	}
	for _, want := range []string{"USDC", "Send only USDC on Devnet", "valid for"} {
		waitJS(t, tctx, "the text "+want, `document.body.innerText.includes(`+strconv.Quote(want)+`)`, 5*time.Second)
	}
	checkAmountsShown(t, tctx, uri, quoteID, ethID)
	if os.Getenv("UPDATE_SCREENSHOTS") != "" {
		writeScreenshots(t, tctx)
	}

	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#devnet-pay"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "paid", `document.getElementById("status").textContent.startsWith("Paid")`, 40*time.Second)
	waitJS(t, tctx, "the redirect", `location.href.startsWith(`+strconv.Quote(shop.URL)+`)`, 15*time.Second)
	mu.Lock()
	got := strings.Join(landed, "|")
	mu.Unlock()
	if got != "customMetadata=%7B%22order%22%3A42%7D" {
		t.Fatalf("the redirect's query string: %q", got)
	}

	// A wrong secret: a clear message, nothing else.
	if err := chromedp.Do(tctx, chromedp.Navigate(strings.SplitN(payURL, "#", 2)[0]+"#secret=ps_wrong")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the wrong-secret message", `document.getElementById("error").textContent.includes("not valid")`, 10*time.Second)

	// Expired → refresh: a new quote for the same token, payable again.
	second := apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 990, "currency": "USD", "orderId": "bread-43"}`)
	var q2 string
	for _, q := range second["payment"].(map[string]any)["quotes"].([]any) {
		if q := q.(map[string]any); q["token"].(map[string]any)["symbol"] == "USDT" {
			q2 = q["id"].(string)
		}
	}
	url2 := strings.Replace(second["paymentUrl"].(string), "http://localhost:", "http://127.0.0.1:", 1)
	if err := chromedp.Do(tctx, chromedp.Navigate(url2), chromedp.WaitVisible(chromedp.CSS(`input[value="`+q2+`"]`)),
		chromedp.Click(chromedp.CSS(`input[value="`+q2+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the quote's expiry", `!document.getElementById("refresh").hidden`, 20*time.Second)
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#refresh"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "a fresh quote", `document.getElementById("refresh").hidden && document.getElementById("countdown").textContent.includes("valid for")`, 10*time.Second)
	v2 := checkoutView(t, srv.base, second["paymentId"].(string), second["secret"].(string))
	if v2["selectedQuoteId"] == q2 || v2["selectedQuoteId"] == nil {
		t.Fatalf("the selection should have moved to the fresh USDT quote: %v", v2["selectedQuoteId"])
	}
}

// checkQuoteUnits checks a quote of the $18.50 payment: the devnet's static rate, no
// convenience fee, and the exact smallest-unit amount the readable rounding makes of it.
func checkQuoteUnits(t *testing.T, q map[string]any, rate, units string) {
	t.Helper()
	if got := fmt.Sprint(q["rateUsdAsset"]); got != rate || q["amountDueCents"] != float64(1850) || q["expectedAmountAsset"] != units {
		t.Fatalf("%s quote: rate %s, due %v, amount %v; want rate %s, 1850 cents, %s",
			q["token"].(map[string]any)["symbol"], got, q["amountDueCents"], q["expectedAmountAsset"], rate, units)
	}
}

// checkAmountsShown: the page writes amounts for people (amounts.js) while the selected quote's
// URI keeps the exact smallest unit; the formatter itself, in this browser, on the cases where a
// JS number would go wrong.
func checkAmountsShown(t *testing.T, ctx context.Context, uri, usdcID, ethID string) {
	t.Helper()
	if !strings.HasSuffix(uri, "&uint256=18500000") {
		t.Fatalf("the USDC quote's EIP-681 URI %q should ask for 18500000 units", uri)
	}
	label := func(id string) string {
		return `document.querySelector('input[value="` + id + `"]').closest("label").textContent`
	}
	waitJS(t, ctx, "the quotes' amounts", label(ethID)+`.endsWith("0.006167 ETH") && `+label(usdcID)+`.endsWith("18.50 USDC")`, 5*time.Second)
	waitJS(t, ctx, "the amount to send", `document.getElementById("amount-asset").textContent === "18.50 USDC"`, 5*time.Second)
	for _, c := range []struct {
		units    string
		decimals int
		want     string
	}{
		{"6167000000000000", 18, "0.006167"},
		{"18500000", 6, "18.50"},
		{"10100000000000000000", 18, "10.10"}, // an 18-decimal stablecoin, beyond 2^53
		{"123456789012345678901234567890", 18, "123456789012.34567890123456789"},
		{"1", 18, "0.000000000000000001"},
		{"20100000000000000000", 18, "20.10"},
		{"0", 6, "0.00"},
		{"7", 0, "7"},
		{"75", 1, "7.5"},
		{"0001", 2, "0.01"},
		{"1e18", 18, "1e18"}, // not a whole number of units: shown as given
	} {
		expr := fmt.Sprintf("checkoutAmounts.format(%s, %d)", strconv.Quote(c.units), c.decimals)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil || got != c.want {
			t.Errorf("%s = %q (%v), want %q", expr, got, err, c.want)
		}
	}
}

// checkoutView reads a payment's checkout view with its secret.
func checkoutView(t *testing.T, base, id, secret string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/external/payment-secret-auth/payments/"+id, nil)
	req.Header.Set("X-Service-Payment-Secret", secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("checkout view: %d %v", res.StatusCode, err)
	}
	return v
}

// writeScreenshots saves the page as a phone and a desktop shows it, light and dark.
func writeScreenshots(t *testing.T, ctx context.Context) {
	for _, s := range []struct {
		name   string
		w, h   int64
		scheme string
	}{{"phone-light", 412, 915, "light"}, {"phone-dark", 412, 915, "dark"}, {"desktop-light", 1280, 900, "light"}, {"desktop-dark", 1280, 900, "dark"}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h), colorScheme(s.scheme)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(rootDir, "docs", "checkout-"+s.name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(412, 915), colorScheme("light")); err != nil {
		t.Fatal(err)
	}
}
