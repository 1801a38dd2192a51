package tests

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/payments"
)

// sweepAt runs one expiry sweep as if the clock read now+ahead.
func (e *env) sweepAt(ahead time.Duration) lifecycle.SweepResult {
	e.t.Helper()
	core := *e.app.Core
	core.Now = func() time.Time { return app.Now().Add(ahead) }
	exp := &lifecycle.Expirer{Core: &core, Interval: time.Second, Batch: 50,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	res, err := exp.SweepOnce(context.Background())
	require.NoError(e.t, err)
	return res
}

// Through the API: quotes expire at their expiresAt and the payment stays open; a late transfer
// on an expired quote still settles it; a payment past its own expiry reads expired.
func TestExpiryThroughTheAPI(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		late := e.createPayment(m.SecretKey, payment(1000))["paymentId"].(string)
		unpaid := e.createPayment(m.SecretKey, payment(2000))["paymentId"].(string)

		res := e.sweepAt(16 * time.Minute)
		assert.Positive(t, res.QuotesExpired)
		assert.Zero(t, res.PaymentsExpired)
		r := e.do(http.MethodGet, paymentsPath+"/"+late, m.SecretKey, nil)
		p := r.JSON(t)
		assert.EqualValues(t, "pending", p["status"], "the payment stays payable after its quotes expire")
		for _, q := range p["quotes"].([]any) {
			assert.EqualValues(t, "expired", q.(map[string]any)["status"])
		}

		settled, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(late),
			TxHash: "0xabababababababababababababababababababababababababababababababab"}, nil)
		require.NoError(t, err, "a late transfer on an expired quote settles an open payment")
		assert.Equal(t, domain.PaymentCompleted, settled.Status)
		used := 0
		for _, q := range settled.Quotes {
			if q.Status == domain.QuoteUsed {
				used++
			} else {
				assert.Equal(t, domain.QuoteExpired, q.Status)
			}
		}
		assert.Equal(t, 1, used)

		res = e.sweepAt(25 * time.Hour)
		assert.Equal(t, 1, res.PaymentsExpired, "the unpaid one; the settled one is terminal")
		r = e.do(http.MethodGet, paymentsPath+"?status=expired", m.SecretKey, nil)
		data := r.JSON(t)["data"].([]any)
		require.Len(t, data, 1)
		assert.Equal(t, unpaid, data[0].(map[string]any)["id"])

		evs, err := e.app.Store.Read(context.Background()).EntityEvents(uuid.MustParse(late))
		require.NoError(t, err)
		var types []domain.EventType
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		assert.Equal(t, []domain.EventType{"payment.created", "payment.quotes_expired", "payment.completed"}, types)
	})
}

// GET payment answers from its cache only while the payment is unchanged: a settlement (a new
// version) shows at once.
func TestGetPaymentAfterAChange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{})
		id := e.createPayment(m.SecretKey, payment(1000))["paymentId"].(string)
		first := e.do(http.MethodGet, paymentsPath+"/"+id, m.SecretKey, nil)
		again := e.do(http.MethodGet, paymentsPath+"/"+id, m.SecretKey, nil)
		require.Equal(t, 200, again.Status)
		assert.Equal(t, string(first.Body), string(again.Body))
		_, err := e.app.Payments.Settle(context.Background(), payments.SettleInput{PaymentID: uuid.MustParse(id),
			TxHash: "0xcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"}, nil)
		require.NoError(t, err)
		after := e.do(http.MethodGet, paymentsPath+"/"+id, m.SecretKey, nil)
		require.Equal(t, 200, after.Status)
		assert.EqualValues(t, "completed", after.JSON(t)["status"])
		other := e.merchant(merchantOpts{name: "Other"})
		require.Equal(t, 404, e.do(http.MethodGet, paymentsPath+"/"+id, other.SecretKey, nil).Status, "another merchant's payment")
		require.Equal(t, 404, e.do(http.MethodGet, paymentsPath+"/not-an-id", m.SecretKey, nil).Status)
	})
}
