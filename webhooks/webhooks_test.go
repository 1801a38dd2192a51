package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

const testKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// received is one request a test receiver got.
type received struct {
	ID, Timestamp, Signature string
	Body                     []byte
}

// receiver is a real HTTP endpoint answering with the statuses given, in turn (then 200).
type receiver struct {
	mu       sync.Mutex
	got      []received
	statuses []int
	header   http.Header
	srv      *httptest.Server
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), b})
		code := http.StatusOK
		if len(r.statuses) > 0 {
			code, r.statuses = r.statuses[0], r.statuses[1:]
		}
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "answer "+http.StatusText(code))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type fixture struct {
	t        *testing.T
	ctx      context.Context
	a        *app.App
	merchant domain.Merchant
	key      string
}

func newFixture(t *testing.T, backend string, schedule ...time.Duration) *fixture {
	ctx := context.Background()
	cfg := onchaintest.Config(testdb.URL(t, backend), config.Chains{Devnet: "off", ServeUnwatched: true, Passive: true}, time.Hour, 15*time.Minute)
	cfg.Webhooks = config.Webhooks{SecretsKey: testKey, AllowPrivate: true, Schedule: schedule}
	a, err := app.Open(ctx, cfg, onchaintest.Logger("WEBHOOKS_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	c, err := a.Merchants.Create(ctx, merchants.CreateInput{Name: "Hooks", ShortName: "Hooks", DepositsEnabled: true, WithdrawalsEnabled: true})
	require.NoError(t, err)
	return &fixture{t: t, ctx: ctx, a: a, merchant: c.Merchant, key: c.SecretKey}
}

func (f *fixture) endpoint(url string, events ...string) webhooks.Created {
	f.t.Helper()
	c, err := f.a.Webhooks.Create(f.ctx, f.merchant.ID, f.merchant.Mode, url, events)
	require.NoError(f.t, err)
	return c
}

func (f *fixture) pay(cents int64) domain.Payment {
	f.t.Helper()
	c, err := f.a.Payments.Create(f.ctx, f.merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
		OrderID: "o-" + uuid.NewString()[:8], Amount: &cents}, nil)
	require.NoError(f.t, err)
	return c.Payment
}

// deliverAll runs dispatcher rounds until nothing is due and nothing is pending sooner than wait.
func (f *fixture) rounds(n int) {
	for range n {
		_, err := f.a.Dispatcher.Round(f.ctx)
		require.NoError(f.t, err)
		time.Sleep(20 * time.Millisecond)
	}
}

// dispatcher is another delivery worker on the same database (another process).
func (f *fixture) dispatcher(holder string, guard webhooks.Guard) *webhooks.Dispatcher {
	d := f.a.Dispatcher
	return &webhooks.Dispatcher{Store: d.Store, Sealer: d.Sealer, Guard: guard, Holder: holder, Schedule: d.Schedule,
		Interval: d.Interval, Workers: d.Workers, Log: d.Log, Now: d.Now}
}

// get reads an API path with the merchant's key through the real handler.
func (f *fixture) get(path string) []byte {
	f.t.Helper()
	h, err := f.a.Handler()
	require.NoError(f.t, err)
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("X-Service-Secret-Key", f.key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return rec.Body.Bytes()
}

func forEachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// A delivery is signed by the Standard Webhooks scheme (verified with its reference library),
// and its object is exactly what GET answers for the payment.
func TestDeliverySignedAndCarriesWhatGETReturns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		r := newReceiver(t)
		ep := f.endpoint(r.srv.URL + "/hooks")
		p := f.pay(2500)
		f.rounds(3)
		got := r.requests()
		require.Len(t, got, 1, "payment.created, once")
		wh, err := standardwebhooks.NewWebhook(ep.Secret)
		require.NoError(t, err)
		hdr := http.Header{}
		hdr.Set("webhook-id", got[0].ID)
		hdr.Set("webhook-timestamp", got[0].Timestamp)
		hdr.Set("webhook-signature", got[0].Signature)
		require.NoError(t, wh.Verify(got[0].Body, hdr))
		var body struct {
			ID        string                           `json:"id"`
			Type      string                           `json:"type"`
			CreatedAt time.Time                        `json:"createdAt"`
			Data      struct{ Object json.RawMessage } `json:"data"`
		}
		require.NoError(t, json.Unmarshal(got[0].Body, &body))
		assert.Equal(t, got[0].ID, body.ID)
		assert.True(t, strings.HasPrefix(body.ID, "evt_"))
		assert.Equal(t, "payment.created", body.Type)
		assert.JSONEq(t, string(f.get("/v1/external/secretkey-auth/payments/"+p.ID.String())), string(body.Data.Object))

		// A tampered body or another secret does not verify.
		other, _ := standardwebhooks.NewWebhook("whsec_" + strings.Repeat("A", 43) + "=")
		assert.Error(t, other.Verify(got[0].Body, hdr))
		assert.Error(t, wh.Verify(append(got[0].Body, ' '), hdr))
	})
}

