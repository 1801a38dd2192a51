package tests

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

// Refunds from the dashboard: made by a person (their creator), approved only by another
// person of the team, rejected by anyone who may approve; and 64 refunds of one payment at once.

func TestRefundApprovalsFromTheDashboard(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		mid := m.Merchant.ID
		base := "/v1/merchants/" + mid.String()
		pid, _, _ := e.settledPayment(m.SecretKey, 5_000, 0)
		ana := bearerHeader(e.personToken(e.member(mid, "ana@shop.example", domain.RoleAdmin), "ana@shop.example"))
		ben := bearerHeader(e.personToken(e.member(mid, "ben@shop.example", domain.RoleOwner), "ben@shop.example"))
		viewer := bearerHeader(e.personToken(e.member(mid, "vic@shop.example", domain.RoleViewer), "vic@shop.example"))
		service := bearerHeader(e.roleToken(mid, domain.RoleAdmin))
		start := e.balance(mid)

		// Ana refunds $10 without an address; the customer types one: it waits for an approval.
		r := e.do(http.MethodPost, base+"/payments/"+pid+"/refunds", "", map[string]any{"amountInCents": 1_000, "reason": "broken"}, ana...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		id, secret := claimLink(t, r.JSON(t)["claimUrl"].(string))
		// The claim link directs the money: a viewer reads null, one who may move money sees it.
		for _, list := range []bool{false, true} {
			path := base + "/refunds/" + id
			if list {
				path = base + "/refunds?paymentId=" + pid
			}
			claimOf := func(as []string) any {
				r := e.do(http.MethodGet, path, "", nil, as...)
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				if list {
					return r.JSON(t)["data"].([]any)[0].(map[string]any)["claimUrl"]
				}
				return r.JSON(t)["claimUrl"]
			}
			assert.Nil(t, claimOf(viewer), "a viewer: %s", path)
			assert.Contains(t, claimOf(ben), "#", "an owner: %s", path)
		}
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, ben...), 409, "invalid_state") // nothing to approve yet
		r = e.do(http.MethodPost, claimPath+id+"/claim", "", map[string]any{"recipientAddress": recipient}, "X-Service-Refund-Secret", secret)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))

		waiting := e.do(http.MethodGet, base+"/refunds?awaitingApproval=true", "", nil, viewer...)
		require.Equal(t, http.StatusOK, waiting.Status, string(waiting.Body))
		require.Len(t, waiting.JSON(t)["data"], 1)
		assert.Equal(t, id, waiting.JSON(t)["data"].([]any)[0].(map[string]any)["id"])
		assert.EqualValues(t, 0, e.do(http.MethodGet, base+"/refunds?awaitingApproval=false", "", nil, viewer...).JSON(t)["pagination"].(map[string]any)["total"])

		// Never by its creator, a service token or a viewer; by Ben, once.
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, ana...), 403, "approval_by_creator")
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, service...), 403, "forbidden")
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, viewer...), 403, "forbidden")
		r = e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, ben...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		approval := r.JSON(t)["approval"].(map[string]any)
		assert.Equal(t, true, approval["required"])
		assert.Equal(t, "ben@shop.example", approval["approvedBy"])
		assert.NotNil(t, approval["approvedAt"])
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/approve", "", nil, ben...), 409, "invalid_state")
		requireRefused(t, e.do(http.MethodPost, base+"/refunds/"+id+"/reject", "", nil, ben...), 409, "invalid_state")
		sendable, err := e.app.Store.Read(context.Background()).PendingRefunds(8453, 10)
		require.NoError(t, err)
		assert.Len(t, sendable, 1, "approved: the payout manager may send it")
		got := e.do(http.MethodGet, base+"/refunds/"+id, "", nil, viewer...)
		require.Equal(t, http.StatusOK, got.Status)
		assert.Equal(t, "ben@shop.example", got.JSON(t)["approval"].(map[string]any)["approvedBy"])

		// Above the threshold of the merchant's policy a refund waits even to a known address;
		// its creator may reject it: cancelled, the balance restored.
		threshold := int64(1_500)
		e.app.Refunds.Policy = testPolicy{threshold: &threshold}
		r = e.do(http.MethodPost, base+"/payments/"+pid+"/refunds", "", map[string]any{"amountInCents": 1_501, "recipientAddress": recipient}, ana...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		big := r.JSON(t)
		assert.Equal(t, "pending", big["status"])
		assert.Equal(t, true, big["approval"].(map[string]any)["required"])
		r = e.do(http.MethodPost, base+"/payments/"+pid+"/refunds", "", map[string]any{"amountInCents": 1_500, "recipientAddress": recipient}, ana...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, false, r.JSON(t)["approval"].(map[string]any)["required"], "at the threshold: none")
		assert.Equal(t, start-4_001, e.balance(mid))
		r = e.do(http.MethodPost, base+"/refunds/"+big["id"].(string)+"/reject", "", nil, ana...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "cancelled", r.JSON(t)["status"])
		assert.Equal(t, start-2_500, e.balance(mid))

		// Every step is in the audit log, by whom.
		items, _ := e.auditLog(mid, "")
		seen := map[string]string{}
		for _, it := range items {
			if it["targetId"] == id || it["targetId"] == big["id"] {
				seen[it["action"].(string)] = it["actor"].(map[string]any)["label"].(string)
			}
		}
		assert.Equal(t, "ana@shop.example", seen["refund.created"])
		assert.Equal(t, "ben@shop.example", seen["refund.approved"])
		assert.Equal(t, "ana@shop.example", seen["refund.rejected"])
		assert.Contains(t, seen, "refund.claimed")

		// The dashboard reads only its own merchant's refunds.
		other := e.merchant(merchantOpts{name: "Other"})
		otherTok := bearerHeader(e.roleToken(other.Merchant.ID, domain.RoleAdmin))
		requireRefused(t, e.do(http.MethodGet, "/v1/merchants/"+other.Merchant.ID.String()+"/refunds/"+id, "", nil, otherTok...), 404, "refund_not_found")
		requireRefused(t, e.do(http.MethodGet, base+"/refunds", "", nil, otherTok...), 403, "forbidden")
		requireRefused(t, e.do(http.MethodPost, base+"/payments/"+pid+"/refunds", "", map[string]any{"amountInCents": 100}, viewer...), 403, "forbidden")
	})
}

