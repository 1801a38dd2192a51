package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser tests drive pages the way a person (or a screen reader) finds things: by role and
// accessible name, as Chromium computes them (Accessibility.queryAXTree) — never by CSS classes or
// ids, so a button that loses its name fails the test as it would fail its user.

// axNode finds the one element with this role and accessible name, waiting up to timeout.
func axNode(ctx context.Context, role, name string, timeout time.Duration) (cdp.BackendNodeID, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		id, err := chromedp.Run(ctx, chromedp.Action[cdp.BackendNodeID](func(ctx context.Context, t *chromedp.Target) (cdp.BackendNodeID, error) {
			doc, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: "document"})
			if err != nil {
				return 0, err
			}
			res, err := cdp.Call(ctx, t, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{ObjectID: doc.Result.ObjectID, AccessibleName: name, Role: role})
			if err != nil {
				return 0, err
			}
			var found []cdp.BackendNodeID
			for _, n := range res.Nodes {
				if !n.Ignored && n.BackendDOMNodeID != 0 {
					found = append(found, n.BackendDOMNodeID)
				}
			}
			if len(found) != 1 {
				return 0, fmt.Errorf("%d elements with role %s named %q", len(found), role, name)
			}
			return found[0], nil
		}))
		if err == nil {
			return id, nil
		}
		last = err.Error()
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s (waited %s)", last, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// onNode calls a function on the element (this) with JSON arguments and returns its JSON result.
func onNode(ctx context.Context, id cdp.BackendNodeID, fn string, args ...any) (json.RawMessage, error) {
	return chromedp.Run(ctx, chromedp.Action[json.RawMessage](func(ctx context.Context, t *chromedp.Target) (json.RawMessage, error) {
		obj, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id})
		if err != nil {
			return nil, err
		}
		var cargs []*runtime.CallArgument
		for _, a := range args {
			b, _ := json.Marshal(a)
			cargs = append(cargs, &runtime.CallArgument{Value: b})
		}
		res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: fn,
			ObjectID: obj.Object.ObjectID, Arguments: cargs, ReturnByValue: ptrTrue(), AwaitPromise: ptrTrue()})
		if err != nil {
			return nil, err
		}
		if res.ExceptionDetails != nil {
			return nil, fmt.Errorf("%s", res.ExceptionDetails.Text)
		}
		return json.RawMessage(res.Result.Value), nil
	}))
}

// press clicks the button (or link, with role "link") of this accessible name.
func press(t *testing.T, ctx context.Context, role, name string) {
	t.Helper()
	id, err := axNode(ctx, role, name, 15*time.Second)
	if err != nil {
		t.Fatalf("press %s %q: %v\nthe page says:\n%s", role, name, err, pageText(ctx))
	}
	if _, err := onNode(ctx, id, `function() { this.scrollIntoView({block: "center"}); this.click(); }`); err != nil {
		t.Fatalf("press %s %q: %v", role, name, err)
	}
}

// fill sets the value of the field labelled name (a textbox, or a combobox: a select) the way
// typing does for React: through the native setter, then input and change events.
func fill(t *testing.T, ctx context.Context, name, value string) {
	t.Helper()
	var id cdp.BackendNodeID
	var err error
	for _, role := range []string{"textbox", "combobox", "spinbutton"} {
		if id, err = axNode(ctx, role, name, 200*time.Millisecond); err == nil {
			break
		}
	}
	if err != nil {
		if id, err = axNode(ctx, "textbox", name, 15*time.Second); err != nil {
			t.Fatalf("fill %q: %v\nthe page says:\n%s", name, err, pageText(ctx))
		}
	}
	if _, err := onNode(ctx, id, `function(v) {
		const d = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(this), "value");
		d.set.call(this, v);
		this.dispatchEvent(new Event("input", {bubbles: true}));
		this.dispatchEvent(new Event("change", {bubbles: true}));
	}`, value); err != nil {
		t.Fatalf("fill %q: %v", name, err)
	}
}

