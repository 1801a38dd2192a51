package checkout

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/google/uuid"
)

// The page behind paymentUrl: a static shell (the payment's secret stays in the URL fragment and
// never reaches the server), a little plain JavaScript and CSS embedded in the binary, no
// third-party host. The script talks to the payment-secret API.

//go:embed page/index.html
var pageHTML string

//go:embed page/assets
var pageAssets embed.FS

var pageTemplate = template.Must(template.New("checkout").Parse(pageHTML))

// Catalogue is the pages' strings (checkout/page/i18n.json): for each language code, its
// messages by key, English ("en") the reference every other language has every key of. The
// Go tests read it as it is; the browser gets it in i18n.js (I18nScript).
//
//go:embed page/i18n.json
var Catalogue []byte

// i18nScript is the asset i18n.js as served: the catalogue as a constant, then the script.
var i18nScript = mustI18nScript(Catalogue)

func mustI18nScript(catalogue []byte) []byte {
	b, err := I18nScript(catalogue)
	if err != nil {
		panic(err)
	}
	return b
}

// I18nScript writes the served i18n.js for a catalogue: `const checkoutCatalogue = {…};` (the
// JSON, compacted: JSON is JavaScript) in front of page/assets/i18n.js, which reads it. One
// script from this origin, so the page's CSP needs nothing more, and the messages are there
// before the other scripts run, with no request of their own.
func I18nScript(catalogue []byte) ([]byte, error) {
	var cat map[string]map[string]string
	if err := json.Unmarshal(catalogue, &cat); err != nil {
		return nil, fmt.Errorf("checkout/page/i18n.json: %w", err)
	}
	if len(cat["en"]) == 0 {
		return nil, fmt.Errorf("checkout/page/i18n.json: no English messages")
	}
	js, err := pageAssets.ReadFile("page/assets/i18n.js")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("// The catalogue: checkout/page/i18n.json.\nconst checkoutCatalogue = ")
	if err := json.Compact(&b, catalogue); err != nil {
		return nil, err
	}
	b.WriteString(";\n")
	b.Write(js)
	return b.Bytes(), nil
}

// PageCSP allows the page's own script, style and API, its QR images (blob:), the merchant's
// logo (an https image) and the icons browser wallets announce (EIP-6963: data: URIs): nothing
// else, nowhere else. No inline script, no eval (wallet.js is a plain bundle).
const PageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: https: data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// DevnetPayer pays a quote of an opened payment from a devnet test account (the "Pay with a
// test wallet" button); nil when no devnet is served.
type DevnetPayer func(ctx context.Context, p Payment, quoteID uuid.UUID) (txHash string, err error)

// PageHTML renders the page's shell for a payment id.
func PageHTML(paymentID string, devnet bool) ([]byte, error) {
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		PaymentID string
		Devnet    bool
	}{paymentID, devnet})
	return b.Bytes(), err
}

// Asset returns an embedded asset of the page (checkout.js, checkout.css) and its type;
// i18n.js carries the catalogue.
func Asset(name string) ([]byte, string, error) {
	name = path.Clean("/" + name)[1:]
	if strings.Contains(name, "/") {
		return nil, "", fs.ErrNotExist
	}
	b, err := pageAssets.ReadFile("page/assets/" + name)
	if err != nil {
		return nil, "", err
	}
	if name == "i18n.js" {
		b = i18nScript
	}
	switch path.Ext(name) {
	case ".js":
		return b, "text/javascript; charset=utf-8", nil
	case ".css":
		return b, "text/css; charset=utf-8", nil
	}
	return b, http.DetectContentType(b), nil
}
