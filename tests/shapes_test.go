package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/settlement"
)

// forEachShape runs fn per backend and shape; the harness validates every response against the
// shape's own spec (openapi.yaml or gen/guide-openapi.yaml).
func forEachShape(t *testing.T, fn func(t *testing.T, e *env, shape settlement.Shape)) {
	for _, b := range testdb.Backends() {
		for _, sh := range []settlement.Shape{settlement.Schema, settlement.Guide} {
			t.Run(b+"/"+string(sh), func(t *testing.T) {
				t.Parallel()
				fn(t, newShapedEnv(t, b, sh), sh)
			})
		}
	}
}

func TestPaymentMinimumPerShape(t *testing.T) {
	forEachShape(t, func(t *testing.T, e *env, shape settlement.Shape) {
		key := e.merchant(merchantOpts{}).SecretKey
		want := map[settlement.Shape]map[int64]int{
			settlement.Schema: {249: 400, 250: 400, 399: 400, 400: 201},
			settlement.Guide:  {249: 400, 250: 201, 399: 201, 400: 201},
		}[shape]
		for amount, status := range want {
			r := e.do(http.MethodPost, paymentsPath, key, payment(amount))
			require.Equal(t, status, r.Status, "%s amount %d: %s", shape, amount, r.Body)
			if status == 400 {
				code, _, param := r.errorFields(t)
				assert.EqualValues(t, "invalid_amount", code)
				assert.EqualValues(t, "amount", param)
			}
		}
	})
}

// TestEveryEndpointInBothShapes walks every operation in each shape and checks the fields the
// shapes disagree on; the harness validates each response against the shape's spec.
func TestEveryEndpointInBothShapes(t *testing.T) {
	forEachShape(t, func(t *testing.T, e *env, shape settlement.Shape) {
		guide := shape == settlement.Guide
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		key := m.SecretKey

		created := e.createPayment(key, payment(1000))
		p := created["payment"].(map[string]any)
		id := p["id"].(string)
		require.Contains(t, p, "depositAddress", "payment-level address in both shapes")
		assertPaymentShape(t, p, guide, false)

		e.createPayment(key, map[string]any{"type": "deposit", "currency": "USD", "orderId": "d"})

		tx := "0x" + strings.Repeat("9a", 32)
		_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(id), TxHash: tx}, nil)
		require.NoError(t, err)
		r := e.do(http.MethodGet, paymentsPath+"/"+id, key, nil)
		require.Equal(t, 200, r.Status)
		done := r.JSON(t)
		assertPaymentShape(t, done, guide, true)
		rec := done["receipt"].(map[string]any)
		if guide {
			assert.Equal(t, tx, rec["transactionHash"])
			assert.Nil(t, rec["blockNumber"], "a manual settlement records no block")
			assert.Greater(t, rec["requiredConfirmations"].(float64), 0.0)
			assert.NotEmpty(t, rec["completedAt"])
			assert.Len(t, rec, 5)
		} else {
			assert.Equal(t, tx, rec["txHash"])
			assert.EqualValues(t, "manual", rec["processedBy"])
			assert.IsType(t, "", rec["settledChain"].(map[string]any)["chainId"])
		}

		r = e.do(http.MethodGet, paymentsPath+"?limit=10", key, nil)
		require.Equal(t, 200, r.Status)
		for _, item := range r.JSON(t)["data"].([]any) {
			item := item.(map[string]any)
			assertPaymentShape(t, item, guide, item["status"] == "completed")
		}

		// Withdrawals: the guide takes and returns a numeric chain id.
		body := withdrawal(200)
		if guide {
			body["chainId"] = 8453
		}
		r = e.do(http.MethodPost, withdrawalsPath, key, body)
		require.Equal(t, 201, r.Status, string(r.Body))
		w := r.JSON(t)
		if guide {
			assert.EqualValues(t, 8453, w["chainId"])
		} else {
			assert.Equal(t, "eip155:8453", w["chainId"])
		}
		wrong := withdrawal(200)
		if !guide {
			wrong["chainId"] = 8453
		}
		r = e.do(http.MethodPost, withdrawalsPath, key, wrong)
		require.Equal(t, 400, r.Status, "the other shape's chainId form is refused")

		wid := w["id"].(string)
		e.completeWithdrawal(wid)
		r = e.do(http.MethodGet, withdrawalsPath+"/"+wid, key, nil)
		require.Equal(t, 200, r.Status)
		full := r.JSON(t)["receipt"].(map[string]any)
		r = e.do(http.MethodGet, withdrawalsPath, key, nil)
		require.Equal(t, 200, r.Status)
		listed := r.JSON(t)["data"].([]any)[0].(map[string]any)["receipt"].(map[string]any)
		if guide {
			assert.Len(t, listed["settledToken"], 7, "compact token in list responses")
			assert.Equal(t, map[string]any{"chainId": 8453.0, "name": "Base"}, listed["settledChain"])
			assert.Contains(t, full["settledToken"], "marketApiId", "full token on reads")
			assert.NotContains(t, full["settledChain"], "isTestnet")
		} else {
			assert.Equal(t, full["settledToken"], listed["settledToken"])
			assert.Equal(t, "eip155:8453", listed["settledChain"].(map[string]any)["chainId"])
		}

		r = e.do(http.MethodGet, chainsPath, "", nil)
		require.Equal(t, 200, r.Status)
		for _, c := range r.JSON(t)["data"].([]any) {
			c := c.(map[string]any)
			if guide {
				assert.IsType(t, 0.0, c["chainId"])
				assert.NotContains(t, c, "isTestnet")
			} else {
				assert.IsType(t, "", c["chainId"])
				assert.Contains(t, c, "isTestnet")
			}
		}

		r = e.do(http.MethodGet, "/openapi.yaml", "", nil)
		require.Equal(t, 200, r.Status)
		assert.Equal(t, guide, strings.Contains(string(r.Body), "API (guide shape)"), "the active shape's spec is served")
	})
}

