package fault

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/webapp"
)

// fakeAuth stands in for the auth API (/v1/auth/…, issue 22) until it is served: the plan's
// shapes, one user with a second factor and two memberships.
type fakeAuth struct {
	mu       sync.Mutex
	tokens   int
	balances []string // "merchantId bearer" of each balance read
	logouts  int
}

const (
	fakeMerchantA = "0191a0a0-0000-7000-8000-00000000000a"
	fakeMerchantB = "0191a0a0-0000-7000-8000-00000000000b"
)

func (f *fakeAuth) signedIn(w http.ResponseWriter) {
	f.tokens++
	http.SetCookie(w, &http.Cookie{Name: "paymentsd_refresh", Value: "r" + strconv.Itoa(f.tokens), Path: "/v1/auth", HttpOnly: true})
	writeJSON(w, map[string]any{"status": "signed_in", "accessToken": "tok-" + strconv.Itoa(f.tokens),
		"expiresAt": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "authentication_error", "code": code, "message": code}})
}

func (f *fakeAuth) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /dashboard/", http.StripPrefix("/dashboard/", http.FileServerFS(webapp.Dist)))
	mux.HandleFunc("POST /v1/auth/login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Email, Password string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.Email != "owner@example.com" || in.Password != "correct horse" {
			writeError(w, http.StatusUnauthorized, "invalid_credentials")
			return
		}
		writeJSON(w, map[string]any{"status": "second_factor_required", "challengeToken": "ch-1", "methods": []string{"totp", "recovery_code"}})
	})
	mux.HandleFunc("POST /v1/auth/login/second-factor", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ChallengeToken, Code string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.ChallengeToken != "ch-1" || in.Code != "123456" {
			writeError(w, http.StatusUnauthorized, "invalid_code")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.signedIn(w)
	})
	mux.HandleFunc("POST /v1/auth/refresh", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("paymentsd_refresh"); err != nil || c.Value == "" {
			writeError(w, http.StatusUnauthorized, "invalid_token")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.signedIn(w)
	})
	mux.HandleFunc("POST /v1/auth/logout", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.logouts++
		f.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "paymentsd_refresh", Value: "", Path: "/v1/auth", MaxAge: -1})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/auth/me", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tok-") {
			writeError(w, http.StatusUnauthorized, "invalid_token")
			return
		}
		writeJSON(w, map[string]any{"id": "u1", "email": "owner@example.com", "totpEnabled": true, "passkeyCount": 0, "mode": "test",
			"memberships": []map[string]any{
				{"merchantId": fakeMerchantA, "merchantName": "Corner Bakery", "role": "owner", "permissions": []string{"payments:read", "withdrawals:read", "withdrawals:write", "settings:read", "settings:write", "developers:read", "developers:write"}},
				{"merchantId": fakeMerchantB, "merchantName": "<b>Second</b> Shop", "role": "viewer", "permissions": []string{"payments:read", "withdrawals:read", "settings:read"}},
			}})
	})
	mux.HandleFunc("GET /v1/merchants/{merchantId}/balance", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.balances = append(f.balances, r.PathValue("merchantId")+" "+r.Header.Get("Authorization"))
		f.mu.Unlock()
		cents := 12345
		if r.PathValue("merchantId") == fakeMerchantB {
			cents = 700
		}
		writeJSON(w, map[string]any{"merchantId": r.PathValue("merchantId"), "mode": "test", "currency": "USD",
			"availableInCents": cents, "pendingPayoutsInCents": 0, "pendingPayouts": []any{},
			"modes": map[string]any{"live": map[string]any{"availableInCents": 0, "pendingPayoutsInCents": 0}, "test": map[string]any{"availableInCents": cents, "pendingPayoutsInCents": 0}}})
	})
	// x-second-factor: recent — a key is made only with a stepped-up token.
	mux.HandleFunc("POST /v1/auth/step-up", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Code string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !strings.HasPrefix(bearer, "tok-") || in.Code != "654321" {
			writeError(w, http.StatusUnauthorized, "invalid_code")
			return
		}
		writeJSON(w, map[string]any{"status": "signed_in", "accessToken": bearer + "-su", "expiresAt": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("GET /v1/merchants/{merchantId}/api-keys", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"data": []any{}})
	})
	mux.HandleFunc("POST /v1/merchants/{merchantId}/api-keys", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("Authorization"), "-su") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "permission_error", "code": "step_up_required", "message": "Confirm with your second factor."}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"secretKey": "sk_test_fake_secret",
			"key": map[string]any{"id": "k1", "mode": "test", "prefix": "sk_test_fake", "createdAt": time.Now().UTC().Format(time.RFC3339), "revokedAt": nil}})
	})
	mux.HandleFunc("GET /v1/external/chains", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"data": []any{}, "pagination": map[string]any{"total": 0, "limit": 1000, "offset": 0, "hasMore": false, "totalPages": 0, "currentPage": 1}})
	})
	return mux
}

