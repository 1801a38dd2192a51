package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// DeliveryStatus is where a delivery is.
type DeliveryStatus string

// Delivery states.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
	DeliveryDisabled  DeliveryStatus = "disabled"
)

// Delivery is one event's delivery to one endpoint, with its attempts when listed.
type Delivery struct {
	ID            uuid.UUID
	EventID       string
	EndpointID    uuid.UUID
	MerchantID    uuid.UUID
	Status        DeliveryStatus
	Attempts      int64
	NextAttemptAt time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Log           []Attempt
}

type deliveryRow struct {
	ID            uuid.UUID `gorm:"primaryKey"`
	EventID       string
	EndpointID    uuid.UUID
	MerchantID    uuid.UUID
	Status        DeliveryStatus
	Attempts      int64
	NextAttemptAt time.Time
	LockedUntil   *time.Time
	LockedBy      *string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

func (r deliveryRow) domain() Delivery {
	return Delivery{ID: r.ID, EventID: r.EventID, EndpointID: r.EndpointID, MerchantID: r.MerchantID, Status: r.Status,
		Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.UTC(), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// Attempt is one HTTP attempt of a delivery.
type Attempt struct {
	ID           uuid.UUID
	DeliveryID   uuid.UUID
	Attempt      int64
	StartedAt    time.Time
	LatencyMS    int64
	StatusCode   *int64
	Error        *string
	ResponseHead *string
}

type attemptRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	DeliveryID   uuid.UUID
	Attempt      int64
	StartedAt    time.Time
	LatencyMs    int64
	StatusCode   *int64
	Error        *string
	ResponseHead *string
}

func (attemptRow) TableName() string { return "webhook_attempts" }

// SubscribedEndpoints lists a merchant's enabled endpoints of a mode subscribed to an event type.
func (t *Tx) SubscribedEndpoints(merchantID uuid.UUID, mode domain.Mode, typ domain.EventType) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := subscribedTo(t.db.Model(&endpointRow{}).Where("merchant_id = ? AND livemode = ? AND enabled", merchantID, mode.Live()),
		string(typ)).Pluck("id", &ids).Error
	return ids, translate(err)
}

// subscribedTo narrows an endpoint query to those subscribed to an event type (an empty list is
// every type): one rule for the first delivery and for a redelivery.
func subscribedTo(q *gorm.DB, typ string) *gorm.DB {
	return q.Where("event_types = '' OR event_types LIKE ?", "%,"+typ+",%")
}

// ScheduleDelivery schedules an event's delivery to an endpoint, due at.
func (t *Tx) ScheduleDelivery(eventID string, endpointID, merchantID uuid.UUID, at time.Time) error {
	_, err := t.ScheduleDeliveryID(eventID, endpointID, merchantID, at)
	return err
}

// InsertTestEvent appends an endpoint's test event (the dashboard's webhook.test; its payload
// is also its body) and schedules its one delivery, to that endpoint, due at. Only endpoint
// events: payment and withdrawal events are the lifecycle core's (InsertEvent).
func (t *Tx) InsertTestEvent(e domain.Event, at time.Time) (uuid.UUID, error) {
	if e.Entity != domain.EntityEndpoint || e.Type != domain.EventWebhookTest {
		return uuid.Nil, fmt.Errorf("store: InsertTestEvent takes an endpoint's %s event, not %s %s", domain.EventWebhookTest, e.Entity, e.Type)
	}
	if err := t.InsertEvent(e, e.Payload); err != nil {
		return uuid.Nil, err
	}
	return t.ScheduleDeliveryID(e.ID, e.EntityID, e.MerchantID, at)
}

// ScheduleDeliveryID is ScheduleDelivery returning the delivery's id.
func (t *Tx) ScheduleDeliveryID(eventID string, endpointID, merchantID uuid.UUID, at time.Time) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	return id, translate(t.db.Create(&deliveryRow{ID: id, EventID: eventID, EndpointID: endpointID,
		MerchantID: merchantID, Status: DeliveryPending, NextAttemptAt: at.UTC(), CreatedAt: at.UTC(), UpdatedAt: at.UTC()}).Error)
}

