package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/dashauth"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/store"
)

// The merchant dashboard's API: bearer JWTs (BearerAuth), a typed principal in the context,
// every operation authorised for its path's merchant and its scope.

// TokenVerifier verifies dashboard access tokens (dashauth.Issuer).
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (dashauth.Principal, error)
}

type principalKey struct{}

// The generated models' inline item types, named once here.
type (
	pendingPayout = struct {
		AmountInCents int64  `json:"amountInCents"`
		ChainId       string `json:"chainId"`
		TokenSymbol   string `json:"tokenSymbol"`
	}
	acceptedAsset = struct {
		ChainId string `json:"chainId"`
		Symbol  string `json:"symbol"`
		TokenId string `json:"tokenId"`
	}
)

// bearer authenticates a BearerAuth operation and authorises it: the token must be valid (else
// 401 invalid_token), act for the path's merchant — a person by a membership (dir), a service
// by naming it — with a role holding the operation's permission (else 403 forbidden), and a
// person's second factor recent where the operation asks (else 403 step_up_required; see
// authorize). The principal, its actor and the merchant go in the context, so the operations
// share the secret-key API's code — and its Idempotency-Key handling, keyed by merchant —
// unchanged.
func bearer(c echo.Context, v TokenVerifier, dir PeopleDirectory, svc *merchants.Service, need opAuth, merchantParam string) error {
	if v == nil {
		return domain.ErrInvalidToken
	}
	req := c.Request()
	scheme, raw, ok := strings.Cut(strings.TrimSpace(req.Header.Get(echo.HeaderAuthorization)), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return domain.ErrInvalidToken
	}
	p, err := v.Verify(req.Context(), strings.TrimSpace(raw))
	if errors.Is(err, dashauth.ErrInvalidToken) {
		return domain.ErrInvalidToken
	}
	if err != nil {
		return err
	}
	id, err := uuid.Parse(merchantParam)
	if err != nil {
		return domain.ErrForbidden
	}
	if p, err = authorize(req.Context(), p, dir, id, need, time.Now()); err != nil {
		return err
	}
	m, err := svc.Get(req.Context(), id)
	if errors.Is(err, domain.ErrMerchantNotFound) {
		return domain.ErrForbidden // a token naming a merchant that does not exist acts for nobody
	}
	if err != nil {
		return err
	}
	m.Mode = p.Mode.Norm() // the dashboard acts in its token's one mode
	ctx := context.WithValue(context.WithValue(req.Context(), principalKey{}, p), merchantKey{}, m)
	c.SetRequest(req.WithContext(ctx))
	withActor(c, principalActor(p))
	return nil
}

// actingMerchant is the merchant bearer() authorised, failing closed: a dashboard handler reached
// without it (a routing mistake) acts for nobody — never for "any merchant", which is what the
// services take a Nil merchant to mean (the operator's commands).
func actingMerchant(ctx context.Context) (uuid.UUID, error) {
	m, err := actingAs(ctx)
	return m.ID, err
}

// actingAs is actingMerchant with the mode the token acts in (in m.Mode).
func actingAs(ctx context.Context) (domain.Merchant, error) {
	if _, ok := principalFrom(ctx); !ok {
		return domain.Merchant{}, domain.ErrInvalidToken
	}
	m := merchantFrom(ctx)
	if m.ID == uuid.Nil {
		return domain.Merchant{}, domain.ErrInvalidToken
	}
	return m, nil
}

// GetMerchantBalance shows the token's mode's balance at the top and both modes' in `modes`.
func (h *handlers) GetMerchantBalance(ctx context.Context, req gen.GetMerchantBalanceRequestObject) (gen.GetMerchantBalanceResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	out := gen.MerchantBalance{MerchantId: m.ID, Mode: gen.Mode(m.Mode.Norm()), Currency: gen.Currency("USD")}
	for _, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		avail, pending, err := h.merchants.Balance(ctx, m.ID, mode)
		if err != nil {
			return nil, err
		}
		b := gen.ModeBalance{AvailableInCents: avail}
		for _, p := range pending {
			b.PendingPayoutsInCents += p.AmountCents
		}
		if mode == domain.ModeLive {
			out.Modes.Live = b
		} else {
			out.Modes.Test = b
		}
		if mode != m.Mode.Norm() {
			continue
		}
		out.AvailableInCents, out.PendingPayoutsInCents = b.AvailableInCents, b.PendingPayoutsInCents
		out.PendingPayouts = []pendingPayout{}
		for _, p := range pending {
			out.PendingPayouts = append(out.PendingPayouts, pendingPayout{p.AmountCents, chains.CAIP2(p.ChainID), h.catalog.Tokens[p.TokenID].Symbol})
		}
	}
	return gen.GetMerchantBalance200JSONResponse(out), nil
}

// withdrawalConfig renders the merchant's configuration as its mode sees it (the merchant as
// bearer() loaded it).
func (h *handlers) withdrawalConfig(ctx context.Context, m domain.Merchant) (gen.MerchantWithdrawalConfig, error) {
	id := m.ID
	cfg, err := h.merchants.WithdrawalConfigIn(ctx, id, m.Mode)
	if err != nil {
		return gen.MerchantWithdrawalConfig{}, err
	}
	out := gen.MerchantWithdrawalConfig{MerchantId: id, WithdrawalsEnabled: m.WithdrawalsEnabled, ChainIds: []string{},
		TokenSymbol: cfg.TokenSymbol, MinAmountInCents: cfg.MinAmountCents, MaxAmountInCents: cfg.MaxAmountCents,
		BackendWalletAddress: cfg.BackendWalletAddress, UpdatedAt: cfg.UpdatedAt}
	for _, c := range cfg.ChainIDs {
		out.ChainIds = append(out.ChainIds, chains.CAIP2(c))
	}
	return out, nil
}

