// Package webhooks delivers the lifecycle core's events to merchants' endpoints: Standard
// Webhooks signatures, attempts scheduled in the database and made once across processes,
// retries for a day, a delivery log, redelivery, and a guard against requests into the
// gateway's own network.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Errors of the endpoint operations (client faults).
var (
	ErrUnknownEventType = errors.New("unknown webhook event type")
	ErrEndpointNotFound = domain.ErrWebhookEndpointNotFound
	ErrEventNotFound    = domain.ErrWebhookEventNotFound
)

// RotationOverlap is how long the previous secret keeps signing after a rotation.
const RotationOverlap = 24 * time.Hour

// Service manages merchants' endpoints and their delivery log.
type Service struct {
	Store  *store.Store
	Sealer Sealer // nil: no secrets key; endpoints cannot be created
	Guard  Guard
	Now    func() time.Time
}

// MaxEndpoints bounds a merchant's endpoints (deleted ones not counted): each event is delivered
// to each, so the bound is also what one event can cost the delivery workers.
const MaxEndpoints = 16

// Created is a new endpoint with its secret, shown once.
type Created struct {
	Endpoint store.Endpoint
	Secret   string
}

// Create adds an endpoint for a merchant: the URL is checked (scheme, and every address its
// host resolves to), the event types must be webhook events (none: all), and a fresh whsec_
// secret is made. The endpoint receives the events of one mode (zero: test).
func (s *Service) Create(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, rawURL string, types []string) (Created, error) {
	if s.Sealer == nil {
		return Created{}, ErrNoSecretsKey
	}
	u, err := s.Guard.CheckURL(ctx, rawURL)
	if err != nil {
		return Created{}, err
	}
	ets, err := ParseEventTypes(types)
	if err != nil {
		return Created{}, err
	}
	secret, err := NewSecret()
	if err != nil {
		return Created{}, err
	}
	sealed, err := s.Sealer.Seal([]byte(secret))
	if err != nil {
		return Created{}, err
	}
	e := store.Endpoint{ID: uuid.Must(uuid.NewV7()), MerchantID: merchantID, Mode: mode.Norm(), URL: u.String(), EventTypes: ets, Enabled: true,
		SecretSealed: sealed, CreatedAt: s.Now(), UpdatedAt: s.Now()}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.LockMerchant(merchantID); err != nil { // serialises concurrent creations for the cap
			return err
		}
		eps, err := tx.Endpoints(merchantID)
		if err != nil {
			return err
		}
		if len(eps) >= MaxEndpoints {
			return fmt.Errorf("%w: a merchant has at most %d (delete one first)", domain.ErrTooManyEndpoints, MaxEndpoints)
		}
		if err := tx.InsertEndpoint(e); err != nil {
			return err
		}
		events := make([]string, len(ets))
		for i, t := range ets {
			events[i] = string(t)
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.WebhookEndpointCreated, TargetType: audit.TargetWebhookEndpoint,
			TargetID: e.ID.String(), Details: map[string]any{"host": audit.URLHost(e.URL), "mode": string(e.Mode), "events": events}})
	}); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Created{}, domain.ErrMerchantNotFound
		}
		return Created{}, err
	}
	return Created{Endpoint: e, Secret: secret}, nil
}

// ParseEventTypes checks a subscription's event types; none (or "all") is every type.
func ParseEventTypes(types []string) ([]domain.EventType, error) {
	var out []domain.EventType
	for _, t := range types {
		t = strings.TrimSpace(t)
		if t == "" || t == "all" || t == "*" {
			continue
		}
		if !domain.IsWebhookEvent(domain.EventType(t)) {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownEventType, t, joinTypes(domain.WebhookEventTypes))
		}
		out = append(out, domain.EventType(t))
	}
	return out, nil
}

func joinTypes(ts []domain.EventType) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = string(t)
	}
	return strings.Join(parts, ", ")
}

// NewSecret makes a Standard Webhooks secret: whsec_ and 32 random bytes in base64.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// List lists a merchant's endpoints.
func (s *Service) List(ctx context.Context, merchantID uuid.UUID) ([]store.Endpoint, error) {
	if err := s.merchantExists(ctx, merchantID); err != nil {
		return nil, err
	}
	return s.Store.Read(ctx).Endpoints(merchantID)
}

func (s *Service) merchantExists(ctx context.Context, id uuid.UUID) error {
	_, err := s.Store.Read(ctx).GetMerchant(id)
	if errors.Is(err, store.ErrNotFound) {
		return domain.ErrMerchantNotFound
	}
	return err
}

