package checkout

import (
	"bytes"
	_ "embed"
	"html/template"
)

// The page behind a refund's claimUrl (/refund/{refundId}#<secret>): like the checkout page, a
// static shell whose script reads the claim secret from the fragment (never sent to the server)
// and talks to the refund-claim API with it. The customer connects the wallet that paid
// (EIP-6963 discovery, window.ethereum as a fallback) and signs the refund's EIP-712 typed data
// naming their address, or types another address, which waits for the merchant's approval.
// Its assets (refund.js, and checkout.css for the look) are served with the checkout page's.

//go:embed page/refund.html
var refundHTML string

var refundTemplate = template.Must(template.New("refund").Parse(refundHTML))

// RefundPageCSP is PageCSP's policy, except images: a wallet announced by EIP-6963 carries its
// icon as a data: URI (no https images: the page shows no merchant logo). No inline script,
// no eval, nothing from another host.
const RefundPageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// RefundPageHTML renders the claim page's shell for a refund id.
func RefundPageHTML(refundID string) ([]byte, error) {
	var b bytes.Buffer
	err := refundTemplate.Execute(&b, struct{ RefundID string }{refundID})
	return b.Bytes(), err
}
