package server

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// The dashboard's secret keys: listed by prefix, created (the key in that answer only) and
// revoked, always for the merchant bearer() authorised.

func apiKeyOut(k domain.APIKey) gen.ApiKey {
	return gen.ApiKey{Id: k.ID, Prefix: k.Prefix, Mode: gen.Mode(k.Mode.Norm()), CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt,
		CreatedBy: k.CreatedByEmail}
}

func (h *handlers) ListMerchantApiKeys(ctx context.Context, _ gen.ListMerchantApiKeysRequestObject) (gen.ListMerchantApiKeysResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := h.merchants.Keys(ctx, m.ID, m.Mode)
	if err != nil {
		return nil, err
	}
	out := gen.ApiKeyList{Data: make([]gen.ApiKey, len(keys))}
	for i, k := range keys {
		out.Data[i] = apiKeyOut(k)
	}
	return gen.ListMerchantApiKeys200JSONResponse(out), nil
}

// CreateMerchantApiKey makes a key of the body's mode (default test). A live key withdraws
// through the secret-key API, so only a role that may move money (admin and up; persons and
// service tokens alike) makes one: a developer makes test keys. A test-mode token never makes a
// live key either: that would hand live money to whoever holds only test access.
func (h *handlers) CreateMerchantApiKey(ctx context.Context, req gen.CreateMerchantApiKeyRequestObject) (gen.CreateMerchantApiKeyResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	mode := domain.ModeTest
	if req.Body != nil && req.Body.Mode != nil {
		mode = domain.Mode(*req.Body.Mode)
	}
	if mode.Live() && !actingRole(ctx).Includes(domain.RoleAdmin) {
		return nil, domain.ErrLiveKeyNeedsAdmin
	}
	if mode.Live() && !m.Mode.Live() {
		return nil, fmt.Errorf("%w: a live key", domain.ErrLiveOnly)
	}
	c, err := h.merchants.CreateKey(ctx, m.ID, mode)
	if err != nil {
		return nil, err
	}
	return gen.CreateMerchantApiKey201JSONResponse{Key: apiKeyOut(c.Key), SecretKey: c.SecretKey}, nil
}

func (h *handlers) RevokeMerchantApiKey(ctx context.Context, req gen.RevokeMerchantApiKeyRequestObject) (gen.RevokeMerchantApiKeyResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	id, perr := uuid.Parse(req.KeyId)
	if perr != nil {
		return nil, domain.ErrAPIKeyNotFound
	}
	k, err := h.merchants.RevokeKey(ctx, m.ID, m.Mode, id)
	if err != nil {
		return nil, err
	}
	return gen.RevokeMerchantApiKey200JSONResponse(apiKeyOut(k)), nil
}