// Redeliver schedules an event again, due now, to one enabled endpoint of its merchant or to
// every enabled one subscribed to its type. It returns the deliveries made.
func (t *Tx) Redeliver(merchantID uuid.UUID, mode *domain.Mode, eventID string, endpointID *uuid.UUID, now time.Time) ([]Delivery, error) {
	var ev eventRow
	if err := t.db.Take(&ev, "id = ?", eventID).Error; err != nil {
		return nil, translate(err)
	}
	if merchantID != uuid.Nil && ev.MerchantID != merchantID {
		return nil, ErrNotFound // another merchant's event
	}
	if mode != nil && ev.Livemode != mode.Live() {
		return nil, ErrNotFound // another mode's event
	}
	if ev.Object == nil || !domain.IsWebhookEvent(domain.EventType(ev.Type)) {
		return nil, ErrNotFound // not a webhook event
	}
	q := t.db.Where("merchant_id = ? AND livemode = ? AND enabled", ev.MerchantID, ev.Livemode)
	if endpointID != nil {
		q = q.Where("id = ?", *endpointID)
	} else {
		q = subscribedTo(q, ev.Type)
	}
	var eps []endpointRow
	if err := q.Find(&eps).Error; err != nil {
		return nil, translate(err)
	}
	if endpointID != nil && len(eps) == 0 {
		return nil, ErrNotFound
	}
	var out []Delivery
	for _, ep := range eps {
		// A delivery of this event to this endpoint still pending (waiting for a retry) is made
		// due now instead: repeated requests never queue more than one delivery per endpoint (no
		// amplification towards a receiver, no crowding out other merchants' deliveries).
		var pending deliveryRow
		err := t.db.Where("event_id = ? AND endpoint_id = ? AND status = ?", ev.ID, ep.ID, DeliveryPending).Take(&pending).Error
		if err == nil {
			if pending.NextAttemptAt.After(now) {
				if err := t.db.Model(&deliveryRow{}).Where("id = ?", pending.ID).
					Updates(map[string]any{"next_attempt_at": now.UTC(), "updated_at": now.UTC()}).Error; err != nil {
					return nil, translate(err)
				}
				pending.NextAttemptAt, pending.UpdatedAt = now.UTC(), now.UTC()
			}
			out = append(out, pending.domain())
			continue
		}
		if err := translate(err); !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		row := deliveryRow{ID: uuid.Must(uuid.NewV7()), EventID: ev.ID, EndpointID: ep.ID, MerchantID: ev.MerchantID,
			Status: DeliveryPending, NextAttemptAt: now.UTC(), CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
		if err := t.db.Create(&row).Error; err != nil {
			return nil, translate(err)
		}
		out = append(out, row.domain())
	}
	return out, nil
}

// DeliveryFilter selects deliveries for the log.
type DeliveryFilter struct {
	MerchantID uuid.UUID
	Mode       *domain.Mode // only deliveries to endpoints of this mode (nil: every mode)
	EndpointID *uuid.UUID
	EventID    string
	EntityID   *uuid.UUID // only deliveries of this payment's or withdrawal's events
	Limit      int
}

// Deliveries lists deliveries, newest first, with their attempts.
func (t *Tx) Deliveries(f DeliveryFilter) ([]Delivery, error) {
	q := t.db.Where("merchant_id = ?", f.MerchantID)
	if f.Mode != nil {
		q = q.Where("endpoint_id IN (SELECT id FROM webhook_endpoints WHERE merchant_id = ? AND livemode = ?)", f.MerchantID, f.Mode.Live())
	}
	if f.EndpointID != nil {
		q = q.Where("endpoint_id = ?", *f.EndpointID)
	}
	if f.EventID != "" {
		q = q.Where("event_id = ?", f.EventID)
	}
	if f.EntityID != nil {
		q = q.Where("event_id IN (SELECT id FROM events WHERE entity_id = ? AND merchant_id = ?)", *f.EntityID, f.MerchantID)
	}
	var rows []deliveryRow
	if err := q.Order("created_at DESC, id DESC").Limit(max(f.Limit, 1)).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Delivery, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i], ids[i] = r.domain(), r.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	var atts []attemptRow
	if err := t.db.Where("delivery_id IN ?", ids).Order("attempt").Find(&atts).Error; err != nil {
		return nil, translate(err)
	}
	by := map[uuid.UUID][]Attempt{}
	for _, a := range atts {
		by[a.DeliveryID] = append(by[a.DeliveryID], Attempt{ID: a.ID, DeliveryID: a.DeliveryID, Attempt: a.Attempt,
			StartedAt: a.StartedAt.UTC(), LatencyMS: a.LatencyMs, StatusCode: a.StatusCode, Error: a.Error, ResponseHead: a.ResponseHead})
	}
	for i := range out {
		out[i].Log = by[out[i].ID]
	}
	return out, nil
}

// PurgeDeliveryLog deletes attempts started before, and finished deliveries last moved before.
func (t *Tx) PurgeDeliveryLog(before time.Time) (int64, error) {
	res := t.db.Where("started_at < ?", before.UTC()).Delete(&attemptRow{})
	if res.Error != nil {
		return 0, translate(res.Error)
	}
	n := res.RowsAffected
	res = t.db.Where("status <> ? AND updated_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = webhook_deliveries.id)",
		DeliveryPending, before.UTC()).Delete(&deliveryRow{})
	return n + res.RowsAffected, translate(res.Error)
}
