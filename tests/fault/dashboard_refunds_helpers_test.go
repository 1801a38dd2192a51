package fault

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/devnet"
)

// refundsWalk is the state the issue 23 browser walk shares between its steps: the real binary
// on a database and its devnet, one merchant, its owner and a second admin.
type refundsWalk struct {
	t          *testing.T
	bin, db    string
	devAddr    string
	env        []string
	srv        *server
	merchantID string
	secretKey  string
	root       context.Context // the browser
	axe        string
}

const (
	refundsOwner = "owner@refunds.example"
	refundsAdmin = "admin@refunds.example"
)

func newRefundsWalk(t *testing.T, db string) *refundsWalk {
	w := &refundsWalk{t: t, root: browser(t), axe: axeSource(t), bin: paymentsdBinary(t), db: db, devAddr: devnetAddr(t)}
	w.env = []string{"PAYMENTS_DEVNET=" + w.devAddr, "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms"}
	m := createMerchant(t, w.bin, db, w.env, "Corner Bakery", "--deposits", "--withdrawals")
	w.merchantID, w.secretKey = m.MerchantID, m.SecretKey
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(walkPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range [][2]string{{refundsOwner, "owner"}, {refundsAdmin, "admin"}} {
		runCLIEnv(t, w.bin, db, w.env, "users", "create", "--email", u[0], "--merchant", m.MerchantID, "--role", u[1], "--password-file", pwFile)
	}
	w.srv = newServer(t, w.bin, db)
	w.srv.env = w.env
	w.srv.start()
	return w
}

// tab opens a browser tab of its own (cookies apart), with the wallet injected when given, that
// fails the test on any dialog and records CSP violations.
func (w *refundsWalk) tab(wallet *testWallet, width, height int64, scheme string) context.Context {
	t := w.t
	ctx, cancel := chromedp.NewContext(w.root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	failOnDialogs(t, ctx)
	watchCSP(t, ctx)
	if wallet != nil {
		injectWallet(t, ctx, wallet)
	}
	ctx, cancel2 := within(ctx, 8*time.Minute)
	t.Cleanup(cancel2)
	if err := viewport(ctx, width, height, false, scheme); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// signIn signs a person in on the dashboard (no second factor: the walk's people have none).
func (w *refundsWalk) signIn(ctx context.Context, email string) {
	t := w.t
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(w.srv.base+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	fill(t, ctx, "Email", email)
	fill(t, ctx, "Password", walkPassword)
	press(t, ctx, "button", "Sign in")
	if _, err := axNode(ctx, "button", "Sign out ("+email+")", 15*time.Second); err != nil {
		t.Fatalf("%s not signed in: %v\n%s", email, err, pageText(ctx))
	}
}

// visit follows a navigation link and checks the page it opens (axe-core, CSP).
func (w *refundsWalk) visit(ctx context.Context, link, heading string) {
	t := w.t
	t.Helper()
	press(t, ctx, "link", link)
	if _, err := axNode(ctx, "heading", heading, 15*time.Second); err != nil {
		t.Fatalf("%s: no heading %q: %v\nthe page says:\n%s", link, heading, err, pageText(ctx))
	}
	checkPage(t, ctx, w.axe, link)
}

// open goes to a dashboard route (#/…) and waits for its heading.
func (w *refundsWalk) open(ctx context.Context, route, heading string) {
	t := w.t
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = `+strconv.Quote(route))); err != nil {
		t.Fatal(err)
	}
	if _, err := axNode(ctx, "heading", heading, 15*time.Second); err != nil {
		t.Fatalf("%s: no heading %q: %v\nthe page says:\n%s", route, heading, err, pageText(ctx))
	}
}

// paidPayment creates a payment of cents and pays its devnet USDC quote from a test account,
// with extra smallest units on top of the amount due (an overpayment); it waits until the
// payment completed and returns its id and its checkout URL (on 127.0.0.1).
func (w *refundsWalk) paidPayment(cents int, orderID string, account int, extra int64) (id, payURL string) {
	t := w.t
	t.Helper()
	created := apiJSON(t, w.srv.base, w.secretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
		`{"amount": `+strconv.Itoa(cents)+`, "currency": "USD", "orderId": `+jsonString(orderID)+`}`)
	id = created["paymentId"].(string)
	payURL = strings.Replace(created["paymentUrl"].(string), "http://localhost:", "http://127.0.0.1:", 1)
	var quote string
	var expected int64
	for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
		q := q.(map[string]any)
		if q["token"].(map[string]any)["symbol"] == "USDC" && q["chainId"] == "eip155:1337" {
			quote = q["id"].(string)
			expected, _ = strconv.ParseInt(q["expectedAmountAsset"].(string), 10, 64)
		}
	}
	if quote == "" {
		t.Fatalf("payment %s has no USDC quote on eip155:1337", id)
	}
	pay := exec.Command(w.bin, "devnet", "pay", "--payment", id, "--quote", quote, "--amount", strconv.FormatInt(expected+extra, 10),
		"--rpc", "http://"+w.devAddr, "--account", strconv.Itoa(account))
	pay.Env = append(daemonEnv(w.db), "PAYMENTS_DEVNET="+w.devAddr)
	if out, err := pay.CombinedOutput(); err != nil {
		t.Fatalf("devnet pay: %v\n%s", err, out)
	}
	w.waitAPI("/v1/external/secretkey-auth/payments/"+id, "status", "completed", 60*time.Second)
	return id, payURL
}

// waitAPI waits until the secret-key API's answer at path has field = want.
func (w *refundsWalk) waitAPI(path, field, want string, timeout time.Duration) map[string]any {
	t := w.t
	t.Helper()
	var last map[string]any
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		last = apiJSON(t, w.srv.base, w.secretKey, http.MethodGet, path, "")
		if last[field] == want {
			return last
		}
	}
	t.Fatalf("%s: %s is not %q within %s: %v", path, field, want, timeout, last)
	return nil
}

// refundsOf lists a payment's refunds through the secret-key API.
func (w *refundsWalk) refundsOf(paymentID string) []map[string]any {
	l := apiJSON(w.t, w.srv.base, w.secretKey, http.MethodGet, "/v1/external/secretkey-auth/refunds?paymentId="+paymentID, "")
	var out []map[string]any
	for _, r := range l["data"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// choose picks the option of this value in the select labelled name, once it has that option
// (the options of some selects arrive with a later answer).
func choose(t *testing.T, ctx context.Context, name, value string) {
	t.Helper()
	id, err := axNode(ctx, "combobox", name, 15*time.Second)
	if err != nil {
		t.Fatalf("choose %q: %v\n%s", name, err, pageText(ctx))
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		raw, err := onNode(ctx, id, `function(v) { return [...this.options].some(o => o.value === v && !o.disabled); }`, value)
		if err == nil && string(raw) == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("choose %q: no option %q\n%s", name, value, pageText(ctx))
		}
	}
	fill(t, ctx, name, value)
}

// gone waits until no element of this role and name is left on the page.
func gone(t *testing.T, ctx context.Context, role, name string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); present(ctx, role, name); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s %q is still there after 10 s\n%s", role, name, pageText(ctx))
		}
	}
}

// disabled reports whether the button of this accessible name is disabled.
func disabled(t *testing.T, ctx context.Context, name string) bool {
	t.Helper()
	id, err := axNode(ctx, "button", name, 15*time.Second)
	if err != nil {
		t.Fatalf("button %q: %v\n%s", name, err, pageText(ctx))
	}
	raw, err := onNode(ctx, id, `function() { return this.disabled; }`)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw) == "true"
}

// claimPath turns a claimUrl into this server's address (the public base URL may say localhost).
func (w *refundsWalk) claimPath(claimURL string) string {
	i := strings.Index(claimURL, "/refund/")
	if i < 0 {
		w.t.Fatalf("not a claim URL: %q", claimURL)
	}
	return w.srv.base + claimURL[i:]
}

// devnetWallet is a test wallet holding a devnet account's key, on the devnet's chain.
func devnetWallet(t *testing.T, account int) *testWallet {
	key, err := devnet.AccountKey(account)
	if err != nil {
		t.Fatal(err)
	}
	return newTestWallet(key, devnet.ChainID)
}

func devnetAccountAddr(t *testing.T, account int) string {
	key, err := devnet.AccountKey(account)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex())
}
