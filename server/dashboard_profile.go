package server

import (
	"context"
	"encoding/json"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/merchants"
)

// The merchant's profile and branding: what the hosted checkout page shows its customers.

func profileOut(m domain.Merchant) gen.MerchantProfile {
	return gen.MerchantProfile{MerchantId: m.ID, DisplayName: m.Shown(), LogoUrl: m.LogoURL, AccentColor: m.AccentColor,
		GaslessFeePaidBy: gen.GaslessFeePayer(m.GaslessFeePaidBy.Or())}
}

func (h *handlers) GetMerchantProfile(ctx context.Context, _ gen.GetMerchantProfileRequestObject) (gen.GetMerchantProfileResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	return gen.GetMerchantProfile200JSONResponse(profileOut(m)), nil
}

// nullableString reads a member that may be absent (nil, false), null (nil, true) or a string.
func nullableString(param string, raw json.RawMessage) (*string, bool, error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if string(raw) == "null" {
		return nil, true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false, domain.Invalid(domain.CodeParameterInvalid, param, "%s must be a string or null", param)
	}
	return &s, false, nil
}

func (h *handlers) UpdateMerchantProfile(ctx context.Context, req gen.UpdateMerchantProfileRequestObject) (gen.UpdateMerchantProfileResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	c := merchants.ProfileChange{DisplayName: req.Body.DisplayName}
	if p := req.Body.GaslessFeePaidBy; p != nil {
		c.GaslessFeePaidBy = domain.GaslessFeePayer(*p)
	}
	if c.LogoURL, c.ClearLogo, err = nullableString("logoUrl", req.Body.LogoUrl); err != nil {
		return nil, err
	}
	if c.AccentColor, c.ClearAccent, err = nullableString("accentColor", req.Body.AccentColor); err != nil {
		return nil, err
	}
	out, err := h.merchants.UpdateProfile(ctx, m.ID, c)
	if err != nil {
		return nil, err
	}
	return gen.UpdateMerchantProfile200JSONResponse(profileOut(out)), nil
}
