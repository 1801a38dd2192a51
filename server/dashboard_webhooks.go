package server

import (
	"context"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's webhook endpoints, their delivery log and redelivery, always for the merchant
// bearer() authorised and in its token's mode (another merchant's or another mode's endpoint or
// event is unknown: 404). An endpoint receives the events of the mode it was made in.

func endpointOut(e store.Endpoint) gen.WebhookEndpoint {
	out := gen.WebhookEndpoint{Id: e.ID, Mode: gen.Mode(e.Mode.Norm()), Url: e.URL, Enabled: e.Enabled, DisabledReason: e.DisabledReason,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Events: make([]gen.WebhookEventType, len(e.EventTypes))}
	for i, t := range e.EventTypes {
		out.Events[i] = gen.WebhookEventType(t)
	}
	if e.PreviousSealed != nil {
		out.SecretRotationEndsAt = e.PreviousUntil
	}
	return out
}

func deliveriesOut(ds []store.Delivery) gen.WebhookDeliveryList {
	out := gen.WebhookDeliveryList{Data: make([]gen.WebhookDelivery, len(ds))}
	for i, d := range ds {
		w := gen.WebhookDelivery{Id: d.ID, EventId: d.EventID, EndpointId: d.EndpointID, Status: gen.WebhookDeliveryStatus(d.Status),
			Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
			Log: make([]gen.WebhookAttempt, len(d.Log))}
		for j, a := range d.Log {
			w.Log[j] = gen.WebhookAttempt{Attempt: a.Attempt, StartedAt: a.StartedAt, LatencyMs: a.LatencyMS,
				StatusCode: a.StatusCode, Error: a.Error, Response: a.ResponseHead}
		}
		out.Data[i] = w
	}
	return out
}

// actingEndpoint is the acting merchant and the path's endpoint id, an endpoint of the token's
// mode (a malformed id, or another mode's endpoint, is no endpoint of this merchant).
func (h *handlers) actingEndpoint(ctx context.Context, endpoint string) (merchant, id uuid.UUID, err error) {
	m, err := actingAs(ctx)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if id, err = uuid.Parse(endpoint); err != nil {
		return uuid.Nil, uuid.Nil, domain.ErrWebhookEndpointNotFound
	}
	e, err := h.webhooks.Endpoint(ctx, m.ID, id)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if e.Mode != m.Mode.Norm() {
		return uuid.Nil, uuid.Nil, domain.ErrWebhookEndpointNotFound
	}
	return m.ID, id, nil
}

func (h *handlers) ListMerchantWebhookEndpoints(ctx context.Context, _ gen.ListMerchantWebhookEndpointsRequestObject) (gen.ListMerchantWebhookEndpointsResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	eps, err := h.webhooks.List(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	out := gen.WebhookEndpointList{Data: []gen.WebhookEndpoint{}}
	for _, e := range eps {
		if e.Mode == m.Mode.Norm() {
			out.Data = append(out.Data, endpointOut(e))
		}
	}
	return gen.ListMerchantWebhookEndpoints200JSONResponse(out), nil
}

func (h *handlers) CreateMerchantWebhookEndpoint(ctx context.Context, req gen.CreateMerchantWebhookEndpointRequestObject) (gen.CreateMerchantWebhookEndpointResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	var types []string
	if req.Body.Events != nil {
		for _, t := range *req.Body.Events {
			types = append(types, string(t))
		}
	}
	c, err := h.webhooks.Create(ctx, m.ID, m.Mode, req.Body.Url, types)
	if err != nil {
		return nil, err
	}
	return gen.CreateMerchantWebhookEndpoint201JSONResponse{Endpoint: endpointOut(c.Endpoint), Secret: c.Secret}, nil
}

func (h *handlers) DeleteMerchantWebhookEndpoint(ctx context.Context, req gen.DeleteMerchantWebhookEndpointRequestObject) (gen.DeleteMerchantWebhookEndpointResponseObject, error) {
	m, id, err := h.actingEndpoint(ctx, req.EndpointId)
	if err != nil {
		return nil, err
	}
	if err := h.webhooks.Delete(ctx, m, id); err != nil {
		return nil, err
	}
	return gen.DeleteMerchantWebhookEndpoint204Response{}, nil
}

func (h *handlers) RotateMerchantWebhookSecret(ctx context.Context, req gen.RotateMerchantWebhookSecretRequestObject) (gen.RotateMerchantWebhookSecretResponseObject, error) {
	m, id, err := h.actingEndpoint(ctx, req.EndpointId)
	if err != nil {
		return nil, err
	}
	secret, err := h.webhooks.RotateSecret(ctx, m, id)
	if err != nil {
		return nil, err
	}
	e, err := h.webhooks.Endpoint(ctx, m, id)
	if err != nil {
		return nil, err
	}
	return gen.RotateMerchantWebhookSecret200JSONResponse{Endpoint: endpointOut(e), Secret: secret}, nil
}

func (h *handlers) ListMerchantWebhookDeliveries(ctx context.Context, req gen.ListMerchantWebhookDeliveriesRequestObject) (gen.ListMerchantWebhookDeliveriesResponseObject, error) {
	acting, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	m := acting.ID
	f := store.DeliveryFilter{MerchantID: m, Mode: &acting.Mode, EndpointID: req.Params.EndpointId, EventID: strOrEmpty(req.Params.EventId), Limit: 50}
	if req.Params.Limit != nil {
		f.Limit = int(*req.Params.Limit)
	}
	ds, err := h.webhooks.Deliveries(ctx, f)
	if err != nil {
		return nil, err
	}
	return gen.ListMerchantWebhookDeliveries200JSONResponse(deliveriesOut(ds)), nil
}

func (h *handlers) RedeliverMerchantWebhookEvent(ctx context.Context, req gen.RedeliverMerchantWebhookEventRequestObject) (gen.RedeliverMerchantWebhookEventResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	if id := req.Params.EndpointId; id != nil {
		if _, _, err := h.actingEndpoint(ctx, id.String()); err != nil {
			return nil, err
		}
	}
	ds, err := h.webhooks.Redeliver(ctx, m.ID, &m.Mode, req.EventId, req.Params.EndpointId)
	if err != nil {
		return nil, err
	}
	return gen.RedeliverMerchantWebhookEvent202JSONResponse(deliveriesOut(ds)), nil
}

// TestMerchantWebhookEndpoint sends a webhook.test event to one endpoint of the token's mode.
func (h *handlers) TestMerchantWebhookEndpoint(ctx context.Context, req gen.TestMerchantWebhookEndpointRequestObject) (gen.TestMerchantWebhookEndpointResponseObject, error) {
	m, id, err := h.actingEndpoint(ctx, req.EndpointId)
	if err != nil {
		return nil, err
	}
	sent, err := h.webhooks.SendTest(ctx, m, id)
	if err != nil {
		return nil, err
	}
	return gen.TestMerchantWebhookEndpoint202JSONResponse{EventId: sent.EventID, DeliveryId: sent.DeliveryID}, nil
}