// ownedBy refuses an endpoint of another merchant as unknown; merchantID Nil (the operator's
// commands) owns every endpoint.
func ownedBy(tx *store.Tx, merchantID, endpointID uuid.UUID) (store.Endpoint, error) {
	e, err := tx.GetEndpoint(endpointID)
	if err != nil {
		return store.Endpoint{}, err
	}
	if merchantID != uuid.Nil && e.MerchantID != merchantID {
		return store.Endpoint{}, store.ErrNotFound
	}
	return e, nil
}

// Endpoint reads one of a merchant's endpoints (merchantID Nil: any).
func (s *Service) Endpoint(ctx context.Context, merchantID, endpointID uuid.UUID) (store.Endpoint, error) {
	e, err := ownedBy(s.Store.Read(ctx), merchantID, endpointID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Endpoint{}, ErrEndpointNotFound
	}
	return e, err
}

// Delete removes one of a merchant's endpoints (merchantID Nil: any); its delivery log stays,
// pending deliveries stop.
func (s *Service) Delete(ctx context.Context, merchantID, endpointID uuid.UUID) error {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		e, err := ownedBy(tx, merchantID, endpointID)
		if err != nil {
			return err
		}
		if err := tx.DisableEndpoint(endpointID, store.EndpointDeleted, s.Now()); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: e.MerchantID, Action: audit.WebhookEndpointDeleted, TargetType: audit.TargetWebhookEndpoint,
			TargetID: endpointID.String(), Details: map[string]any{"host": audit.URLHost(e.URL), "mode": string(e.Mode)}})
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrEndpointNotFound
	}
	return err
}

// RotateSecret gives an endpoint a new secret; the old one keeps signing (a second signature)
// for RotationOverlap, so a receiver can switch without losing a delivery.
// merchantID Nil: any merchant's endpoint (the operator).
func (s *Service) RotateSecret(ctx context.Context, merchantID, endpointID uuid.UUID) (string, error) {
	if s.Sealer == nil {
		return "", ErrNoSecretsKey
	}
	secret, err := NewSecret()
	if err != nil {
		return "", err
	}
	sealed, err := s.Sealer.Seal([]byte(secret))
	if err != nil {
		return "", err
	}
	now := s.Now()
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		e, err := ownedBy(tx, merchantID, endpointID)
		if err != nil {
			return err
		}
		if e.DisabledReason != nil && *e.DisabledReason == store.EndpointDeleted {
			return store.ErrNotFound
		}
		if merchantID != uuid.Nil && e.PreviousSealed != nil && e.PreviousUntil != nil && e.PreviousUntil.After(now) {
			// Rotating again would drop, at once, the secret the receiver may still hold (a
			// double click). A merchant waits for the overlap to end; the operator may force it.
			return fmt.Errorf("%w until %s: the secret shown by the last rotation is the current one",
				domain.ErrRotationInProgress, e.PreviousUntil.UTC().Format(time.RFC3339))
		}
		previous := &e.SecretSealed
		if _, err := s.Sealer.Open(e.SecretSealed); err != nil {
			previous = nil // sealed under another key: it could not sign anyway
		}
		if err := tx.RotateEndpointSecret(endpointID, sealed, previous, now.Add(RotationOverlap), now); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: e.MerchantID, Action: audit.WebhookSecretRotated, TargetType: audit.TargetWebhookEndpoint,
			TargetID: endpointID.String(), Details: map[string]any{"host": audit.URLHost(e.URL), "previousSignsUntil": now.Add(RotationOverlap).UTC()}})
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrEndpointNotFound
	}
	return secret, err
}

// Deliveries lists a merchant's deliveries with their attempts, newest first.
func (s *Service) Deliveries(ctx context.Context, f store.DeliveryFilter) ([]store.Delivery, error) {
	if err := s.merchantExists(ctx, f.MerchantID); err != nil {
		return nil, err
	}
	ds, err := s.Store.Read(ctx).Deliveries(f)
	scrubLog(ds)
	return ds, err
}

// Redeliver schedules an event again (the same webhook-id) to one endpoint or to every
// endpoint subscribed to it; a merchant's request (merchantID not Nil) finds only its own events.
// mode, when not nil, finds only that mode's events (a dashboard token's).
func (s *Service) Redeliver(ctx context.Context, merchantID uuid.UUID, mode *domain.Mode, eventID string, endpointID *uuid.UUID) ([]store.Delivery, error) {
	var out []store.Delivery
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Redeliver(merchantID, mode, eventID, endpointID, s.Now())
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		if endpointID != nil {
			return nil, fmt.Errorf("%w, or no enabled endpoint %s of its merchant (an endpoint a 410 disabled needs a new one)",
				ErrEventNotFound, endpointID)
		}
		return nil, fmt.Errorf("%w (or it had no subscribed endpoint when it happened)", ErrEventNotFound)
	}
	return out, err
}
