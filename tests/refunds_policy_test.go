package tests

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
)

// Refunds are money leaving the merchant as withdrawals are: the rolling daily limit counts both
// (a cancelled refund gives its cents back to the day), and a sanctioned refund recipient is
// refused and audited as a withdrawal's is — given by the merchant or typed on the claim page.

const refundPayee = "0x2222222222222222222222222222222222222222"

func TestRefundsCountTowardTheDailyLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		pid, _, _ := e.settledPayment(p.key, 20_000, 0)
		e.settings(p, map[string]any{"dailyLimitCents": 10_000})
		r := e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 6_000, "recipientAddress": refundPayee})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		refundID := r.JSON(t)["id"].(string)
		balance := e.balance(p.id)

		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(4_001)), "daily_limit_exceeded", "amountInCents")
		refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 4_001}), "daily_limit_exceeded", "amountInCents")
		assert.Equal(t, balance, e.balance(p.id), "a refusal debits nothing")
		r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 4_000})
		require.Equal(t, http.StatusCreated, r.Status, "exactly the limit, refunds and withdrawals together: %s", r.Body)
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(100)), "daily_limit_exceeded", "amountInCents")

		// A cancelled refund is money that did not leave: its cents are the day's again.
		r = e.do(http.MethodPost, refundsPath+"/"+refundID+"/cancel", p.key, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(6_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(100)), "daily_limit_exceeded", "amountInCents")
	})
}

func TestSanctionedRefundRecipientRefusedAndAudited(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newSanctionedEnv(t, b)
			p := e.policyMerchant(100_000)
			pid, _, _ := e.settledPayment(p.key, 20_000, 0)
			balance := e.balance(p.id)
			refused(t, e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000, "recipientAddress": sanctioned}),
				"recipient_sanctioned", "recipientAddress")
			assert.Equal(t, balance, e.balance(p.id), "nothing debited")
			r := e.do(http.MethodGet, refundsPath+"?paymentId="+pid, p.key, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			assert.Empty(t, r.JSON(t)["data"], "nothing created")

			// Typed on the claim page: refused there too, and the refund still awaits an address.
			r = e.do(http.MethodPost, paymentRefundsPath(pid), p.key, map[string]any{"amountInCents": 1_000})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
			refused(t, e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": sanctioned}, "X-Service-Refund-Secret", secret),
				"recipient_sanctioned", "recipientAddress")
			assert.Equal(t, "awaiting_address", e.refundOf(p.key, id)["status"])

			entries := e.auditActions(p, "payout.recipient_sanctioned")
			require.Len(t, entries, 2, "both attempts are in the audit log though their transactions rolled back")
		})
	}
}
