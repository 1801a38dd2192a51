package tests

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Review of issue 23's refunds against the payout policy: the address book binds every address a
// team member (or a secret key) names, not only a withdrawal's.

// With allowlistOnly on, a secret key cannot withdraw to an address of its choosing; nor may it
// refund a payment to one (a refund's recipientAddress is the merchant's choice, not the
// customer's proof). A saved address past its cooling-off is allowed; a customer's claim is not
// bound by the address book.
func TestRefundRecipientFollowsTheAllowlist(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		pid, _, _ := e.settledPayment(p.key, 5_000, 0)
		e.settings(p, map[string]any{"allowlistOnly": true})
		start := e.balance(p.id)

		refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}),
			"recipient_not_in_address_book", "recipientAddress")
		refused(t, e.do(http.MethodPost, "/v1/merchants/"+p.id.String()+"/payments/"+pid+"/refunds", "",
			map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}, p.admin...),
			"recipient_not_in_address_book", "recipientAddress")
		assert.Equal(t, start, e.balance(p.id), "nothing debited")

		book := p.base + "/address-book"
		r := e.do(http.MethodPost, book, "", map[string]any{"label": "Customer", "chainId": "eip155:8453", "address": recipient}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient}),
			"recipient_cooling_off", "recipientAddress")

		e.settings(p, map[string]any{"addressCoolingOffHours": 0})
		require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, book+"/"+r.JSON(t)["id"].(string), "", nil, p.admin...).Status)
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Customer", "chainId": "eip155:8453", "address": recipient}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": recipient})
		require.Equal(t, http.StatusCreated, r.Status, "a saved, usable address: %s", r.Body)

		// Without an address the refund waits for its customer's claim, which the address book does not bind.
		r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 500})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
		r = e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": "0x1111111111111111111111111111111111111111"},
			"X-Service-Refund-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		got := e.refundOf(p.key, id)
		assert.Equal(t, "typed_address", got["recipientSource"])
		assert.Equal(t, true, got["approval"].(map[string]any)["required"], "a typed address still waits for a person")
	})
}