// assertPaymentShape checks the conflicting fields of one payment.
func assertPaymentShape(t *testing.T, p map[string]any, guide, completed bool) {
	t.Helper()
	for _, q := range p["quotes"].([]any) {
		q := q.(map[string]any)
		if guide {
			assert.IsType(t, 0.0, q["chainId"])
			assert.IsType(t, "", q["rateUsdAsset"])
			assert.NotContains(t, q, "depositAddress")
			assert.NotContains(t, q["token"].(map[string]any)["chain"], "isTestnet")
		} else {
			assert.IsType(t, "", q["chainId"])
			assert.IsType(t, 0.0, q["rateUsdAsset"])
			assert.Contains(t, q, "depositAddress")
		}
	}
	switch {
	case guide && !completed:
		assert.NotContains(t, p, "receipt", "the guide shows a receipt only on completed payments")
	case !guide && !completed:
		assert.Contains(t, p, "receipt")
		assert.Nil(t, p["receipt"])
	default:
		assert.NotNil(t, p["receipt"])
	}
}

// completeWithdrawal stands in for the chain sender (a later issue): it records a receipt.
func (e *env) completeWithdrawal(id string) {
	e.t.Helper()
	db := e.rawDB()
	now := time.Now().UTC()
	require.NoError(e.t, db.Exec("UPDATE withdrawals SET status = 'completed', updated_at = ? WHERE id = ?", now, id).Error)
	require.NoError(e.t, db.Exec(`INSERT INTO withdrawal_receipts (withdrawal_id, token_id, chain_id, settled_amount_asset,
		settled_amount_usd, tx_hash, tx_block_number, tx_timestamp, tx_sender_address, tx_gas_used, tx_total_cost,
		tx_total_cost_usd_fractions, tx_is_sponsored, processed_by, created_at)
		VALUES (?, 'eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', 8453, '2000000', '2.00', ?, 123, ?, ?, 65000, '1300000000000', 4100, false, 'cron', ?)`,
		id, "0x"+strings.Repeat("cd", 32), now, "0x"+strings.Repeat("ee", 20), now).Error)
}

// The spec: a deposit's amount is "optional and ignored"; a payment's is required and bounded
// by the shape's limits. Checked at every boundary, in both shapes, on both databases.
func TestCreatePaymentAmountRules(t *testing.T) {
	for _, shape := range []settlement.Shape{settlement.Schema, settlement.Guide} {
		for _, backend := range testdb.Backends() {
			t.Run(string(shape)+"/"+backend, func(t *testing.T) {
				t.Parallel()
				e := newShapedEnv(t, backend, shape)
				key := e.merchant(merchantOpts{deposits: true}).SecretKey
				min := shape.PaymentLimits().MinAmountCents
				for _, c := range []struct {
					body   map[string]any
					status int
					code   string
				}{
					{map[string]any{"type": "deposit", "amount": 5}, 201, ""},
					{map[string]any{"type": "deposit", "amount": -3}, 201, ""},
					{map[string]any{"type": "deposit", "amount": 100000001}, 201, ""},
					{map[string]any{"type": "deposit"}, 201, ""},
					{map[string]any{"type": "deposit", "amount": "5"}, 400, "parameter_invalid"},
					{map[string]any{"type": "deposit", "amount": 5.5}, 400, "parameter_invalid"},
					{map[string]any{"amount": min - 1}, 400, "invalid_amount"},
					{map[string]any{"amount": min}, 201, ""},
					{map[string]any{"type": "payment", "amount": 100000000}, 201, ""},
					{map[string]any{"type": "payment", "amount": 100000001}, 400, "invalid_amount"},
					{map[string]any{"type": "payment", "amount": 5}, 400, "invalid_amount"},
					{map[string]any{"type": "payment"}, 400, "parameter_missing"},
					{map[string]any{}, 400, "parameter_missing"},
					{map[string]any{"amount": "1000"}, 400, "parameter_invalid"},
				} {
					body := map[string]any{"currency": "USD", "orderId": "o-1"}
					for k, v := range c.body {
						body[k] = v
					}
					r := e.do(http.MethodPost, paymentsPath, key, body)
					require.Equal(t, c.status, r.Status, "%v: %s", c.body, r.Body)
					if c.status != 201 {
						code, _, param := r.errorFields(t)
						assert.Equal(t, c.code, code, "%v", c.body)
						assert.Equal(t, "amount", param, "%v", c.body)
						continue
					}
					p := r.JSON(t)["payment"].(map[string]any)
					if c.body["type"] == "deposit" {
						assert.EqualValues(t, 0, p["amountInCents"], "a deposit's amount is ignored: %v", c.body)
						assert.EqualValues(t, "deposit", p["type"])
					} else {
						assert.EqualValues(t, c.body["amount"], p["amountInCents"])
					}
				}
			})
		}
	}
}
