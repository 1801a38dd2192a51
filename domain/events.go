package domain

import (
	"time"

	"github.com/google/uuid"
)

// EventType names a domain event: `<entity>.<what happened>`.
type EventType string

// Event types written by the lifecycle core. A status change is announced as the new status.
const (
	EventPaymentCreated       EventType = "payment.created"
	EventPaymentQuotesExpired EventType = "payment.quotes_expired" // quotes expired; the payment is still open
	EventPaymentUpdated       EventType = "payment.updated"
	EventPaymentUnderpaid     EventType = "payment.underpaid"     // the confirmed total is short of the amount due; waiting for a top-up
	EventPaymentLateTransfer  EventType = "payment.late_transfer" // a transfer the settlement did not count was credited on its own
	EventPaymentOverpaid      EventType = "payment.overpaid"      // completed with more than was due (announced after payment.completed)
	EventWithdrawalCreated    EventType = "withdrawal.created"
	EventWithdrawalUpdated    EventType = "withdrawal.updated"
	// EventWebhookTest is the dashboard's test event, sent to one endpoint on request whatever
	// its subscription (never fanned out: not in WebhookEventTypes).
	EventWebhookTest EventType = "webhook.test"
)

// PaymentStatusEvent is the event announcing a payment's move to status.
func PaymentStatusEvent(s PaymentStatus) EventType { return EventType("payment." + string(s)) }

// WithdrawalStatusEvent is the event announcing a withdrawal's move to status.
func WithdrawalStatusEvent(s WithdrawalStatus) EventType { return EventType("withdrawal." + string(s)) }

// EntityKind names what an event is about.
type EntityKind string

// Entities with events.
const (
	EntityPayment    EntityKind = "payment"
	EntityWithdrawal EntityKind = "withdrawal"
	EntityEndpoint   EntityKind = "endpoint" // a webhook endpoint's test event
)

// Event is one row of the outbox, written in the transaction of the change it announces.
// Sequence orders an entity's events: it is the entity's version after the change.
type Event struct {
	ID         string // evt_<uuidv7 hex>
	Type       EventType
	Entity     EntityKind
	EntityID   uuid.UUID
	MerchantID uuid.UUID
	Mode       Mode // its object's: delivered to the endpoints of that mode only
	Sequence   int64
	Payload    []byte // JSON snapshot of the entity after the change
	Object     []byte // the entity as the API's GET returns it, in the deployment's shape (nil: not rendered)
	CreatedAt  time.Time
	// Render renders Object; it is called only when the event is delivered to an endpoint (a
	// webhook event type with a subscribed endpoint), so an event nobody receives costs nothing.
	Render func() ([]byte, error)
}

// WebhookEventTypes are the events delivered to merchants' webhook endpoints (the others —
// payment.updated, payment.quotes_expired, withdrawal.updated, refund.pending, refund.processing,
// refund.updated — stay in the outbox).
var WebhookEventTypes = []EventType{
	"payment.created", "payment.processing", "payment.completed", "payment.expired", "payment.failed",
	"payment.cancelled", EventPaymentUnderpaid, EventPaymentOverpaid, EventPaymentLateTransfer,
	EventWithdrawalCreated, "withdrawal.processing", "withdrawal.completed", "withdrawal.failed", "withdrawal.cancelled",
	EventRefundCreated, EventRefundCompleted, EventRefundFailed, EventRefundCancelled,
}

// IsWebhookEvent reports whether events of type t are delivered by webhook.
func IsWebhookEvent(t EventType) bool {
	for _, w := range WebhookEventTypes {
		if w == t {
			return true
		}
	}
	return false
}