// The sign-in flow the auth plan describes, against a stand-in of its API: email and password,
// then the authentication code; the access token stays out of storage; a reload resumes the
// session with the refresh cookie; the merchant switcher lists the memberships (names as
// text) and the pages follow the chosen merchant and its role; sign out ends it.
func TestDashboardSignInFlow(t *testing.T) {
	ctx := browser(t)
	f := &fakeAuth{}
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	tctx, cancel := within(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/dashboard/")); err != nil {
		t.Fatal(err)
	}
	byLabel := func(text string) chromedp.JSPath {
		return chromedp.JSPath(`document.getElementById([...document.querySelectorAll("label")].find(l => l.textContent.trim() === ` + strconv.Quote(text) + `).htmlFor)`)
	}
	signIn := chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => b.textContent.trim() === "Sign in")`)
	waitJS(t, tctx, "the sign-in form", `[...document.querySelectorAll("label")].some(l => l.textContent.trim() === "Password")`, 15*time.Second)

	if err := chromedp.Do(tctx, chromedp.SendKeys(byLabel("Email"), "owner@example.com"), chromedp.SendKeys(byLabel("Password"), "wrong"),
		chromedp.Click(signIn)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the refusal", `document.querySelector("[role=alert]")?.textContent.includes("not right")`, 5*time.Second)
	// Clear the field the way React sees it (the value setter, then an input event).
	clearPassword := `(() => { const el = document.getElementById([...document.querySelectorAll("label")].find(l => l.textContent.trim() === "Password").htmlFor);
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, ""); el.dispatchEvent(new Event("input", {bubbles: true})); })()`
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](clearPassword), chromedp.SendKeys(byLabel("Password"), "correct horse"), chromedp.Click(signIn)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the second factor", `[...document.querySelectorAll("label")].some(l => l.textContent.trim() === "Authentication code")`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.SendKeys(byLabel("Authentication code"), "123456"), chromedp.Click(signIn)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the overview", `document.querySelector("main h1")?.textContent === "Overview" && document.body.innerText.includes("$123.45")`, 10*time.Second)
	waitJS(t, tctx, "the merchant switcher", `[...document.querySelectorAll("option")].map(o => o.textContent).join("|") === "Corner Bakery (owner)|<b>Second</b> Shop (viewer)"`, 5*time.Second)
	waitJS(t, tctx, "an owner may withdraw", `document.body.innerText.includes("New withdrawal")`, 2*time.Second)
	noToken := `!JSON.stringify(Object.entries(localStorage)).includes("tok-") && !JSON.stringify(Object.entries(sessionStorage)).includes("tok-") && !document.cookie.includes("tok-")`
	waitJS(t, tctx, "no token in storage", noToken, 2*time.Second)

	// A new key needs a recent second factor: the code is asked for inline, then the key made.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/settings/developers/api-keys"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the keys page", `[...document.querySelectorAll("button")].some(b => b.textContent === "Create secret key")`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => b.textContent === "Create secret key")`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the step-up prompt", `[...document.querySelectorAll("label")].some(l => l.textContent.trim() === "Authentication code")`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.SendKeys(byLabel("Authentication code"), "654321"),
		chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => b.textContent === "Confirm")`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the key, once", `document.querySelector(".secret-value code")?.textContent === "sk_test_fake_secret"`, 5*time.Second)
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/overview"`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the overview again", `document.body.innerText.includes("$123.45")`, 5*time.Second)

	// The other merchant: its balance, with the bearer token, and a viewer's page.
	choose := `(() => { const s = document.getElementById([...document.querySelectorAll("label")].find(l => l.textContent === "Merchant").htmlFor);
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, ` + strconv.Quote(fakeMerchantB) + `);
		s.dispatchEvent(new Event("change", {bubbles: true})); })()`
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](choose)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the second merchant's balance", `document.body.innerText.includes("$7.00") && !document.body.innerText.includes("New withdrawal")`, 5*time.Second)

	// A reload forgets the token and resumes with the refresh cookie.
	if err := chromedp.Do(tctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "the resumed session", `document.querySelector("main h1")?.textContent === "Overview" && document.body.innerText.includes("$7.00")`, 10*time.Second)

	if err := chromedp.Do(tctx, chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll("button")].find(b => b.textContent.startsWith("Sign out"))`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tctx, "signed out", `document.body.innerText.includes("You are signed out.")`, 5*time.Second)

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.logouts != 1 {
		t.Errorf("logouts: %d, want 1", f.logouts)
	}
	for _, b := range f.balances {
		if !strings.Contains(b, " Bearer tok-") {
			t.Errorf("a balance read without the bearer token: %q", b)
		}
	}
	if len(f.balances) == 0 || !strings.HasPrefix(f.balances[len(f.balances)-1], fakeMerchantB) {
		t.Errorf("balance reads %v: the last should be the second merchant's", f.balances)
	}
}
