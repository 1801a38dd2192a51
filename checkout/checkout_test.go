package checkout_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/qrtest"
)

func TestPaymentURIs(t *testing.T) {
	base := domain.Chain{ID: 8453}
	usdc := domain.Token{Chain: base, AssetType: domain.ERC20, ContractAddress: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", Decimals: 6}
	eth := domain.Token{Chain: base, AssetType: domain.Native, Decimals: 18}
	to := "0x9858effd232b4033e47d90003d41ec34ecaeda94"
	assert.Equal(t, "ethereum:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913@8453/transfer?address="+to+"&uint256=25000000",
		checkout.PaymentURI(usdc, to, decimal.RequireFromString("25000000")))
	// A wei amount far beyond float precision stays an exact integer, never 1.2e+22.
	assert.Equal(t, "ethereum:"+to+"@8453?value=12345678901234567890123",
		checkout.PaymentURI(eth, to, decimal.RequireFromString("12345678901234567890123")))
	// A deposit: the customer chooses the amount, the URI names none.
	assert.Equal(t, "ethereum:"+to+"@8453", checkout.PaymentURI(eth, to, decimal.Zero))
	assert.Equal(t, "ethereum:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913@8453/transfer?address="+to, checkout.PaymentURI(usdc, to, decimal.Zero))
}

func TestRedirectURLCarriesCustomMetadata(t *testing.T) {
	meta := `{"order":7,"note":"a&b"}`
	assert.Equal(t, "https://shop.example/done?customMetadata=%7B%22order%22%3A7%2C%22note%22%3A%22a%26b%22%7D",
		checkout.RedirectURL("https://shop.example/done", &meta))
	assert.Equal(t, "https://shop.example/done?x=1&customMetadata=%7B%22order%22%3A7%2C%22note%22%3A%22a%26b%22%7D",
		checkout.RedirectURL("https://shop.example/done?x=1", &meta))
	assert.Equal(t, "https://shop.example/done", checkout.RedirectURL("https://shop.example/done", nil))
	one := "x"
	assert.Equal(t, "https://shop.example/thanks?a=1&customMetadata=x#top", checkout.RedirectURL("https://shop.example/thanks?a=1#top", &one))
}

// The QR code drawn on the server decodes (ZXing) to exactly the URI.
func TestQRSVGDecodesToTheURI(t *testing.T) {
	for _, uri := range []string{
		"ethereum:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913@8453/transfer?address=0x9858effd232b4033e47d90003d41ec34ecaeda94&uint256=25000000",
		"ethereum:0x9858effd232b4033e47d90003d41ec34ecaeda94@1337?value=8333333333333334",
	} {
		svg, err := checkout.QRSVG(uri)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(svg), "<svg"))
		assert.Equal(t, uri, qrtest.DecodeSVG(t, svg))
	}
}
