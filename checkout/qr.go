package checkout

import (
	"fmt"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// QRSVG draws text as a QR code in SVG: one path of unit squares on a white ground with the
// standard four-module quiet zone, scaled by the viewer (shape-rendering crispEdges keeps the
// modules sharp at any size). Error correction M: a phone camera reads it from a screen.
func QRSVG(text string) ([]byte, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("checkout: QR code: %w", err)
	}
	q.DisableBorder = true
	bits := q.Bitmap()
	const quiet = 4
	size := len(bits) + 2*quiet
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges" role="img" aria-label="Payment QR code">`, size, size)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, size, size)
	for y, row := range bits {
		for x, on := range row {
			if on {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x+quiet, y+quiet)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String()), nil
}

// QuoteQR draws the EIP-681 URI of one of an opened payment's quotes.
func (s *Service) QuoteQR(p Payment, quoteID string) ([]byte, error) {
	for _, q := range p.Quotes {
		if q.ID.String() == strings.ToLower(quoteID) {
			return QRSVG(PaymentURI(q.Token, p.DepositAddress.Address, q.ExpectedAmountAsset))
		}
	}
	return nil, errQuoteNotFound
}
