package server

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/checkout"
)

// registerRefundPage serves the hosted refund claim page at GET /refund/{refundId} (what a
// refund's claimUrl points at; the claim secret is its fragment). Its script and style are the
// checkout page's assets (/pay/assets/); it talks to the refund-claim API only.
func registerRefundPage(e *echo.Echo) {
	e.GET("/refund/:refundId", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", checkout.RefundPageCSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		id, err := uuid.Parse(c.Param("refundId"))
		if err != nil {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		b, err := checkout.RefundPageHTML(id.String())
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, b)
	})
}
