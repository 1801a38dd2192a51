package webhooks

import (
	"fmt"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Fanout decides who receives an event: the merchant's enabled endpoints of the event's mode
// subscribed to its type. It appends the event and schedules its deliveries, due at once, in the
// transaction that writes the state change (lifecycle.Core calls it), so an event is delivered
// exactly when its change commits. The object (the webhook body) is rendered only when someone
// is to receive it.
type Fanout struct{}

// Append appends e to tx's outbox and schedules its deliveries.
func (Fanout) Append(tx *store.Tx, e domain.Event) error {
	if e.Render == nil || !domain.IsWebhookEvent(e.Type) {
		return tx.InsertEvent(e, nil)
	}
	endpoints, err := tx.SubscribedEndpoints(e.MerchantID, e.Mode, e.Type)
	if err != nil {
		return err
	}
	if len(endpoints) == 0 {
		return tx.InsertEvent(e, nil)
	}
	object, err := e.Render()
	if err != nil {
		return fmt.Errorf("webhooks: render event %s: %w", e.ID, err)
	}
	if err := tx.InsertEvent(e, object); err != nil {
		return err
	}
	for _, ep := range endpoints {
		if err := tx.ScheduleDelivery(e.ID, ep, e.MerchantID, e.CreatedAt); err != nil {
			return err
		}
	}
	return nil
}
