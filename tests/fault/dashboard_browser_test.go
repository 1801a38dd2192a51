package fault

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The dashboard web app (webapp/dist, embedded) in a real Chromium under its real CSP: the
// sign-in page has the documented fields; a dashboard token (`paymentsd tokens issue`) signs in;
// every page renders at phone width (390 px) without sideways scrolling, in light and dark; an
// API key is created and shown once; a withdrawal reaches its review step. No CSP violation and
// no script error on the way. DASHBOARD_SCREENSHOTS=dir writes a screenshot of each page there.
func TestDashboardInChromium(t *testing.T) {
	ctx := browser(t)
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	m := createMerchant(t, bin, db, nil, "Corner Bakery", "--deposits", "--withdrawals")
	var tok struct{ AccessToken string }
	if err := json.Unmarshal(runCLIEnv(t, bin, db, nil, "tokens", "issue", "--merchant", m.MerchantID, "--scope", "write", "--ttl", "15m", "--json"), &tok); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, bin, db)
	srv.start()

	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *cdplog.EventEntryAdded:
			// Network entries are the API's refusals (the refresh without a cookie: 401); a CSP
			// refusal is a "security" entry, a script error a "javascript" one.
			if ev.Entry.Source != "network" && ev.Entry.Level == "error" {
				problems = append(problems, string(ev.Entry.Source)+": "+ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := within(ctx, 90*time.Second)
	defer cancel()
	enableLog := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{})
		return err
	})
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(390, 844), enableLog, chromedp.Navigate(srv.base+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	hasLabel := func(text string) string {
		return `[...document.querySelectorAll("label")].some(l => l.textContent.trim() === ` + strconv.Quote(text) + ` && document.getElementById(l.htmlFor))`
	}
	waitJS(t, tctx, "the sign-in form", hasLabel("Email")+` && `+hasLabel("Password")+
		` && [...document.querySelectorAll("button")].some(b => b.textContent.trim() === "Sign in")`, 15*time.Second)

	shots := os.Getenv("DASHBOARD_SCREENSHOTS")
	screenshot := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	screenshot("signin-light")
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("details.token-signin summary")),
		chromedp.SendKeys(chromedp.CSS("#signin-token"), tok.AccessToken),
		chromedp.Click(chromedp.CSS("details.token-signin button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the overview", `document.querySelector("h1")?.textContent === "Overview" && document.body.innerText.includes("Available")`, 15*time.Second)
	waitJS(t, tctx, "the test-mode indicator", `document.body.innerText.includes("Test mode")`, 5*time.Second)
	for _, name := range []string{"Overview", "Payments", "Withdrawals", "Settings", "API Keys", "Webhooks", "Payment settings", "Withdrawal settings", "Branding", "Team", "Security", "Audit log",
		"Refunds", "Approvals", "Payout settings", "Address book"} {
		waitJS(t, tctx, "the navigation link "+name, `[...document.querySelectorAll("nav[aria-label=Main] a")].some(a => a.textContent === `+strconv.Quote(name)+`)`, 5*time.Second)
	}

	pages := []struct{ hash, heading, text string }{
		{"#/overview", "Overview", "Pending withdrawals"},
		{"#/payments", "Payments", "No payments"},
		{"#/withdrawals", "Withdrawals", "No withdrawals"},
		{"#/withdrawals/new", "New withdrawal", "Recipient address"},
		{"#/settings", "Settings", "API Keys"},
		{"#/settings/developers/api-keys", "API Keys", "Create secret key"},
		{"#/settings/developers/webhooks", "Webhooks", "Delivery log"},
		{"#/settings/payments", "Payment settings", "Accepted assets"},
		{"#/settings/withdrawals", "Withdrawal settings", "Withdrawals enabled"},
		{"#/settings/branding", "Branding", "Preview"},
		{"#/settings/team", "Team", "Members"},
		{"#/settings/security", "Security", "Signed in with an access token"},
		{"#/audit-log", "Audit log", "Filter"},
		{"#/refunds", "Refunds", "No refunds"},
		{"#/approvals", "Approvals", "No withdrawals wait for an approval."},
		{"#/settings/payout", "Payout settings", "Approval threshold (USD)"},
		{"#/settings/address-book", "Address book", "No saved addresses."},
	}
	for _, scheme := range []string{"light", "dark"} {
		if err := chromedp.Do(tctx, colorScheme(scheme)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = `+strconv.Quote(p.hash))); err != nil {
				t.Fatal(err)
			}
			waitJS(t, tctx, p.hash, `document.querySelector("main h1")?.textContent === `+strconv.Quote(p.heading)+
				` && document.body.innerText.includes(`+strconv.Quote(p.text)+`)`, 10*time.Second)
			wide, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.documentElement.scrollWidth <= window.innerWidth ? "" :
				[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
					.map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).slice(0, 8).join("; ")`))
			if err != nil {
				t.Fatal(err)
			}
			if wide != "" {
				t.Errorf("%s (%s) is wider than a 390 px phone: %s", p.hash, scheme, wide)
			}
			screenshot(strings.NewReplacer("#/", "", "/", "-").Replace(p.hash) + "-" + scheme)
		}
	}
	// Payments are live: one made while the list is open shows without a reload (the list polls
	// every 2.5 s while visible), its merchant-supplied order id as text; its detail opens.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/payments"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the empty payments list", `document.body.innerText.includes("No payments")`, 10*time.Second)
	apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 1850, "currency": "USD", "orderId": "<b>bread</b>-42"}`)
	row := `[...document.querySelectorAll("main a")].find(a => a.getAttribute("aria-label") === "Payment <b>bread</b>-42")`
	waitJS(t, tctx, "the new payment, live", `!!`+row+` && !document.querySelector("main b")`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.JSPath(row))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the payment's detail", `document.querySelector("main h1")?.textContent === "Payment <b>bread</b>-42" &&
		document.body.innerText.includes("Timeline") && document.body.innerText.includes("Webhook deliveries") && document.body.innerText.includes("Export") === false`, 10*time.Second)

	// The CSS loaded under style-src 'self': dark backgrounds in the dark scheme.
	waitJS(t, tctx, "the dark theme", `getComputedStyle(document.body).backgroundColor === "rgb(15, 20, 28)"`, 2*time.Second)

	// A secret key, shown once with a Copy button.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/settings/developers/api-keys"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the create button", `!!document.querySelector("form.card button[type=submit]")`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("form.card button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the new key", `document.querySelector(".secret-value code")?.textContent.startsWith("sk_test_") &&
		[...document.querySelectorAll("button")].some(b => b.textContent === "Copy")`, 10*time.Second)

	// A withdrawal up to its review step (the merchant has no balance to pay it).
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/withdrawals/new"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the withdrawal form", hasLabel("Amount (USD)")+` && `+hasLabel("Network")+` && `+hasLabel("Recipient address"), 10*time.Second)
	amount := `[...document.querySelectorAll("label")].find(l => l.textContent === "Amount (USD)").htmlFor`
	to := `[...document.querySelectorAll("label")].find(l => l.textContent === "Recipient address").htmlFor`
	amountID, err := chromedp.Run(tctx, chromedp.Evaluate[string](amount))
	if err != nil {
		t.Fatal(err)
	}
	toID, err := chromedp.Run(tctx, chromedp.Evaluate[string](to))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.SendKeys(chromedp.JSPath(`document.getElementById(`+strconv.Quote(amountID)+`)`), "25.5"),
		chromedp.SendKeys(chromedp.JSPath(`document.getElementById(`+strconv.Quote(toID)+`)`), "0x000000000000000000000000000000000000dEaD"),
		chromedp.Click(chromedp.CSS("main form button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the review", `document.body.innerText.includes("Review the withdrawal") && document.body.innerText.includes("$25.50") &&
		document.body.innerText.includes("0x000000000000000000000000000000000000dEaD")`, 5*time.Second)
	// The estimate: an answer (token amount, network fee, hot wallet) or why there is none.
	waitJS(t, tctx, "the estimate", `document.body.innerText.includes("Hot wallet") || document.body.innerText.includes("No estimate now")`, 10*time.Second)
	screenshot("withdrawal-review-dark")
	// A desktop: the navigation beside the page, no menu button.
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 860), colorScheme("light"),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/settings/developers/api-keys"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the desktop layout", `getComputedStyle(document.querySelector(".menu-button")).display === "none" &&
		getComputedStyle(document.querySelector("nav[aria-label=Main]")).display !== "none" && document.querySelector("main h1")?.textContent === "API Keys"`, 5*time.Second)
	screenshot("api-keys-desktop-light")

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("the browser reported:\n%s", strings.Join(problems, "\n"))
	}
}
