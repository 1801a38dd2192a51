package webhooks

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// SentTest is a test event and its delivery.
type SentTest struct {
	EventID    string
	DeliveryID uuid.UUID
}

// SendTest schedules a webhook.test event to one enabled endpoint of the merchant, due now,
// through the ordinary delivery path (signed with the endpoint's secrets, retried, logged). The
// event is the endpoint's (entity endpoint, sequenced by time) and is never fanned out.
func (s *Service) SendTest(ctx context.Context, merchantID, endpointID uuid.UUID) (SentTest, error) {
	var out SentTest
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		e, err := ownedBy(tx, merchantID, endpointID)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return fmt.Errorf("%w: endpoint %s is disabled (a 410 answer disabled it): create a new one", ErrEndpointNotFound, endpointID)
		}
		now := s.Now().UTC()
		id := uuid.Must(uuid.NewV7())
		object, err := json.Marshal(map[string]any{"test": true, "endpointId": endpointID})
		if err != nil {
			return err
		}
		ev := domain.Event{ID: "evt_" + hex.EncodeToString(id[:]), Type: domain.EventWebhookTest, Entity: domain.EntityEndpoint,
			EntityID: endpointID, MerchantID: merchantID, Mode: e.Mode, Sequence: now.UnixNano(), Payload: object, CreatedAt: now}
		out.EventID = ev.ID
		out.DeliveryID, err = tx.InsertTestEvent(ev, now)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return SentTest{}, ErrEndpointNotFound
	}
	return out, err
}
