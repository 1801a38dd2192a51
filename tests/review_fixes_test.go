package tests

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// An Idempotency-Key must not change what is bound: the handler binds the validated value, so a
// case-variant duplicate member ("orderid") can neither override nor smuggle past the limits.
func TestIdempotencyKeepsValidatedBody(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
		e.fund(m.SecretKey, 1_000)
		for _, key := range []string{"", "case-variant"} {
			body := `{"amountInCents":100,"chainId":"eip155:8453","recipientAddress":"` + recipient +
				`","orderId":"ok","orderid":"` + strings.Repeat("x", 300) + `","customMetadata":"m","custommetadata":"a\u0000b"}`
			var headers []string
			if key != "" {
				headers = []string{"Idempotency-Key", key}
			}
			r := e.do(http.MethodPost, withdrawalsPath, m.SecretKey, body, headers...)
			require.Equal(t, 201, r.Status, "key %q: %s", key, r.Body)
			w := r.JSON(t)
			assert.EqualValues(t, "ok", w["orderId"], "key %q", key)
			assert.EqualValues(t, "m", w["customMetadata"], "key %q", key)
		}
	})
}

// Concurrent first deposits of one customer all succeed and share one address.
func TestConcurrentFirstDepositsShareAddress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		const n = 8
		var wg sync.WaitGroup
		res := make([]response, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = e.do(http.MethodPost, paymentsPath, m.SecretKey,
					map[string]any{"type": "deposit", "currency": "USD", "orderId": "d", "customerRefId": "carol"})
			}()
		}
		wg.Wait()
		addrs := map[string]bool{}
		for _, r := range res {
			require.Equal(t, 201, r.Status, string(r.Body))
			addrs[r.JSON(t)["payment"].(map[string]any)["depositAddress"].(map[string]any)["address"].(string)] = true
		}
		assert.Len(t, addrs, 1)
	})
}

// A settlement worth more than MaxSettledCents is refused (no int64 wrap, no NUMERIC overflow)
// and changes nothing.
func TestSettleRefusesAbsurdAmounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{deposits: true})
		for _, typ := range []string{"deposit", "payment"} {
			body := map[string]any{"type": typ, "currency": "USD", "orderId": "big"}
			if typ == "payment" {
				body["amount"] = 1000
			}
			id := uuid.MustParse(e.createPayment(m.SecretKey, body)["paymentId"].(string))
			huge := decimal.RequireFromString("61489146912365505386666666666667") // wraps int64 cents if unchecked
			_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: id,
				TxHash: "0x" + strings.Repeat("e", 64), AmountAsset: &huge}, nil)
			var invalid *domain.InvalidInputError
			require.ErrorAs(t, err, &invalid, typ)
			assert.Equal(t, "amount-asset", invalid.Param)
			r := e.do(http.MethodGet, paymentsPath+"/"+id.String(), m.SecretKey, nil)
			assert.EqualValues(t, "pending", r.JSON(t)["status"], "nothing changed")
		}
		assert.Zero(t, e.balance(m.Merchant.ID))
	})
}

func TestExpiredIdempotencyKeysAreSwept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		now := time.Now().UTC()
		require.NoError(t, e.app.Store.InTx(context.Background(), func(tx *store.Tx) error {
			for i, exp := range []time.Time{now.Add(-time.Minute), now.Add(time.Hour)} {
				rec := store.IdempotencyRecord{MerchantID: m.Merchant.ID, Key: []string{"old", "new"}[i], Operation: "op",
					RequestHash: []byte{1}, ExpiresAt: exp}
				if err := tx.ClaimIdempotencyKey(rec, now); err != nil {
					return err
				}
			}
			n, err := tx.PurgeExpiredIdempotencyKeys(now)
			assert.EqualValues(t, 1, n)
			return err
		}))
		_, err := e.app.Store.Read(context.Background()).GetIdempotencyKey(m.Merchant.ID, "new")
		assert.NoError(t, err, "unexpired keys stay")
	})
}
