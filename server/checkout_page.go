package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
)

// registerCheckoutPage serves the hosted checkout page at GET /pay/{paymentId} (what paymentUrl
// points at), its assets, and, when a devnet is served, its test-wallet payment — opened by the
// payment's secret through the payment-secret API's guard, with the same budgets and answers.
// The refund claim page (/refund/{refundId}) shares its assets.
func registerCheckoutPage(e *echo.Echo, guard *paymentSecretGuard, devnetPay checkout.DevnetPayer) {
	registerRefundPage(e)
	e.GET("/pay/assets/:name", func(c echo.Context) error {
		b, typ, err := checkout.Asset(c.Param("name"))
		if errors.Is(err, fs.ErrNotExist) {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache") // cheap to revalidate; follows the binary's version
		return c.Blob(http.StatusOK, typ, b)
	})
	e.GET("/pay/:paymentId", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", checkout.PageCSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		id, err := uuid.Parse(c.Param("paymentId"))
		if err != nil {
			return echo.NewHTTPError(http.StatusNotFound) // the page of nothing: the API says so too
		}
		b, err := checkout.PageHTML(id.String(), devnetPay != nil)
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, b)
	})
	if devnetPay == nil {
		return
	}
	e.POST("/pay/:paymentId/devnet-pay", func(c echo.Context) error {
		p, err := guard.openID(c, c.Param("paymentId"))
		if err != nil {
			return err
		}
		var in struct {
			QuoteID uuid.UUID `json:"quoteId"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 1024)).Decode(&in); err != nil {
			return domain.Invalid(domain.CodeParameterInvalid, "quoteId", "send {\"quoteId\": \"…\"}")
		}
		tx, err := devnetPay(c.Request().Context(), p, in.QuoteID)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"txHash": tx})
	})
}
