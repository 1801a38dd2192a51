package checkout_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/checkout"
)

// The claim page is a static shell: the refund id in a data attribute (escaped), its scripts and
// style from this origin, no inline script; the policy allows no eval, no inline script and no
// other host.
func TestRefundPage(t *testing.T) {
	b, err := checkout.RefundPageHTML(`01a20b10-0000-7000-8000-000000000001"><script>`)
	require.NoError(t, err)
	page := string(b)
	assert.Contains(t, page, `data-refund-id="01a20b10-0000-7000-8000-000000000001&#34;&gt;&lt;script&gt;"`)
	// The catalogue, the amounts' formatter, the wallets' discovery (deferred scripts run in
	// order), then the page's own.
	assert.Contains(t, page, `<script src="/pay/assets/i18n.js" defer></script>
<script src="/pay/assets/amounts.js" defer></script>
<script src="/pay/assets/wallets.js" defer></script>
<script src="/pay/assets/refund.js" defer></script>`)
	assert.Equal(t, 4, strings.Count(page, "<script"), "four scripts, all from this origin")
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		assert.NotContains(t, checkout.RefundPageCSP, bad)
	}
	assert.Contains(t, checkout.RefundPageCSP, "script-src 'self';")
	js, typ, err := checkout.Asset("refund.js")
	require.NoError(t, err)
	assert.Equal(t, "text/javascript; charset=utf-8", typ)
	for _, want := range []string{"checkoutWallets", "eth_signTypedData_v4", "X-Service-Refund-Secret"} {
		assert.Contains(t, string(js), want)
	}
	wallets, _, err := checkout.Asset("wallets.js")
	require.NoError(t, err)
	for _, want := range []string{"eip6963:requestProvider", "eip6963:announceProvider", "window.ethereum"} {
		assert.Contains(t, string(wallets), want)
	}
}
