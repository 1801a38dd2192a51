package fault

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserHelpersFindByAccessibleName checks the test helpers themselves on a small page: a
// field found by its label, a button by its name, a missing name refused, axe-core run, and a
// CSP violation and a dialog seen.
func TestBrowserHelpersFindByAccessibleName(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		if r.URL.Path == "/app.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte(`document.getElementById("go").addEventListener("click", () => {
				document.getElementById("out").textContent = "Hello " + document.getElementById("n").value; });`))
			return
		}
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>t</title><main><h1>Form</h1>
			<label for="n">Your name</label><input id="n"><button id="go" type="button">Greet</button>
			<p id="out"></p><script src="/app.js"></script><script>alert(1)</script></main>`))
	}))
	defer srv.Close()
	watchCSP(t, ctx)
	tctx, cancel := within(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	fill(t, tctx, "Your name", "Ada")
	press(t, tctx, "button", "Greet")
	waitText(t, tctx, "Hello Ada", 5*time.Second)
	if present(tctx, "button", "Nothing of the kind") {
		t.Fatal("present() found a button that is not there")
	}
	if v := cspViolations(tctx); len(v) != 1 {
		t.Fatalf("the inline script should be one CSP violation: %v", v)
	}
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[bool](axe+"\n;true")); err != nil {
		t.Fatalf("axe-core does not load: %v", err)
	}
}
