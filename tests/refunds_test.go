package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// Refunds by secret key, through the whole stack on both databases, every answer checked against
// openapi.yaml: what a refund may be, the balance and the payment it comes out of, reads,
// cancellation and idempotent retries.

const refundsPath = "/v1/external/secretkey-auth/refunds"

func paymentRefundsPath(paymentID string) string { return paymentsPath + "/" + paymentID + "/refunds" }

// settledPayment creates a payment of cents and settles it on Base USDC with extra smallest
// units more than its quote asked for (0: exactly), in either shape; it answers the payment's id, its secret
// and the USDC units it settled. Transfers from payers are recorded first: its settlement counts them.
func (e *env) settledPayment(key string, cents int64, extra int64, payers ...common.Address) (id, secret string, settled decimal.Decimal) {
	e.t.Helper()
	created := e.createPayment(key, payment(cents))
	id, secret = created["paymentId"].(string), created["secret"].(string)
	for _, payer := range payers {
		e.payFrom(key, id, payer)
	}
	var quote uuid.UUID
	for _, q := range created["payment"].(map[string]any)["quotes"].([]any) {
		q := q.(map[string]any)
		if (q["chainId"] == "eip155:8453" || q["chainId"] == float64(8453)) && q["token"].(map[string]any)["symbol"] == "USDC" {
			quote = uuid.MustParse(q["id"].(string))
			settled = decimal.RequireFromString(q["expectedAmountAsset"].(string)).Add(decimal.NewFromInt(extra))
		}
	}
	require.NotEqual(e.t, uuid.Nil, quote, "no USDC quote on Base")
	_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(id), QuoteID: &quote,
		TxHash: "0x" + strings.Repeat("3", 64), AmountAsset: &settled}, nil)
	require.NoError(e.t, err)
	return id, secret, settled
}

// refundOf reads a refund's status and body by secret key.
func (e *env) refundOf(key, id string) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodGet, refundsPath+"/"+id, key, nil)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	return r.JSON(e.t)
}

// requireRefused checks an error answer's status and code.
func requireRefused(t *testing.T, r response, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	got, _, _ := r.errorFields(t)
	assert.Equal(t, code, got, string(r.Body))
}

func (e *env) refundEvents(id string) []string {
	e.t.Helper()
	evs, err := e.app.Store.Read(context.Background()).EntityEvents(uuid.MustParse(id))
	require.NoError(e.t, err)
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Type))
	}
	return out
}

func TestRefundsBySecretKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		key := m.SecretKey
		e.fund(key, 10_000)
		pid, _, settled := e.settledPayment(key, 2_000, 0) // $20.00 and Base's $0.05 convenience fee: 20.05 USDC
		require.Equal(t, "20050000", settled.String())
		start := e.balance(m.Merchant.ID)

		// $5.00 to a known address: pending at once, debited at once.
		r := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 500, "recipientAddress": "0x" + strings.ToUpper(recipient[2:]), "reason": "returned:\n\tbroken lid"})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		a := r.JSON(t)
		assert.Equal(t, "pending", a["status"])
		assert.Equal(t, "5000000", a["amountAsset"], "USDC at 1.00, in its smallest unit")
		assert.EqualValues(t, 500, a["amountInCents"])
		assert.Equal(t, recipient, a["recipientAddress"])
		assert.Equal(t, "merchant", a["recipientSource"])
		assert.Nil(t, a["claimUrl"])
		assert.Equal(t, "returned:\n\tbroken lid", a["reason"], "a reason may span lines")
		assert.Equal(t, "USDC", a["tokenSymbol"])
		assert.Equal(t, "eip155:8453", a["chainId"])
		assert.Equal(t, map[string]any{"required": false, "approvedBy": nil, "approvedAt": nil}, a["approval"])
		assert.Equal(t, start-500, e.balance(m.Merchant.ID))

		// A recipient the service controls is refused before anything is debited.
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1, "recipientAddress": "0x0000000000000000000000000000000000000001"}), 400, "recipient_not_allowed")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1, "recipientAddress": "0x9858effd232b4033e47d90003d41ec34ecaeda94"}), 400, "recipient_not_allowed")

		// The rest of the payment in units, no address: it waits for the customer's claim.
		r = e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountAsset": "15050000"})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		b := r.JSON(t)
		assert.Equal(t, "awaiting_address", b["status"])
		assert.EqualValues(t, 1505, b["amountInCents"], "valued at the payment's rate")
		assert.Nil(t, b["recipientAddress"])
		assert.NotNil(t, b["claimExpiresAt"])
		claimURL, _ := b["claimUrl"].(string)
		assert.True(t, strings.HasPrefix(claimURL, "https://pay.example.test/refund/"+b["id"].(string)+"#rcs_"), claimURL)
		assert.Equal(t, start-2_005, e.balance(m.Merchant.ID))

		// Nothing is left to refund: one unit more is refused, by either amount.
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountAsset": "10000"}), 409, "refund_exceeds_payment")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1}), 409, "refund_exceeds_payment")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1, "reason": "a\u0093b"}), 400, "parameter_invalid")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1, "reason": "a\u202eb"}), 400, "parameter_invalid")
		// Exactly one of the amounts; known payments; completed ones.
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 1, "amountAsset": "1"}), 400, "parameter_invalid")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{}), 400, "parameter_invalid")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(uuid.NewString()), key, map[string]any{"amountInCents": 100}), 404, "payment_not_found")
		open := e.createPayment(key, payment(1_000))["paymentId"].(string)
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(open), key, map[string]any{"amountInCents": 100}), 409, "payment_not_refundable")

		// The payment shows what its refunds take; the list filters.
		p := e.do(http.MethodGet, paymentsPath+"/"+pid, key, nil).JSON(t)
		assert.EqualValues(t, 2_005, p["amountRefundedCents"])
		list := e.do(http.MethodGet, refundsPath+"?paymentId="+pid, key, nil).JSON(t)
		assert.EqualValues(t, 2, list["pagination"].(map[string]any)["total"])
		assert.Equal(t, b["id"], list["data"].([]any)[0].(map[string]any)["id"], "newest first")
		list = e.do(http.MethodGet, refundsPath+"?status=pending", key, nil).JSON(t)
		require.Len(t, list["data"], 1)
		assert.Equal(t, a["id"], list["data"].([]any)[0].(map[string]any)["id"])

		// Cancel gives the balance back, once; the payment can be refunded again by as much.
		r = e.do(http.MethodPost, refundsPath+"/"+a["id"].(string)+"/cancel", key, nil, "Idempotency-Key", "cancel-a")
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, "cancelled", r.JSON(t)["status"])
		again := e.do(http.MethodPost, refundsPath+"/"+a["id"].(string)+"/cancel", key, nil, "Idempotency-Key", "cancel-a")
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(r.Body), string(again.Body))
		requireRefused(t, e.do(http.MethodPost, refundsPath+"/"+a["id"].(string)+"/cancel", key, nil), 409, "invalid_state")
		assert.Equal(t, start-1_505, e.balance(m.Merchant.ID))
		assert.EqualValues(t, 1_505, e.do(http.MethodGet, paymentsPath+"/"+pid, key, nil).JSON(t)["amountRefundedCents"])
		assert.Equal(t, []string{"refund.created", "refund.cancelled"}, e.refundEvents(a["id"].(string)))

		// An idempotent create: one refund, replayed byte for byte.
		first := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 100}, "Idempotency-Key", "refund-1")
		require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
		second := e.do(http.MethodPost, paymentRefundsPath(pid), key, map[string]any{"amountInCents": 100}, "Idempotency-Key", "refund-1")
		assert.Equal(t, "true", second.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(first.Body), string(second.Body))
		assert.Equal(t, start-1_605, e.balance(m.Merchant.ID))

		// Another merchant sees none of it.
		other := e.merchant(merchantOpts{name: "Other"})
		requireRefused(t, e.do(http.MethodGet, refundsPath+"/"+b["id"].(string), other.SecretKey, nil), 404, "refund_not_found")
		requireRefused(t, e.do(http.MethodPost, refundsPath+"/"+b["id"].(string)+"/cancel", other.SecretKey, nil), 404, "refund_not_found")
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), other.SecretKey, map[string]any{"amountInCents": 100}), 404, "payment_not_found")
		assert.EqualValues(t, 0, e.do(http.MethodGet, refundsPath, other.SecretKey, nil).JSON(t)["pagination"].(map[string]any)["total"])
	})
}

