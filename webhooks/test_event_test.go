package webhooks_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

// A test event reaches one endpoint through the ordinary path, signed, whatever the endpoint
// subscribes to; a disabled, unknown or foreign endpoint is ErrEndpointNotFound.
func TestSendTestDeliversASignedTestEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend)
		r := newReceiver(t)
		ep := f.endpoint(r.srv.URL+"/hooks", "withdrawal.completed")
		sent, err := f.a.Webhooks.SendTest(f.ctx, f.merchant.ID, ep.Endpoint.ID)
		require.NoError(t, err)
		f.rounds(3)
		got := r.requests()
		require.Len(t, got, 1)
		assert.Equal(t, sent.EventID, got[0].ID)
		wh, err := standardwebhooks.NewWebhook(ep.Secret)
		require.NoError(t, err)
		hdr := http.Header{}
		hdr.Set("webhook-id", got[0].ID)
		hdr.Set("webhook-timestamp", got[0].Timestamp)
		hdr.Set("webhook-signature", got[0].Signature)
		require.NoError(t, wh.Verify(got[0].Body, hdr))
		var body struct {
			Type string `json:"type"`
			Data struct {
				Object struct {
					Test       bool   `json:"test"`
					EndpointID string `json:"endpointId"`
				} `json:"object"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(got[0].Body, &body))
		assert.Equal(t, "webhook.test", body.Type)
		assert.True(t, body.Data.Object.Test)
		assert.Equal(t, ep.Endpoint.ID.String(), body.Data.Object.EndpointID)
		ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, EventID: sent.EventID, Limit: 5})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		assert.Equal(t, sent.DeliveryID, ds[0].ID)
		assert.Equal(t, store.DeliveryDelivered, ds[0].Status)

		// Twice in a row: two events (time-sequenced, no conflict).
		again, err := f.a.Webhooks.SendTest(f.ctx, f.merchant.ID, ep.Endpoint.ID)
		require.NoError(t, err)
		assert.NotEqual(t, sent.EventID, again.EventID)

		_, err = f.a.Webhooks.SendTest(f.ctx, uuid.New(), ep.Endpoint.ID)
		assert.ErrorIs(t, err, webhooks.ErrEndpointNotFound, "another merchant's endpoint")
		_, err = f.a.Webhooks.SendTest(f.ctx, f.merchant.ID, uuid.New())
		assert.ErrorIs(t, err, webhooks.ErrEndpointNotFound)
		require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error { return tx.DisableEndpoint(ep.Endpoint.ID, "gone", f.a.Webhooks.Now()) }))
		_, err = f.a.Webhooks.SendTest(f.ctx, f.merchant.ID, ep.Endpoint.ID)
		assert.ErrorIs(t, err, webhooks.ErrEndpointNotFound, "a disabled endpoint")
	})
}
