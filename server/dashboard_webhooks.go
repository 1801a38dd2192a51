package server

import (
	"context"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's webhook endpoints, their delivery log and redelivery, always for the merchant
// bearer() authorised (another merchant's endpoint or event is unknown: 404).

func endpointOut(e store.Endpoint) gen.WebhookEndpoint {
	out := gen.WebhookEndpoint{Id: e.ID, Url: e.URL, Enabled: e.Enabled, DisabledReason: e.DisabledReason,
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

// actingEndpoint is the acting merchant and the path's endpoint id (a malformed one is no
// endpoint of this merchant).
func actingEndpoint(ctx context.Context, endpoint string) (merchant, id uuid.UUID, err error) {
	if merchant, err = actingMerchant(ctx); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if id, err = uuid.Parse(endpoint); err != nil {
		return uuid.Nil, uuid.Nil, domain.ErrWebhookEndpointNotFound
	}
	return merchant, id, nil
}

func (h *handlers) ListMerchantWebhookEndpoints(ctx context.Context, _ gen.ListMerchantWebhookEndpointsRequestObject) (gen.ListMerchantWebhookEndpointsResponseObject, error) {
	m, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	eps, err := h.webhooks.List(ctx, m)
	if err != nil {
		return nil, err
	}
	out := gen.WebhookEndpointList{Data: make([]gen.WebhookEndpoint, len(eps))}
	for i, e := range eps {
		out.Data[i] = endpointOut(e)
	}
	return gen.ListMerchantWebhookEndpoints200JSONResponse(out), nil
}

func (h *handlers) CreateMerchantWebhookEndpoint(ctx context.Context, req gen.CreateMerchantWebhookEndpointRequestObject) (gen.CreateMerchantWebhookEndpointResponseObject, error) {
	m, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	var types []string
	if req.Body.Events != nil {
		for _, t := range *req.Body.Events {
			types = append(types, string(t))
		}
	}
	c, err := h.webhooks.Create(ctx, m, req.Body.Url, types)
	if err != nil {
		return nil, err
	}
	return gen.CreateMerchantWebhookEndpoint201JSONResponse{Endpoint: endpointOut(c.Endpoint), Secret: c.Secret}, nil
}

func (h *handlers) DeleteMerchantWebhookEndpoint(ctx context.Context, req gen.DeleteMerchantWebhookEndpointRequestObject) (gen.DeleteMerchantWebhookEndpointResponseObject, error) {
	m, id, err := actingEndpoint(ctx, req.EndpointId)
	if err != nil {
		return nil, err
	}
	if err := h.webhooks.Delete(ctx, m, id); err != nil {
		return nil, err
	}
	return gen.DeleteMerchantWebhookEndpoint204Response{}, nil
}

func (h *handlers) RotateMerchantWebhookSecret(ctx context.Context, req gen.RotateMerchantWebhookSecretRequestObject) (gen.RotateMerchantWebhookSecretResponseObject, error) {
	m, id, err := actingEndpoint(ctx, req.EndpointId)
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
	m, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	f := store.DeliveryFilter{MerchantID: m, EndpointID: req.Params.EndpointId, EventID: strOrEmpty(req.Params.EventId), Limit: 50}
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
	m, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := h.webhooks.Redeliver(ctx, m, req.EventId, req.Params.EndpointId)
	if err != nil {
		return nil, err
	}
	return gen.RedeliverMerchantWebhookEvent202JSONResponse(deliveriesOut(ds)), nil
}