// 64 refunds of one payment at once never add up to more than it settled: exactly as many as
// fit are made, the rest refused with refund_exceeds_payment, and the balance pays for each
// once. (PostgreSQL is where they really race; SQLite serialises them.)
func TestConcurrentRefundsNeverExceedThePayment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		e.fund(m.SecretKey, 100_000)
		pid, _, settled := e.settledPayment(m.SecretKey, 1_000, 0) // 10.05 USDC
		start := e.balance(m.Merchant.ID)
		const n = 64
		var wg sync.WaitGroup
		res := make([]response, n)
		gate := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				body := map[string]any{"amountAsset": "200000"} // 0.20 USDC: 50 fit
				if i%2 == 1 {
					body = map[string]any{"amountInCents": 20, "recipientAddress": recipient}
				}
				res[i] = e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, body)
			}()
		}
		close(gate)
		wg.Wait()
		made, refused := 0, 0
		sum := decimal.Zero
		for _, r := range res {
			switch r.Status {
			case http.StatusCreated:
				made++
				sum = sum.Add(decimal.RequireFromString(r.JSON(t)["amountAsset"].(string)))
			default:
				requireRefused(t, r, http.StatusConflict, "refund_exceeds_payment")
				refused++
			}
		}
		assert.Equal(t, 50, made, "exactly as many as the payment settled")
		assert.Equal(t, n-50, refused)
		assert.True(t, sum.LessThanOrEqual(settled), "refunded %s of %s", sum, settled)
		assert.Equal(t, start-50*20, e.balance(m.Merchant.ID), "each debited once")
		p := e.do(http.MethodGet, paymentsPath+"/"+pid, m.SecretKey, nil).JSON(t)
		assert.EqualValues(t, 50*20, p["amountRefundedCents"])
		var debits int64
		require.NoError(t, e.rawDB().Raw("SELECT COUNT(*) FROM ledger_entries WHERE kind = 'refund_debit'").Row().Scan(&debits))
		assert.EqualValues(t, 50, debits)
	})
}
