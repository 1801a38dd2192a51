package fault

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/checkout"
)

// The refund claim page in the customer's language (issue 24), against the stand-in claim API
// of TestRefundClaimPageInChromium:
//   - ?lang=fr: French texts, field and button names, <html lang="fr">, 1,50 USDC, the claim's
//     deadline as French writes dates (Intl in the same browser), a mistyped address refused
//     in French; axe-core;
//   - a German browser (de-DE) with a wallet that paid: "Go Test Wallet verbinden", signed and
//     claimed in German;
//   - a catalogue whose Spanish lacks a message (served in place of the embedded one): that
//     message in English, everything else in Spanish.
func TestRefundClaimPageLanguagesInChromium(t *testing.T) {
	ctx := browser(t)
	axe := axeSource(t)
	site := newClaimSite(t)
	payerKey, payer, api := site.payerKey, site.payer, site.api
	visit := func(tctx context.Context, refund, query string) {
		site.visit(t, tctx, refund, query, api.secret(refund))
	}

	// French by ?lang=fr, no wallet: the typed address.
	fr := langTab(t, ctx, "")
	r1 := api.add(false)
	visit(fr, r1, "?lang=fr")
	waitJS(t, fr, "French", `document.documentElement.lang === "fr" && checkoutI18n.locale === "fr"`, 10*time.Second)
	for _, want := range []string{"Votre remboursement", "De la part de <b>Corner</b> Bakery", "1,50 USDC", "Réseau", "Devnet (ID de chaîne 1337)",
		"Aucun portefeuille de navigateur n’a été trouvé", "Choisissez où le recevoir."} {
		waitText(t, fr, want, 10*time.Second)
	}
	waitJS(t, fr, "the deadline in French", `document.getElementById("expires").textContent === new Intl.DateTimeFormat("fr", {dateStyle: "medium", timeStyle: "short"}).format(Date.parse("2026-12-28T10:00:00Z")) && /2026/.test(document.getElementById("expires").textContent)`, 5*time.Second)
	checkPage(t, fr, axe, "claim page in French")
	fill(t, fr, "Adresse où recevoir le remboursement", "0x1234")
	press(t, fr, "button", "Réclamer vers cette adresse")
	waitText(t, fr, "Saisissez l’adresse sous la forme 0x suivi de 40 caractères hexadécimaux.", 5*time.Second)
	checkPage(t, fr, axe, "claim page in French, a mistyped address")
	shot(t, fr, "refund-claim-fr-phone-light")

	// A German browser, a wallet that paid.
	w := newTestWallet(payerKey, 1337)
	de := langTab(t, ctx, "de-DE,de")
	injectWallet(t, de, w)
	r2 := api.add(true)
	visit(de, r2, "")
	press(t, de, "button", "Go Test Wallet verbinden")
	waitText(t, de, "Verbunden:", 10*time.Second)
	press(t, de, "button", "Signieren und Rückerstattung anfordern")
	waitText(t, de, "Angefordert. Die Rückerstattung ist unterwegs", 10*time.Second)
	if c := api.claimOf(r2); c.Recipient != payer || c.Source != "payer_signature" {
		t.Fatalf("the signed claim reached the API as %+v", c)
	}
	checkPage(t, de, axe, "claim page in German, claimed")

	// Spanish without one message: that one in English.
	var cat map[string]map[string]string
	if err := json.Unmarshal(checkout.Catalogue, &cat); err != nil {
		t.Fatal(err)
	}
	delete(cat["es"], "refund.title")
	b, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	js, err := checkout.I18nScript(b)
	if err != nil {
		t.Fatal(err)
	}
	api.mu.Lock()
	api.i18nJS = js
	api.mu.Unlock()
	es := langTab(t, ctx, "")
	r3 := api.add(false)
	visit(es, r3, "?lang=es")
	waitText(t, es, "Reclamar a esta dirección", 10*time.Second)
	waitJS(t, es, "English for the missing message", `document.getElementById("title").textContent === `+strconv.Quote("Your refund")+
		` && document.documentElement.lang === "es" && checkoutI18n.t("refund.title") === "Your refund" && checkoutI18n.t("refund.network") === "Red"`, 5*time.Second)
}
