package store

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// Webhooks' storage: merchants' endpoints, the deliveries of events to them (scheduled in the
// transaction of the event), and every attempt.

// Endpoint is a merchant's webhook endpoint.
type Endpoint struct {
	ID             uuid.UUID
	MerchantID     uuid.UUID
	Mode           domain.Mode // receives the events of this mode only
	URL            string
	EventTypes     []domain.EventType // empty: every webhook event type
	Enabled        bool
	DisabledReason *string
	SecretSealed   string
	PreviousSealed *string
	PreviousUntil  *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// EndpointDeleted is the disabled reason of a deleted endpoint: its delivery log stays.
const EndpointDeleted = "deleted"

type endpointRow struct {
	ID             uuid.UUID `gorm:"primaryKey"`
	MerchantID     uuid.UUID
	Livemode       bool
	URL            string `gorm:"column:url"`
	EventTypes     string
	Enabled        bool
	DisabledReason *string
	SecretSealed   string
	PreviousSealed *string
	PreviousUntil  *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (endpointRow) TableName() string { return "webhook_endpoints" }

func (r endpointRow) domain() Endpoint {
	e := Endpoint{ID: r.ID, MerchantID: r.MerchantID, Mode: domain.ModeOf(r.Livemode), URL: r.URL, Enabled: r.Enabled, DisabledReason: r.DisabledReason,
		SecretSealed: r.SecretSealed, PreviousSealed: r.PreviousSealed, PreviousUntil: r.PreviousUntil,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	for _, t := range strings.Split(strings.Trim(r.EventTypes, ","), ",") {
		if t != "" {
			e.EventTypes = append(e.EventTypes, domain.EventType(t))
		}
	}
	return e
}

// typesColumn is ",a,b," so one LIKE '%,type,%' finds a subscription; "" is every type.
func typesColumn(ts []domain.EventType) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = string(t)
	}
	return "," + strings.Join(parts, ",") + ","
}

// InsertEndpoint stores a new endpoint.
func (t *Tx) InsertEndpoint(e Endpoint) error {
	return translate(t.db.Create(&endpointRow{ID: e.ID, MerchantID: e.MerchantID, Livemode: e.Mode.Live(), URL: e.URL, EventTypes: typesColumn(e.EventTypes),
		Enabled: true, SecretSealed: e.SecretSealed, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.CreatedAt.UTC()}).Error)
}

// Endpoints lists a merchant's endpoints (deleted ones left out), oldest first.
func (t *Tx) Endpoints(merchantID uuid.UUID) ([]Endpoint, error) {
	var rows []endpointRow
	if err := t.db.Where("merchant_id = ? AND (disabled_reason IS NULL OR disabled_reason <> ?)", merchantID, EndpointDeleted).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Endpoint, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// GetEndpoint reads one endpoint (deleted ones too: their deliveries name them).
func (t *Tx) GetEndpoint(id uuid.UUID) (Endpoint, error) {
	var row endpointRow
	if err := t.db.Take(&row, "id = ?", id).Error; err != nil {
		return Endpoint{}, translate(err)
	}
	return row.domain(), nil
}

// DisableEndpoint turns an endpoint off (reason: "deleted", "410 Gone", …); its pending
// deliveries are disabled with it.
func (t *Tx) DisableEndpoint(id uuid.UUID, reason string, now time.Time) error {
	res := t.db.Model(&endpointRow{}).Where("id = ? AND (disabled_reason IS NULL OR disabled_reason <> ?)", id, EndpointDeleted).
		Updates(map[string]any{"enabled": false, "disabled_reason": reason, "updated_at": now.UTC()})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return translate(t.db.Model(&deliveryRow{}).Where("endpoint_id = ? AND status = ?", id, DeliveryPending).
		Updates(map[string]any{"status": DeliveryDisabled, "updated_at": now.UTC()}).Error)
}

// RotateEndpointSecret puts a new secret in place; the previous one (nil: none) keeps signing
// until until.
func (t *Tx) RotateEndpointSecret(id uuid.UUID, sealed string, previous *string, until, now time.Time) error {
	res := t.db.Model(&endpointRow{}).Where("id = ? AND (disabled_reason IS NULL OR disabled_reason <> ?)", id, EndpointDeleted).
		Updates(map[string]any{"secret_sealed": sealed, "previous_sealed": previous, "previous_until": until.UTC(), "updated_at": now.UTC()})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

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
	err := t.db.Model(&endpointRow{}).Where("merchant_id = ? AND livemode = ? AND enabled AND (event_types = '' OR event_types LIKE ?)",
		merchantID, mode.Live(), "%,"+string(typ)+",%").Pluck("id", &ids).Error
	return ids, translate(err)
}

// ScheduleDelivery schedules an event's delivery to an endpoint, due at.
func (t *Tx) ScheduleDelivery(eventID string, endpointID, merchantID uuid.UUID, at time.Time) error {
	return translate(t.db.Create(&deliveryRow{ID: uuid.Must(uuid.NewV7()), EventID: eventID, EndpointID: endpointID,
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
		q = q.Where("event_types = '' OR event_types LIKE ?", "%,"+ev.Type+",%")
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

// Due is a claimed delivery with what its attempt needs.
type Due struct {
	Delivery Delivery
	Event    domain.Event
	Endpoint Endpoint
}

// ClaimDue takes up to limit deliveries due at now for holder until now+lease: an attempt is
// made by one process. On PostgreSQL the rows are picked FOR UPDATE SKIP LOCKED, so processes
// claiming together take different rows; SQLite has one writer.
func (t *Tx) ClaimDue(holder string, now time.Time, lease time.Duration, limit int) ([]Due, error) {
	if t.readOnly {
		return nil, ErrLockOutsideTx
	}
	q := t.db.Model(&deliveryRow{}).Select("id").
		Where("status = ? AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)", DeliveryPending, now.UTC(), now.UTC()).
		Order("next_attempt_at, id").Limit(limit)
	if t.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var ids []uuid.UUID
	if err := q.Pluck("id", &ids).Error; err != nil {
		return nil, translate(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if err := t.db.Model(&deliveryRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"locked_until": now.Add(lease).UTC(), "locked_by": holder}).Error; err != nil {
		return nil, translate(err)
	}
	var rows []deliveryRow
	if err := t.db.Where("id IN ?", ids).Order("next_attempt_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Due, 0, len(rows))
	for _, r := range rows {
		var ev eventRow
		if err := t.db.Take(&ev, "id = ?", r.EventID).Error; err != nil {
			return nil, translate(err)
		}
		var ep endpointRow
		if err := t.db.Take(&ep, "id = ?", r.EndpointID).Error; err != nil {
			return nil, translate(err)
		}
		out = append(out, Due{Delivery: r.domain(), Event: ev.domain(), Endpoint: ep.domain()})
	}
	return out, nil
}

// AttemptOutcome is what an attempt leads to.
type AttemptOutcome struct {
	Status DeliveryStatus // pending (next at Next), delivered, failed
	Next   time.Time
}

// RecordAttempt logs an attempt and moves its delivery on — only while holder still holds it
// (ErrConflict otherwise: the lease ran out and another process took the delivery over).
func (t *Tx) RecordAttempt(holder string, a Attempt, out AttemptOutcome, now time.Time) error {
	updates := map[string]any{"status": out.Status, "attempts": a.Attempt, "locked_until": nil, "locked_by": nil,
		"updated_at": now.UTC()}
	if out.Status == DeliveryPending {
		updates["next_attempt_at"] = out.Next.UTC()
	}
	res := t.db.Model(&deliveryRow{}).Where("id = ? AND locked_by = ? AND status = ?", a.DeliveryID, holder, DeliveryPending).Updates(updates)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return ErrConflict
	}
	return translate(t.db.Create(&attemptRow{ID: a.ID, DeliveryID: a.DeliveryID, Attempt: a.Attempt, StartedAt: a.StartedAt.UTC(),
		LatencyMs: a.LatencyMS, StatusCode: a.StatusCode, Error: a.Error, ResponseHead: a.ResponseHead}).Error)
}

// DeliveryFilter selects deliveries for the log.
type DeliveryFilter struct {
	MerchantID uuid.UUID
	Mode       *domain.Mode // only deliveries to endpoints of this mode (nil: every mode)
	EndpointID *uuid.UUID
	EventID    string
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
