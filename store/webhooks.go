package store

import (
	"strings"
	"time"

	"github.com/google/uuid"

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
