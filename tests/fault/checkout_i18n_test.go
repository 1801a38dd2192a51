package fault

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The checkout page in the customer's language (issue 24), in a real Chromium against a real
// paymentsd on the devnet, a $1,234.50 payment (amounts with a thousands group):
//   - ?lang=es: Spanish texts and accessible names (the copy buttons, the QR code, the language
//     menu), <html lang="es">, 1234,50 USDC and the dollars as Spanish writes them, the quote's
//     countdown, axe-core; then paid with the devnet's test wallet: "Pagado. ¡Gracias!";
//   - ?lang=zh: Simplified Chinese, <html lang="zh">, 1,234.50 USDC;
//   - no ?lang=, the browser set to pt-BR (Accept-Language and navigator.languages by emulation):
//     Portuguese with Brazil's formats (1.234,50 USDC); the language menu then switches to
//     German, which reloads with ?lang=de and keeps the secret in the fragment;
//   - a browser preferring zh-TW, then fr-CA: French (Traditional Chinese only as a last
//     resort), Canadian formats; ?lang=xx (unknown) with a de-CH browser: German, 1’234.50 (or
//     1'234.50, as newer CLDR writes it).
//
// Amounts are checked against fixed strings where the CLDR data is settled (de, pt, zh, de-CH) and
// against Intl in the same browser for the rest (what the locale's separators are), and never
// on the copy button's figure, which stays 1234.50 whatever the language.
func TestCheckoutLanguagesInChromium(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	bin := paymentsdBinary(t)
	db := filepath.Join(t.TempDir(), "paymentsd.db")
	env := []string{"PAYMENTS_DEVNET=" + devnetAddr(t), "PAYMENTS_SERVE_UNWATCHED=false", "PAYMENTS_DEVNET_BLOCK_TIME=250ms",
		"PAYMENTS_WATCH_INTERVAL=100ms"}
	m := createMerchant(t, bin, db, env, "Corner Bakery")
	srv := newServer(t, bin, db)
	srv.env = env
	srv.start()
	// newPayment: the page's URL with query (before the fragment), and the USDC and ETH quotes.
	newPayment := func(order, query string) (url, usdc, eth string) {
		created := apiJSON(t, srv.base, m.SecretKey, http.MethodPost, "/v1/external/secretkey-auth/payments",
			`{"amount": 123450, "currency": "USD", "orderId": "`+order+`"}`)
		for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
			q := q.(map[string]any)
			if q["chainId"] != "eip155:1337" {
				continue
			}
			switch q["token"].(map[string]any)["symbol"] {
			case "USDC":
				usdc = q["id"].(string)
			case "ETH":
				eth = q["id"].(string)
			}
		}
		if usdc == "" || eth == "" {
			t.Fatal("no devnet USDC and ETH quotes")
		}
		base, frag, _ := strings.Cut(strings.Replace(created["paymentUrl"].(string), "http://localhost:", "http://127.0.0.1:", 1), "#")
		return base + query + "#" + frag, usdc, eth
	}
	open := func(tctx context.Context, url, quote string) {
		t.Helper()
		if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`input[value="`+quote+`"]`)),
			chromedp.Click(chromedp.CSS(`input[value="`+quote+`"]`))); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tctx, "the selected quote", `!document.getElementById("pay").hidden && document.getElementById("amount-asset").textContent !== ""`, 15*time.Second)
	}

	// Spanish by ?lang=es.
	es := langTab(t, ctx, "")
	url, usdc, eth := newPayment("pan-1", "?lang=es")
	open(es, url, usdc)
	checkLanguage(t, es, "es", "es")
	for _, want := range []string{"Pagar con", "Esperando tu pago.", "Envía exactamente", "Envía solo USDC en Devnet (ID de cadena 1337)",
		"Esta cotización es válida durante", "Dirección de destino", "Abrir en una billetera"} {
		waitText(t, es, want, 5*time.Second)
	}
	checkAmounts(t, es, usdc, eth, "")
	for _, n := range []struct{ role, name string }{{"button", "Copiar la cantidad"}, {"button", "Copiar la dirección"},
		{"image", "Código QR de la solicitud de pago"}, {"combobox", "Idioma"}} {
		if _, err := axNode(es, n.role, n.name, 5*time.Second); err != nil {
			t.Errorf("Spanish accessible name: %v", err)
		}
	}
	waitJS(t, es, "the Spanish title", `document.title === "Pagar a Corner Bakery"`, 5*time.Second)
	waitJS(t, es, "?lang= kept on the page's own links", `checkoutI18n.href("/refund/r1#s") === "/refund/r1?lang=es#s"`, time.Second)
	checkPage(t, es, axe, "checkout in Spanish")
	shot(t, es, "checkout-es-phone-light")
	press(t, es, "button", "Pagar con una billetera de prueba (devnet)")
	waitJS(t, es, "paid, in Spanish", `document.getElementById("status").textContent === "Pagado. ¡Gracias!"`, 40*time.Second)
	checkPage(t, es, axe, "checkout in Spanish, paid")

	// Simplified Chinese by ?lang=zh.
	zh := langTab(t, ctx, "")
	url, usdc, eth = newPayment("pan-2", "?lang=zh")
	open(zh, url, usdc)
	checkLanguage(t, zh, "zh", "zh")
	for _, want := range []string{"选择付款币种", "正在等待您的付款。", "请准确发送", "只能在 Devnet（链 ID 1337）上发送 USDC", "此报价在"} {
		waitText(t, zh, want, 5*time.Second)
	}
	checkAmounts(t, zh, usdc, eth, "1,234\\.50")
	if _, err := axNode(zh, "button", "复制金额", 5*time.Second); err != nil {
		t.Errorf("Chinese accessible name: %v", err)
	}
	checkPage(t, zh, axe, "checkout in Chinese")
	shot(t, zh, "checkout-zh-phone-light")

	// The browser's language: pt-BR, then German from the menu.
	pt := langTab(t, ctx, "pt-BR,pt,en")
	url, usdc, eth = newPayment("pao-3", "")
	open(pt, url, usdc)
	checkLanguage(t, pt, "pt", "pt-BR")
	waitText(t, pt, "Pagar com", 5*time.Second)
	waitText(t, pt, "Aguardando seu pagamento.", 5*time.Second)
	checkAmounts(t, pt, usdc, eth, "1\\.234,50")
	checkPage(t, pt, axe, "checkout in Portuguese (the browser's language)")
	fill(t, pt, "Idioma", "de") // the menu, named in Portuguese: as a person picks an option

	waitJS(t, pt, "German from the menu", `location.search === "?lang=de" && location.hash.startsWith("#secret=") && document.documentElement.lang === "de"`, 15*time.Second)
	waitText(t, pt, "Bezahlen mit", 10*time.Second)
	checkLanguage(t, pt, "de", "de")
	checkAmounts(t, pt, usdc, eth, "1\\.234,50")

	// Traditional Chinese first: the next preferred language the pages have (fr-CA) wins.
	fr := langTab(t, ctx, "zh-TW,zh,fr-CA")
	url, usdc, eth = newPayment("pain-4", "")
	open(fr, url, usdc)
	checkLanguage(t, fr, "fr", "fr-CA")
	waitText(t, fr, "Payer avec", 5*time.Second)
	checkAmounts(t, fr, usdc, eth, "")

	// An unknown ?lang= is ignored: the browser's de-CH, with Swiss grouping.
	ch := langTab(t, ctx, "de-CH")
	url, usdc, eth = newPayment("brot-5", "?lang=xx")
	open(ch, url, usdc)
	checkLanguage(t, ch, "de", "de-CH")
	waitText(t, ch, "Senden Sie genau", 5*time.Second)
	checkAmounts(t, ch, usdc, eth, "1[’']234\\.50") // ’ before CLDR 42, ' since
}