// fieldValue reads the value of the field labelled name (a read-only field showing a secret).
func fieldValue(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	id, err := axNode(ctx, "textbox", name, 15*time.Second)
	if err != nil {
		t.Fatalf("field %q: %v\nthe page says:\n%s", name, err, pageText(ctx))
	}
	raw, err := onNode(ctx, id, `function() { return this.value; }`)
	if err != nil {
		t.Fatalf("field %q: %v", name, err)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("field %q: %v", name, err)
	}
	return v
}

// present reports whether an element of this role and name is on the page now.
func present(ctx context.Context, role, name string) bool {
	_, err := axNode(ctx, role, name, 0)
	return err == nil || !strings.HasPrefix(err.Error(), "0 elements")
}

func pageText(ctx context.Context) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return s
}

// waitText waits for the page's visible text to contain want.
func waitText(t *testing.T, ctx context.Context, want string, timeout time.Duration) {
	t.Helper()
	waitJS(t, ctx, "the text "+strconv.Quote(want), `document.body.innerText.includes(`+strconv.Quote(want)+`)`, timeout)
}

// watchCSP records every Content-Security-Policy violation of the pages this tab loads from now
// on (a listener added before any page script runs); cspViolations reads them.
func watchCSP(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.__cspViolations = [];
			document.addEventListener("securitypolicyviolation", e =>
				window.__cspViolations.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline")));`})
		return err
	})); err != nil {
		t.Fatal(err)
	}
}

func cspViolations(ctx context.Context) []string {
	v, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__cspViolations || []`))
	return v
}

// failOnDialogs makes any alert or prompt a test failure: merchant-supplied text planted with
// markup must never run as script. A confirm() the app asks itself is accepted and counted.
func failOnDialogs(t *testing.T, ctx context.Context) *atomic.Int64 {
	t.Helper()
	var confirms atomic.Int64
	var bad atomic.Value
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			if d.Type == page.DialogTypeConfirm {
				confirms.Add(1)
			} else {
				bad.Store(string(d.Type) + ": " + d.Message)
			}
			go func() {
				_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
					return err
				}))
			}()
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v := bad.Load(); v != nil {
			t.Errorf("a page opened a dialog (a planted script ran?): %v", v)
		}
	})
	return &confirms
}

// axeSource reads axe-core from tests/browser (scripts/ensure-browser-deps.sh installs it).
func axeSource(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tests", "browser", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core missing (make test runs scripts/ensure-browser-deps.sh): %v", err)
		}
		t.Skipf("axe-core not installed: run scripts/ensure-browser-deps.sh (%v)", err)
	}
	return string(b)
}

// checkPage runs axe-core on the page as it is and fails on any serious or critical violation,
// and on any CSP violation so far.
func checkPage(t *testing.T, ctx context.Context, axe, what string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+"\n;true")); err != nil {
		t.Fatalf("%s: inject axe-core: %v", what, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
			v.id + " (" + v.impact + "): " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "))))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe-core: %v", what, err)
	}
	var bad []string
	if err := json.Unmarshal([]byte(out), &bad); err != nil {
		t.Fatalf("%s: axe-core answer %q: %v", what, out, err)
	}
	if len(bad) > 0 {
		t.Errorf("%s: axe-core finds serious or critical violations:\n  %s", what, strings.Join(bad, "\n  "))
	}
	if v := cspViolations(ctx); len(v) > 0 {
		t.Errorf("%s: Content-Security-Policy violations: %v", what, v)
	}
}

// viewport sets the window's size and colour scheme (desktop or phone, light or dark).
func viewport(ctx context.Context, width, height int64, mobile bool, scheme string) error {
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: width, Height: height, DeviceScaleFactor: 1, Mobile: mobile}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	}))
}

func ptrTrue() *bool { b := true; return &b }
