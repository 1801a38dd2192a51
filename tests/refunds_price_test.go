package tests

import (
	"context"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/pricing"
)

// pricesDown is a price source that answers nothing: the market API is down.
type pricesDown struct{}

func (pricesDown) PriceUSD(context.Context, pricing.Asset) (decimal.Decimal, error) {
	return decimal.Zero, pricing.ErrPriceUnavailable
}

// A refund in cents needs the token's price; with the price source down it is refused with 503
// price_unavailable (the server's state, not the client's fault), nothing is created or debited,
// and the same refund given in the token's units still works.
func TestRefundWhileThePriceSourceIsDown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		key := m.SecretKey
		e.fund(key, 10_000)
		pid, _, _ := e.settledPayment(key, 2_000, 0)
		start := e.balance(m.Merchant.ID)
		e.app.Refunds.Prices = pricesDown{}

		r := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 500, "recipientAddress": recipient})
		requireRefused(t, r, http.StatusServiceUnavailable, "price_unavailable")
		_, typ, _ := r.errorFields(t)
		assert.Equal(t, "api_error", typ)
		assert.Equal(t, start, e.balance(m.Merchant.ID), "nothing debited")
		list := e.do(http.MethodGet, refundsPath+"?paymentId="+pid, key, nil)
		require.Equal(t, http.StatusOK, list.Status, string(list.Body))
		assert.Empty(t, list.JSON(t)["data"], "nothing created")

		r = e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountAsset": "5000000", "recipientAddress": recipient})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, start-500, e.balance(m.Merchant.ID), "units need no price: debited at the settlement's rate")
	})
}
