package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// The merchant dashboard walked as its people would, in a real Chromium against the real binary
// and its devnet, on both databases — every step found by role and accessible name (the way a
// screen reader finds it), axe-core and the CSP checked on every page:
//   - the owner signs in with the password the CLI set, turns TOTP on, signs out and back in
//     with an authentication code;
//   - a payment made on the devnet turns completed on the open detail page without a reload;
//   - a withdrawal is reviewed, confirmed (the sign-in's code is its recent second factor), and
//     completes on the devnet, shown without a reload;
//   - a secret key made in the UI creates a payment through the secret-key API, and is refused
//     once revoked in the UI;
//   - a webhook endpoint added in the UI receives a signed test event;
//   - a viewer sees no money-moving action, and the API refuses the viewer's withdrawal (403);
//   - markup planted in the merchant's name and a payment's orderId shows as text, never runs.
func TestDashboardWalk(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { dashboardWalk(t, testdb.URL(t, backend)) })
	}
}

const (
	hostileName    = `<img src=x onerror=alert(1)> Bakery & "Co"`
	hostileOrderID = `<script>alert("order")</script>`
	walkPassword   = "correct horse battery staple"
)

func dashboardWalk(t *testing.T, db string) {
	ctx := browser(t)
	axe := axeSource(t)
	bin := paymentsdBinary(t)
	devAddr := devnetAddr(t)
	env := []string{"PAYMENTS_DEVNET=" + devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms", "PAYMENTS_WEBHOOKS_ALLOW_PRIVATE=true"}
	m := createMerchant(t, bin, db, env, hostileName, "--deposits", "--withdrawals")
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(walkPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range [][2]string{{"owner@walk.example", "owner"}, {"viewer@walk.example", "viewer"}} {
		runCLIEnv(t, bin, db, env, "users", "create", "--email", u[0], "--merchant", m.MerchantID, "--role", u[1], "--password-file", pwFile)
	}
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	rpc := "http://" + devAddr

	failOnDialogs(t, ctx)
	watchCSP(t, ctx)
	tctx, cancel := within(ctx, 6*time.Minute)
	defer cancel()
	if err := viewport(tctx, 1280, 900, false, "light"); err != nil {
		t.Fatal(err)
	}
	visit := func(link, heading string) {
		t.Helper()
		press(t, tctx, "link", link)
		if _, err := axNode(tctx, "heading", heading, 15*time.Second); err != nil {
			t.Fatalf("%s: no heading %q: %v\nthe page says:\n%s", link, heading, err, pageText(tctx))
		}
		checkPage(t, tctx, axe, link)
	}

	// Sign in with the password; turn TOTP on.
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.base+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	signIn := func(email string) {
		t.Helper()
		fill(t, tctx, "Email", email)
		fill(t, tctx, "Password", walkPassword)
		press(t, tctx, "button", "Sign in")
	}
	if _, err := axNode(tctx, "button", "Sign in", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	checkPage(t, tctx, axe, "sign-in")
	signIn("owner@walk.example")
	if _, err := axNode(tctx, "heading", "Overview", 15*time.Second); err != nil {
		t.Fatalf("not signed in: %v\n%s", err, pageText(tctx))
	}
	checkPage(t, tctx, axe, "overview")
	waitText(t, tctx, hostileName, 10*time.Second) // the merchant's name, as text

	visit("Security", "Security")
	press(t, tctx, "button", "Set up authenticator app")
	secret := strings.ReplaceAll(fieldValue(t, tctx, "Setup key"), " ", "")
	if !regexp.MustCompile(`^[A-Z2-7]{16,}=*$`).MatchString(secret) {
		t.Fatalf("the setup key is not a base32 TOTP key: %q", secret)
	}
	codes := &totpCodes{secret: secret}
	fill(t, tctx, "Authentication code", codes.next(t))
	press(t, tctx, "button", "Turn on")
	press(t, tctx, "button", "I have saved these codes")
	checkPage(t, tctx, axe, "security with TOTP on")

	// Sign out, and in again with a code.
	press(t, tctx, "button", "Sign out (owner@walk.example)")
	if _, err := axNode(tctx, "button", "Sign in", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	signIn("owner@walk.example")
	fill(t, tctx, "Authentication code", codes.next(t))
	press(t, tctx, "button", "Verify")
	if _, err := axNode(tctx, "button", "Sign out (owner@walk.example)", 15*time.Second); err != nil {
		t.Fatalf("not signed in with TOTP: %v\n%s", err, pageText(tctx))
	}

	// A payment with a hostile orderId; its detail open while the devnet pays it.
	created := apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": 2000, "currency": "USD", "orderId": `+jsonString(hostileOrderID)+`}`)
	paymentID := created["paymentId"].(string)
	visit("Payments", "Payments")
	press(t, tctx, "link", "Payment "+hostileOrderID)
	waitText(t, tctx, hostileOrderID, 10*time.Second)
	checkPage(t, tctx, axe, "payment detail")
	pay := exec.Command(bin, "devnet", "pay", "--payment", paymentID, "--rpc", rpc, "--account", "3")
	pay.Env = append(daemonEnv(db), "PAYMENTS_DEVNET="+devAddr)
	if out, err := pay.CombinedOutput(); err != nil {
		t.Fatalf("devnet pay: %v\n%s", err, out)
	}
	var apiDone time.Time
	for deadline := time.Now().Add(60 * time.Second); apiDone.IsZero() && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if apiJSON(t, srv.base, m.SecretKey, http.MethodGet, "/v1/external/secretkey-auth/payments/"+paymentID, "")["status"] == "completed" {
			apiDone = time.Now()
		}
	}
	if apiDone.IsZero() {
		t.Fatal("the payment did not complete within 60 s")
	}
	waitJS(t, tctx, "the detail page showing the payment completed", `/\bcompleted\b/i.test(document.querySelector("main").innerText)`, 5*time.Second)
	t.Logf("the open detail page showed the payment completed %s after the API did (no reload)", time.Since(apiDone).Round(10*time.Millisecond))

	// A withdrawal: review, confirm, step up with a fresh code, completed.
	visit("Withdrawals", "Withdrawals")
	press(t, tctx, "link", "New withdrawal")
	fill(t, tctx, "Amount (USD)", "5")
	fill(t, tctx, "Network", "eip155:1337")
	fill(t, tctx, "Recipient address", "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65")
	press(t, tctx, "button", "Review")
	waitText(t, tctx, "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65", 10*time.Second)
	checkPage(t, tctx, axe, "withdrawal review")
	// The code given at sign-in is the recent second factor the withdrawal needs (x-second-factor:
	// recent, 10 minutes); past that, the page asks for a code again (step-up; the sign-in
	// browser test and the authz tests cover that path).
	press(t, tctx, "button", "Confirm withdrawal")
	waitJS(t, tctx, "the withdrawal completed", `/\bcompleted\b/i.test(document.querySelector("main").innerText)`, 90*time.Second)
	checkPage(t, tctx, axe, "withdrawal")

	// A secret key made in the UI works against the secret-key API until revoked in the UI.
	visit("API Keys", "API Keys")
	press(t, tctx, "button", "Create secret key")
	waitJS(t, tctx, "the new key", `/sk_test_[A-Za-z0-9_-]{30,}/.test(document.body.innerText)`, 15*time.Second)
	key := regexp.MustCompile(`sk_test_[A-Za-z0-9_-]{30,}`).FindString(pageText(tctx))
	checkPage(t, tctx, axe, "new key")
	if got := apiStatus(t, srv.base, key, http.MethodPost, "/v1/external/secretkey-auth/payments", `{"amount": 500, "currency": "USD", "orderId": "ui-key"}`); got != http.StatusCreated {
		t.Fatalf("the key made in the UI: create payment answered %d", got)
	}
	press(t, tctx, "button", "I have saved it")
	press(t, tctx, "button", "Revoke key "+key[:16]+"…")
	press(t, tctx, "button", "Revoke "+key[:16]+"…")
	waitText(t, tctx, "revoked", 10*time.Second)
	if got := apiStatus(t, srv.base, key, http.MethodGet, "/v1/external/secretkey-auth/payments", ""); got != http.StatusUnauthorized {
		t.Fatalf("a key revoked in the UI still answers %d", got)
	}

	// A webhook endpoint added in the UI receives a signed test event.
	recv := newSignedReceiver(t)
	visit("Webhooks", "Webhooks")
	press(t, tctx, "DisclosureTriangle", "Add an endpoint")
	fill(t, tctx, "Endpoint URL", recv.srv.URL+"/hook")
	press(t, tctx, "button", "Add endpoint")
	waitJS(t, tctx, "the endpoint's secret", `/whsec_[A-Za-z0-9+\/=]{20,}/.test(document.body.innerText)`, 15*time.Second)
	whsec := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{20,}`).FindString(pageText(tctx))
	checkPage(t, tctx, axe, "new endpoint")
	press(t, tctx, "button", "I have saved it")
	press(t, tctx, "button", "Send test event to "+recv.srv.URL+"/hook")
	body, hdr := recv.first(t, 20*time.Second)
	wh, err := standardwebhooks.NewWebhook(whsec)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, hdr); err != nil {
		t.Fatalf("the test event's signature does not verify with the secret the UI showed: %v", err)
	}

	// Every other page: axe-core and the CSP.
	for _, p := range [][2]string{{"Overview", "Overview"}, {"Payment settings", "Payment settings"}, {"Withdrawal settings", "Withdrawal settings"},
		{"Branding", "Branding"}, {"Team", "Team"}, {"Audit log", "Audit log"}} {
		visit(p[0], p[1])
	}
	waitText(t, tctx, "owner@walk.example", 10*time.Second) // the audit log names who

	// A viewer: no money-moving action in the UI, and the API refuses it.
	vctx, vcancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer vcancel()
	failOnDialogs(t, vctx)
	vt, vtcancel := within(vctx, time.Minute)
	defer vtcancel()
	if err := viewport(vt, 1280, 900, false, "dark"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(vt, chromedp.Navigate(srv.base+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	fill(t, vt, "Email", "viewer@walk.example")
	fill(t, vt, "Password", walkPassword)
	press(t, vt, "button", "Sign in")
	if _, err := axNode(vt, "heading", "Overview", 15*time.Second); err != nil {
		t.Fatalf("the viewer is not signed in: %v\n%s", err, pageText(vt))
	}
	press(t, vt, "link", "Withdrawals")
	if _, err := axNode(vt, "heading", "Withdrawals", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the list and its actions rendered
	for _, action := range []string{"New withdrawal", "Cancel withdrawal"} {
		if present(vt, "button", action) || present(vt, "link", action) {
			t.Errorf("a viewer is offered %q", action)
		}
	}
	viewer := signInAPI(t, srv.base, "viewer@walk.example")
	res := bearerCall(t, srv.base, viewer, http.MethodPost, "/v1/merchants/"+m.MerchantID+"/withdrawals",
		`{"amountInCents": 500, "currency": "USD", "chainId": "eip155:1337", "recipientAddress": "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65"}`)
	if res != http.StatusForbidden {
		t.Fatalf("a viewer's withdrawal through the API answered %d, want 403", res)
	}

	if os.Getenv("UPDATE_SCREENSHOTS") != "" && strings.HasSuffix(db, ".db") {
		dashboardScreenshots(t, tctx, srv.base)
	}
}

// totpCodes hands out TOTP codes, each of a time step not used before (a code is accepted once:
// the next use waits for the next 30-second step).
type totpCodes struct {
	secret string
	last   int64
}

func (c *totpCodes) next(t *testing.T) string {
	t.Helper()
	for {
		now := time.Now()
		if step := now.Unix() / 30; step > c.last {
			c.last = step
			code, err := totp.GenerateCode(c.secret, now)
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
		time.Sleep(time.Until(time.Unix((c.last+1)*30, 0)) + 50*time.Millisecond)
	}
}

// signedReceiver keeps the webhook requests it receives.
type signedReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  [][]byte
	hdrs []http.Header
}

func newSignedReceiver(t *testing.T) *signedReceiver {
	r := &signedReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.hdrs = append(r.got, b), append(r.hdrs, req.Header.Clone())
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *signedReceiver) first(t *testing.T, timeout time.Duration) ([]byte, http.Header) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r.mu.Lock()
		if len(r.got) > 0 {
			defer r.mu.Unlock()
			return r.got[0], r.hdrs[0]
		}
		r.mu.Unlock()
	}
	t.Fatalf("no webhook delivery within %s", timeout)
	return nil, nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// apiStatus calls the secret-key API and returns the status alone.
func apiStatus(t *testing.T, base, key, method, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("X-Service-Secret-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// signInAPI signs a person in through the API (no second factor) and returns the access token.
func signInAPI(t *testing.T, base, email string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": walkPassword})
	res, err := http.Post(base+"/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ Status, AccessToken string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.AccessToken == "" {
		t.Fatalf("sign in %s through the API: %d %v %+v", email, res.StatusCode, err, out)
	}
	return out.AccessToken
}

func bearerCall(t *testing.T, base, token, method, path, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// dashboardScreenshots writes the README's pictures: the overview and the payments list, desktop
// and phone, light and dark (UPDATE_SCREENSHOTS=1).
func dashboardScreenshots(t *testing.T, ctx context.Context, base string) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"overview", "payments"} {
		for _, size := range []struct {
			name   string
			w, h   int64
			mobile bool
		}{{"desktop", 1280, 860, false}, {"phone", 390, 844, true}} {
			for _, scheme := range []string{"light", "dark"} {
				if err := viewport(ctx, size.w, size.h, size.mobile, scheme); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/dashboard/#/"+page)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(1500 * time.Millisecond)
				if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); document.activeElement && document.activeElement.blur(); true`)); err != nil {
					t.Fatal(err)
				}
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(dir, "dashboard-"+page+"-"+size.name+"-"+scheme+".png")
				if err := os.WriteFile(name, png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
