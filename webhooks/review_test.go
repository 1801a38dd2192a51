package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
)

// An answer that is not valid UTF-8 (a 1 KB cut inside a character, a NUL) is logged, not
// refused by the database and retried forever.
func TestAnswersOfAnyBytesAreLogged(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("a", 1023) + "é\x00 and more"))
		}))
		t.Cleanup(srv.Close)
		f.endpoint(srv.URL)
		f.pay(2500)
		f.rounds(2)
		ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		assert.Equal(t, store.DeliveryDelivered, ds[0].Status)
		require.Len(t, ds[0].Log, 1)
		assert.True(t, strings.HasPrefix(*ds[0].Log[0].ResponseHead, strings.Repeat("a", 1023)))
	})
}

// Events nobody receives carry no rendered object (it costs nothing on the hot path); the
// subscribed ones do.
func TestObjectsAreRenderedOnlyForReceivers(t *testing.T) {
	f := newFixture(t, "sqlite")
	p := f.pay(2500)
	evs, err := f.a.Store.Read(f.ctx).EntityEvents(p.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Nil(t, evs[0].Object, "no endpoint: nothing rendered")
	r := newReceiver(t)
	f.endpoint(r.srv.URL)
	p = f.pay(2500)
	evs, err = f.a.Store.Read(f.ctx).EntityEvents(p.ID)
	require.NoError(t, err)
	assert.NotNil(t, evs[0].Object)
}

// A secrets key that changed: the attempt is logged as failed with the reason and retried on the
// schedule (not spun on); a rotation gives the endpoint a secret this key opens, and the next
// attempt is delivered, signed with it alone.
func TestChangedSecretsKey(t *testing.T) {
	f := newFixture(t, "sqlite", 0, time.Hour)
	r := newReceiver(t)
	ep := f.endpoint(r.srv.URL)
	cfg := f.a.Cfg
	cfg.Webhooks.SecretsKey = strings.Repeat("fe", 32)
	b, err := app.Open(context.Background(), cfg, onchaintest.Logger("WEBHOOKS_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(b.Close)
	f.pay(2500)
	_, err = b.Dispatcher.Round(f.ctx)
	require.NoError(t, err)
	assert.Empty(t, r.requests())
	ds, err := b.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Len(t, ds[0].Log, 1)
	assert.Contains(t, *ds[0].Log[0].Error, "PAYMENTS_SECRETS_KEY")
	assert.Equal(t, store.DeliveryPending, ds[0].Status)

	secret, err := b.Webhooks.RotateSecret(f.ctx, uuid.Nil, ep.Endpoint.ID)
	require.NoError(t, err)
	_, err = b.Webhooks.Redeliver(f.ctx, uuid.Nil, nil, ds[0].EventID, nil) // not waiting an hour for the retry
	require.NoError(t, err)
	_, err = b.Dispatcher.Round(f.ctx)
	require.NoError(t, err)
	got := r.requests()
	require.Len(t, got, 1)
	assert.Len(t, strings.Fields(got[0].Signature), 1, "the old secret (another key's) is not kept")
	assert.True(t, strings.HasPrefix(secret, "whsec_"))
}

// Operator commands render events in the shape serve recorded.
func TestOperatorCommandsFollowTheServedShape(t *testing.T) {
	f := newFixture(t, "sqlite")
	guide := f.a.Cfg
	guide.ResponseShape = settlement.Guide
	g, err := app.Open(context.Background(), guide, onchaintest.Logger("WEBHOOKS_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(g.Close)
	require.NoError(t, g.RecordShape(f.ctx))
	op := f.a.Cfg
	op.Chains = config.Chains{Devnet: "off", ServeUnwatched: true, Passive: true}
	o, err := app.Open(context.Background(), op, onchaintest.Logger("WEBHOOKS_TEST_LOG"))
	require.NoError(t, err)
	t.Cleanup(o.Close)
	require.NoError(t, o.FollowRecordedShape(f.ctx))
	assert.Equal(t, settlement.Guide, o.Cfg.ResponseShape)
}