// A refund never overdraws the balance, even of a payment that settled more than is left.
func TestRefundNeedsTheBalance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{withdrawals: true})
		pid, _, _ := e.settledPayment(m.SecretKey, 1_000, 0) // credits $9.90
		r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, withdrawal(900))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		requireRefused(t, e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountInCents": 100}), 409, "insufficient_balance")
		r = e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountInCents": 90})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.EqualValues(t, 0, e.balance(m.Merchant.ID))
		var kinds []string
		require.NoError(t, e.rawDB().Raw("SELECT kind FROM ledger_entries WHERE refund_id IS NOT NULL").Scan(&kinds).Error)
		assert.Equal(t, []string{store.LedgerRefundDebit}, kinds)
		assert.Equal(t, domain.RefundAwaitingAddress, domain.RefundStatus(e.refundOf(m.SecretKey, r.JSON(t)["id"].(string))["status"].(string)))
	})
}

// refund.* events reach the endpoints subscribed to them with the refund as GET answers it, but
// never its claim link (whoever sets up an endpoint may not move money); refund.pending stays in
// the outbox.
func TestRefundWebhookObjects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		base := "/v1/merchants/" + m.Merchant.ID.String()
		admin := bearerHeader(e.roleToken(m.Merchant.ID, domain.RoleAdmin))
		r := e.do(http.MethodPost, base+"/webhooks", "", map[string]any{"url": "https://93.184.215.14/hook",
			"events": []string{"refund.created", "refund.cancelled", "refund.completed", "refund.failed"}}, admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		pid, _, _ := e.settledPayment(m.SecretKey, 1_000, 0)
		r = e.do(http.MethodPost, paymentRefundsPath(pid), m.SecretKey, map[string]any{"amountInCents": 300})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		created := r.JSON(t)
		id := created["id"].(string)
		require.Equal(t, http.StatusOK, e.do(http.MethodPost, refundsPath+"/"+id+"/cancel", m.SecretKey, nil).Status)

		var rows []struct {
			Type   string
			Object *string
		}
		require.NoError(t, e.rawDB().Raw("SELECT type, object FROM events WHERE entity = 'refund' ORDER BY sequence").Scan(&rows).Error)
		require.Len(t, rows, 2)
		require.NotNil(t, rows[0].Object, "refund.created is delivered")
		require.NotNil(t, created["claimUrl"], "the create answers the claim link")
		created["claimUrl"] = nil
		want, err := json.Marshal(created)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), *rows[0].Object, "the object as the create answered it, without the claim link")
		require.NotNil(t, rows[1].Object)
		assert.Contains(t, *rows[1].Object, `"status":"cancelled"`)
		assert.Contains(t, *rows[1].Object, `"claimUrl":null`)
		var deliveries int64
		require.NoError(t, e.rawDB().Raw("SELECT COUNT(*) FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id WHERE ev.entity = 'refund'").
			Row().Scan(&deliveries))
		assert.EqualValues(t, 2, deliveries)
	})
}
