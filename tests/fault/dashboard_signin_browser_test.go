package fault

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
)

// The sign-in flow against the real binary's auth API (issue 22): a wrong password is refused;
// the right one signs in; Settings → Security turns on an authenticator app (the QR code and the
// setup key shown, a TOTP code from that key accepted, ten recovery codes shown once); a new
// secret key asks for the second factor again when the session's is not recent; signing in
// again asks for the second factor (a recovery code); an invitation to a second merchant is
// accepted on #/accept-invitation (an existing user: their password, then the second factor);
// the merchant switcher lists both memberships (names as text) and a viewer sees no
// money-moving action; the access token stays out of storage; a reload resumes the session with
// the refresh cookie; sign out ends it.
func TestDashboardSignInFlow(t *testing.T) {
	ctx := browser(t)
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	merchant := func(name string) string {
		m := createMerchant(t, bin, db, nil, name, "--deposits", "--withdrawals")
		return m.MerchantID
	}
	merchantA, merchantB := merchant("Corner Bakery"), merchant("<b>Second</b> Shop")
	const email, password = "owner@example.com", "correct horse battery staple"
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runCLIEnv(t, bin, db, nil, "users", "create", "--email", email, "--merchant", merchantA, "--role", "owner", "--password-file", pwFile)
	inviteURL := strings.TrimSpace(string(runCLIEnv(t, bin, db, nil, "users", "invite", "--email", email, "--merchant", merchantB, "--role", "viewer")))
	_, query, ok := strings.Cut(inviteURL, "?")
	if !ok {
		t.Fatalf("users invite printed %q: no query", inviteURL)
	}
	q, err := url.ParseQuery(query)
	if err != nil || q.Get("token") == "" {
		t.Fatalf("users invite printed %q: no token", inviteURL)
	}
	srv := newServer(t, bin, db)
	srv.start()

	tctx, cancel := within(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.base+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	labelled := func(text string) string {
		return `document.getElementById([...document.querySelectorAll("label")].find(l => l.textContent.trim() === ` + strconv.Quote(text) + `)?.htmlFor)`
	}
	byLabel := func(text string) chromedp.JSPath { return chromedp.JSPath(labelled(text)) }
	hasLabel := func(text string) string { return `!!` + labelled(text) }
	// button finds a button by its accessible name: aria-label, else its text.
	button := func(name string) chromedp.JSPath {
		return chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => (b.getAttribute("aria-label") ?? b.textContent.trim()) === ` + strconv.Quote(name) + `)`)
	}
	hasButton := func(name string) string {
		return `[...document.querySelectorAll("button")].some(b => (b.getAttribute("aria-label") ?? b.textContent.trim()) === ` + strconv.Quote(name) + `)`
	}
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	goTo := func(hash string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`location.hash = ` + strconv.Quote(hash))
	}
	// clear empties a field the way React sees it (the value setter, then an input event).
	clear := func(label string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`(() => { const el = ` + labelled(label) + `;
			Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, ""); el.dispatchEvent(new Event("input", {bubbles: true})); })()`)
	}
	overview := `document.querySelector("main h1")?.textContent === "Overview"`

	// Email and password: a wrong one is refused, the right one signs in (no second factor yet).
	waitJS(t, tctx, "the sign-in form", hasLabel("Email")+` && `+hasLabel("Password")+` && `+hasButton("Sign in"), 15*time.Second)
	do(chromedp.SendKeys(byLabel("Email"), email), chromedp.SendKeys(byLabel("Password"), "wrong password"), chromedp.Click(button("Sign in")))
	waitJS(t, tctx, "the refusal", `document.querySelector("[role=alert]")?.textContent.includes("not right")`, 10*time.Second)
	do(clear("Password"), chromedp.SendKeys(byLabel("Password"), password), chromedp.Click(button("Sign in")))
	waitJS(t, tctx, "the overview", overview+` && document.body.innerText.includes("New withdrawal")`, 10*time.Second)

	// Two-factor authentication: the QR code and the setup key; a code from that key turns it on.
	do(goTo("#/settings/security"))
	waitJS(t, tctx, "the security page", hasButton("Set up authenticator app")+` && `+hasLabel("Current password")+` && `+hasButton("Sign out everywhere"), 10*time.Second)
	do(chromedp.Click(button("Set up authenticator app")))
	waitJS(t, tctx, "the enrolment", `document.querySelector("img[alt='QR code for your authenticator app']")?.src.startsWith("data:image/png") && !!`+labelled("Setup key")+`?.value`, 10*time.Second)
	secret, err := chromedp.Run(tctx, chromedp.Evaluate[string](labelled("Setup key")+`.value`))
	if err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do(chromedp.SendKeys(byLabel("Authentication code"), code), chromedp.Click(button("Turn on")))
	waitJS(t, tctx, "the recovery codes", `document.querySelectorAll(".codes li").length === 10 && `+hasButton("I have saved these codes"), 10*time.Second)
	codes, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".codes li")].map(li => li.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	do(chromedp.Click(button("I have saved these codes")))
	waitJS(t, tctx, "two-factor on", hasButton("Turn off")+` && document.querySelectorAll(".codes li").length === 0`, 5*time.Second)

	// A new secret key: when the session's second factor is not recent, the code is asked for inline.
	do(goTo("#/settings/developers/api-keys"))
	waitJS(t, tctx, "the keys page", hasButton("Create secret key"), 10*time.Second)
	do(chromedp.Click(button("Create secret key")))
	waitJS(t, tctx, "the key or the step-up prompt", `!!document.querySelector(".secret-value code") || `+hasButton("Verify"), 10*time.Second)
	if stepUp, _ := chromedp.Run(tctx, chromedp.Evaluate[bool](hasButton("Verify"))); stepUp {
		do(chromedp.SendKeys(byLabel("Authentication code"), codes[0]), chromedp.Click(button("Verify")))
	}
	waitJS(t, tctx, "the key, once", `document.querySelector(".secret-value code")?.textContent.startsWith("sk_test_")`, 10*time.Second)
	waitJS(t, tctx, "the key's row names it", `[...document.querySelectorAll("button")].some(b => /^Revoke key sk_test_/.test(b.getAttribute("aria-label") ?? ""))`, 5*time.Second)
	noToken := `!/eyJ[\w-]+\.eyJ/.test(JSON.stringify(Object.entries(localStorage)) + JSON.stringify(Object.entries(sessionStorage)) + document.cookie)`
	waitJS(t, tctx, "no token in storage", noToken, 2*time.Second)

	// Sign out, and in again: now the second factor is asked for (a recovery code).
	do(chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("header button")].find(b => b.textContent.startsWith("Sign out"))`)))
	waitJS(t, tctx, "signed out", `document.body.innerText.includes("You are signed out.")`, 10*time.Second)
	do(chromedp.SendKeys(byLabel("Email"), email), chromedp.SendKeys(byLabel("Password"), password), chromedp.Click(button("Sign in")))
	waitJS(t, tctx, "the second factor", hasLabel("Authentication code")+` && `+hasButton("Verify"), 10*time.Second)
	do(chromedp.SendKeys(byLabel("Authentication code"), "000000"), chromedp.Click(button("Verify")))
	waitJS(t, tctx, "a wrong code refused", `document.querySelector("[role=alert]")?.textContent.includes("wrong")`, 10*time.Second)
	do(clear("Authentication code"), chromedp.SendKeys(byLabel("Authentication code"), codes[1]), chromedp.Click(button("Verify")))
	// Back where the session ended: the merchant's first key (merchants create) and the one made.
	waitJS(t, tctx, "the keys page again", `document.querySelector("main h1")?.textContent === "API Keys" &&
		document.querySelectorAll("main tbody tr").length === 2`, 10*time.Second)

	// The invitation to the second merchant: the password of the existing account, then the second factor.
	do(goTo("#/accept-invitation?token=" + url.QueryEscape(q.Get("token"))))
	waitJS(t, tctx, "the invitation page", hasLabel("Password")+` && `+hasButton("Accept invitation")+` && document.body.innerText.includes("at least 12 characters")`, 10*time.Second)
	do(chromedp.SendKeys(byLabel("Password"), password), chromedp.Click(button("Accept invitation")))
	waitJS(t, tctx, "the invitation's second factor", hasLabel("Authentication code")+` && `+hasButton("Verify"), 10*time.Second)
	do(chromedp.SendKeys(byLabel("Authentication code"), codes[2]), chromedp.Click(button("Verify")))
	waitJS(t, tctx, "the overview after the invitation", overview, 10*time.Second)
	waitJS(t, tctx, "the merchant switcher", `(() => { const o = [...document.querySelectorAll("header option")].map(o => o.textContent).sort().join("|");
		return o === "<b>Second</b> Shop (viewer)|Corner Bakery (owner)"; })()`, 10*time.Second)

	// The second merchant as a viewer: no money-moving or secret-making action.
	do(chromedp.Evaluate[chromedp.Void](`(() => { const s = ` + labelled("Merchant") + `;
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, ` + strconv.Quote(merchantB) + `);
		s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	waitJS(t, tctx, "a viewer's overview", overview+` && document.body.innerText.includes("Available") && !document.body.innerText.includes("New withdrawal")`, 10*time.Second)
	do(goTo("#/withdrawals"))
	waitJS(t, tctx, "a viewer's withdrawals", `document.querySelector("main h1")?.textContent === "Withdrawals" && !document.body.innerText.includes("New withdrawal")`, 10*time.Second)
	do(goTo("#/settings/team"))
	waitJS(t, tctx, "a viewer's team page", `document.querySelector("main h1")?.textContent === "Team" && document.body.innerText.includes("owner@example.com") && !`+hasButton("Invite"), 10*time.Second)

	// A reload forgets the token and resumes with the refresh cookie.
	do(goTo("#/overview"), chromedp.Reload())
	waitJS(t, tctx, "the resumed session", overview+` && document.querySelector("header select")?.value === `+strconv.Quote(merchantB), 15*time.Second)
	waitJS(t, tctx, "no token in storage after the reload", noToken, 2*time.Second)

	do(chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("header button")].find(b => b.textContent.startsWith("Sign out"))`)))
	waitJS(t, tctx, "signed out at the end", `document.body.innerText.includes("You are signed out.")`, 10*time.Second)
	do(chromedp.Reload())
	waitJS(t, tctx, "still signed out after a reload", hasButton("Sign in"), 15*time.Second)
}
