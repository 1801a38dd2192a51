package checkout

import (
	"bytes"
	"context"
	"embed"
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

// Asset returns an embedded asset of the page (checkout.js, checkout.css) and its type.
func Asset(name string) ([]byte, string, error) {
	name = path.Clean("/" + name)[1:]
	if strings.Contains(name, "/") {
		return nil, "", fs.ErrNotExist
	}
	b, err := pageAssets.ReadFile("page/assets/" + name)
	if err != nil {
		return nil, "", err
	}
	switch path.Ext(name) {
	case ".js":
		return b, "text/javascript; charset=utf-8", nil
	case ".css":
		return b, "text/css; charset=utf-8", nil
	}
	return b, http.DetectContentType(b), nil
}