// A receiver that fails twice then succeeds: three attempts with one webhook-id, all logged.
func TestRetriedUntilDeliveredWithOneID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, 0, 10*time.Millisecond, 10*time.Millisecond)
		r := newReceiver(t, 500, 503)
		f.endpoint(r.srv.URL, "payment.created")
		f.pay(2500)
		f.rounds(8)
		got := r.requests()
		require.Len(t, got, 3)
		assert.Equal(t, got[0].ID, got[1].ID)
		assert.Equal(t, got[0].ID, got[2].ID)
		ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		assert.Equal(t, store.DeliveryDelivered, ds[0].Status)
		require.Len(t, ds[0].Log, 3)
		for i, want := range []int64{500, 503, 200} {
			a := ds[0].Log[i]
			assert.Equal(t, int64(i+1), a.Attempt)
			require.NotNil(t, a.StatusCode)
			assert.Equal(t, want, *a.StatusCode)
			assert.Contains(t, *a.ResponseHead, "answer")
		}
	})
}

// 410 Gone disables the endpoint: nothing more is sent to it.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, 0, 10*time.Millisecond)
		r := newReceiver(t, http.StatusGone)
		ep := f.endpoint(r.srv.URL)
		f.pay(2500)
		f.rounds(3)
		f.pay(2600)
		f.rounds(3)
		assert.Len(t, r.requests(), 1)
		eps, err := f.a.Webhooks.List(f.ctx, f.merchant.ID)
		require.NoError(t, err)
		require.Len(t, eps, 1)
		assert.Equal(t, ep.Endpoint.ID, eps[0].ID)
		assert.False(t, eps[0].Enabled)
	})
}

// Retry-After pushes the next attempt back.
func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFixture(t, "sqlite", 0, 10*time.Millisecond)
	r := newReceiver(t, http.StatusTooManyRequests)
	r.header = http.Header{"Retry-After": {"120"}}
	f.endpoint(r.srv.URL)
	f.pay(2500)
	f.rounds(3)
	ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, store.DeliveryPending, ds[0].Status)
	assert.WithinDuration(t, time.Now().Add(120*time.Second), ds[0].NextAttemptAt, 5*time.Second)
	assert.Len(t, r.requests(), 1)
}

// Rotation: for a day both the new and the old secret sign; redelivery keeps the event's id.
func TestRotationAndRedelivery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		r := newReceiver(t)
		ep := f.endpoint(r.srv.URL)
		f.pay(2500)
		f.rounds(2)
		newSecret, err := f.a.Webhooks.RotateSecret(f.ctx, uuid.Nil, ep.Endpoint.ID)
		require.NoError(t, err)
		first := r.requests()[0]
		_, err = f.a.Webhooks.Redeliver(f.ctx, uuid.Nil, nil, first.ID, nil)
		require.NoError(t, err)
		f.rounds(2)
		got := r.requests()
		require.Len(t, got, 2)
		assert.Equal(t, first.ID, got[1].ID, "a redelivery keeps the webhook-id")
		assert.Len(t, strings.Fields(got[1].Signature), 2, "two signatures during the overlap")
		for _, secret := range []string{ep.Secret, newSecret} {
			wh, err := standardwebhooks.NewWebhook(secret)
			require.NoError(t, err)
			hdr := http.Header{}
			hdr.Set("webhook-id", got[1].ID)
			hdr.Set("webhook-timestamp", got[1].Timestamp)
			hdr.Set("webhook-signature", got[1].Signature)
			assert.NoError(t, wh.Verify(got[1].Body, hdr), "verifies with each secret")
		}
		_, err = f.a.Webhooks.Redeliver(f.ctx, uuid.Nil, nil, "evt_nope", nil)
		assert.ErrorIs(t, err, webhooks.ErrEventNotFound)
	})
}

// A redirect is an answer, not a new target: it is not followed, and counts as a failed attempt.
func TestRedirectsAreNotFollowed(t *testing.T) {
	f := newFixture(t, "sqlite", 0, time.Hour)
	target := newReceiver(t)
	r := newReceiver(t, http.StatusFound)
	r.header = http.Header{"Location": {target.srv.URL}}
	f.endpoint(r.srv.URL)
	f.pay(2500)
	f.rounds(2)
	assert.Len(t, r.requests(), 1)
	assert.Empty(t, target.requests(), "the redirect's target got nothing")
	ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, store.DeliveryPending, ds[0].Status)
	require.Len(t, ds[0].Log, 1)
	assert.Equal(t, int64(http.StatusFound), *ds[0].Log[0].StatusCode)
}