func (h *handlers) GetMerchantWithdrawalConfig(ctx context.Context, req gen.GetMerchantWithdrawalConfigRequestObject) (gen.GetMerchantWithdrawalConfigResponseObject, error) {
	if _, err := actingMerchant(ctx); err != nil {
		return nil, err
	}
	out, err := h.withdrawalConfig(ctx, merchantFrom(ctx))
	if err != nil {
		return nil, err
	}
	return gen.GetMerchantWithdrawalConfig200JSONResponse(out), nil
}

func (h *handlers) UpdateMerchantWithdrawalConfig(ctx context.Context, req gen.UpdateMerchantWithdrawalConfigRequestObject) (gen.UpdateMerchantWithdrawalConfigResponseObject, error) {
	acting, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	id := acting.ID
	cfg, err := h.merchants.WithdrawalConfigIn(ctx, id, acting.Mode)
	if errors.Is(err, store.ErrNotFound) {
		return nil, domain.ErrMerchantNotFound
	}
	if err != nil {
		return nil, err
	}
	in := req.Body
	if !acting.Mode.Live() && (in.TokenSymbol != nil || in.MinAmountInCents != nil || in.MaxAmountInCents != nil || in.WithdrawalsEnabled != nil) {
		// The token, the limits and the enabled flag govern live payouts too: test access
		// changes only the test chains.
		return nil, fmt.Errorf("%w: tokenSymbol, the limits and withdrawalsEnabled are shared by both modes", domain.ErrLiveOnly)
	}
	if in.ChainIds != nil {
		cfg.ChainIDs = nil
		for _, s := range *in.ChainIds {
			c, err := chains.ParseCAIP2(s)
			if err != nil {
				return nil, domain.Invalid(domain.CodeParameterInvalid, "chainIds", "%q is not a CAIP-2 EVM chain id", s)
			}
			cfg.ChainIDs = append(cfg.ChainIDs, c)
		}
	}
	if in.TokenSymbol != nil {
		cfg.TokenSymbol = *in.TokenSymbol
	}
	if in.MinAmountInCents != nil {
		cfg.MinAmountCents = *in.MinAmountInCents
	}
	if in.MaxAmountInCents != nil {
		cfg.MaxAmountCents = *in.MaxAmountInCents
	}
	if in.ChainIds != nil || in.TokenSymbol != nil || in.MinAmountInCents != nil || in.MaxAmountInCents != nil {
		if err := h.merchants.SetWithdrawalConfigIn(ctx, cfg, acting.Mode); err != nil {
			return nil, err
		}
	}
	m := merchantFrom(ctx)
	if in.WithdrawalsEnabled != nil {
		if err := h.merchants.SetWithdrawalsEnabled(ctx, id, *in.WithdrawalsEnabled); err != nil {
			return nil, err
		}
		m.WithdrawalsEnabled = *in.WithdrawalsEnabled
	}
	out, err := h.withdrawalConfig(ctx, m)
	if err != nil {
		return nil, err
	}
	return gen.UpdateMerchantWithdrawalConfig200JSONResponse(out), nil
}

func acceptedAssetsOut(a merchants.AcceptedAssets) gen.AcceptedAssets {
	out := gen.AcceptedAssets{Default: a.Default, Unserved: []string{}}
	out.Assets = []acceptedAsset{}
	for _, t := range a.Tokens {
		out.Assets = append(out.Assets, acceptedAsset{chains.CAIP2(t.Chain.ID), t.Symbol, t.ID})
	}
	out.Unserved = append(out.Unserved, a.Unserved...)
	return out
}

func (h *handlers) GetMerchantAcceptedAssets(ctx context.Context, req gen.GetMerchantAcceptedAssetsRequestObject) (gen.GetMerchantAcceptedAssetsResponseObject, error) {
	id, err := actingMerchant(ctx)
	if err != nil {
		return nil, err
	}
	a, err := h.merchants.AcceptedAssets(ctx, id)
	if err != nil {
		return nil, err
	}
	return gen.GetMerchantAcceptedAssets200JSONResponse(acceptedAssetsOut(a)), nil
}

func (h *handlers) SetMerchantAcceptedAssets(ctx context.Context, req gen.SetMerchantAcceptedAssetsRequestObject) (gen.SetMerchantAcceptedAssetsResponseObject, error) {
	acting, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	id := acting.ID
	// A token changes its own mode's part of the selection; the other mode's stays.
	switch in := req.Body; {
	case in.Default != nil && in.Assets == nil:
		err = h.merchants.ResetAcceptedAssetsIn(ctx, id, acting.Mode)
	case in.Assets != nil && in.Default == nil:
		ids, perr := h.merchants.ParseAssets(strings.Join(*in.Assets, ","))
		if perr != nil {
			return nil, domain.Invalid(domain.CodeParameterInvalid, "assets", "%s", perr.Error())
		}
		err = h.merchants.SetAcceptedAssetsIn(ctx, id, acting.Mode, ids)
	default:
		return nil, domain.Invalid(domain.CodeParameterInvalid, "assets", "send either assets or default: true")
	}
	if err != nil {
		return nil, err
	}
	a, err := h.merchants.AcceptedAssets(ctx, id)
	if err != nil {
		return nil, err
	}
	return gen.SetMerchantAcceptedAssets200JSONResponse(acceptedAssetsOut(a)), nil
}