// langTab opens a tab in a fresh browser context whose language is acceptLanguage (the
// Accept-Language header and navigator.languages, as Chromium's emulation sets them), or the
// browser's own when empty.
func langTab(t *testing.T, ctx context.Context, acceptLanguage string) context.Context {
	t.Helper()
	tctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	watchCSP(t, tctx)
	if acceptLanguage != "" {
		ua, err := chromedp.Run(tctx, chromedp.Evaluate[string](`navigator.userAgent`))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: acceptLanguage})
			return err
		})); err != nil {
			t.Fatal(err)
		}
	}
	tctx, cancel2 := within(tctx, 120*time.Second)
	t.Cleanup(cancel2)
	return tctx
}

// checkLanguage: the page chose lang (its texts, <html lang>) and formats for locale.
func checkLanguage(t *testing.T, ctx context.Context, lang, locale string) {
	t.Helper()
	waitJS(t, ctx, "the language "+lang+" ("+locale+")", `document.documentElement.lang === `+strconv.Quote(lang)+
		` && checkoutI18n.lang === `+strconv.Quote(lang)+` && checkoutI18n.locale === `+strconv.Quote(locale)+
		` && document.getElementById("language").value === `+strconv.Quote(lang), 5*time.Second)
}

// checkAmounts: the $1,234.50 payment's figures on the page, the USDC quote selected. The token
// amounts are amounts.js's digits with the locale's separators (want, when given, matches 1234.50
// as the locale writes it: a regular expression); the dollars are Intl's currency format; the
// copy button copies 1234.50.
func checkAmounts(t *testing.T, ctx context.Context, usdc, eth, want string) {
	t.Helper()
	loc := `checkoutI18n.locale`
	figure := `new Intl.NumberFormat(` + loc + `, {minimumFractionDigits: 2}).format(1234.5)`
	if want != "" {
		waitJS(t, ctx, "1234.50 written "+want, `/^`+want+`$/.test(`+figure+`)`, time.Second)
	}
	label := func(id string) string {
		return `document.querySelector('input[value="` + id + `"]').closest("label").textContent`
	}
	checks := []struct{ what, expr string }{
		{"the dollars", `document.getElementById("amount").textContent === new Intl.NumberFormat(` + loc + `, {style: "currency", currency: "USD"}).format(1234.5)`},
		{"the USDC quote", label(usdc) + `.endsWith(` + figure + ` + " USDC")`},
		{"the ETH quote", label(eth) + `.endsWith(new Intl.NumberFormat(` + loc + `, {minimumFractionDigits: 4}).format(0.4115) + " ETH")`},
		{"the amount to send", `document.getElementById("amount-asset").textContent === ` + figure + ` + " USDC"`},
		{"the figure copied", `document.getElementById("amount-asset").dataset.value === "1234.50"`},
		{"exact beyond 2^53", `checkoutI18n.amount("123456789012345678901234567890", 18).replace(/[^0-9]/g, "") === "12345678901234567890123456789"`},
	}
	for _, c := range checks {
		waitJS(t, ctx, c.what, c.expr, 5*time.Second)
	}
}
