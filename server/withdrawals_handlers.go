package server

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/withdrawals"
)

func (h *handlers) CreateWithdrawal(ctx context.Context, req gen.CreateWithdrawalRequestObject) (gen.CreateWithdrawalResponseObject, error) {
	return h.createWithdrawal(ctx, *req.Body)
}

func (h *handlers) ListWithdrawals(ctx context.Context, req gen.ListWithdrawalsRequestObject) (gen.ListWithdrawalsResponseObject, error) {
	return h.listWithdrawals(ctx, req.Params.Status, false, req.Params.Limit, req.Params.Offset)
}

func (h *handlers) GetWithdrawal(ctx context.Context, req gen.GetWithdrawalRequestObject) (gen.GetWithdrawalResponseObject, error) {
	return h.getWithdrawal(ctx, req.WithdrawalId)
}

// The dashboard's withdrawal operations: the same code for the merchant bearer() authorised.

func (h *handlers) CreateMerchantWithdrawal(ctx context.Context, req gen.CreateMerchantWithdrawalRequestObject) (gen.CreateMerchantWithdrawalResponseObject, error) {
	return h.createWithdrawal(ctx, *req.Body)
}

func (h *handlers) ListMerchantWithdrawals(ctx context.Context, req gen.ListMerchantWithdrawalsRequestObject) (gen.ListMerchantWithdrawalsResponseObject, error) {
	awaiting := req.Params.AwaitingApproval != nil && *req.Params.AwaitingApproval
	return h.listWithdrawals(ctx, req.Params.Status, awaiting, req.Params.Limit, req.Params.Offset)
}

func (h *handlers) GetMerchantWithdrawal(ctx context.Context, req gen.GetMerchantWithdrawalRequestObject) (gen.GetMerchantWithdrawalResponseObject, error) {
	return h.getWithdrawal(ctx, req.WithdrawalId)
}

// CancelMerchantWithdrawal cancels one of the merchant's pending withdrawals (sealed with the
// Idempotency-Key when one was sent).
func (h *handlers) CancelMerchantWithdrawal(ctx context.Context, req gen.CancelMerchantWithdrawalRequestObject) (gen.CancelMerchantWithdrawalResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	wid, err := uuid.Parse(req.WithdrawalId)
	if err != nil {
		return nil, domain.ErrWithdrawalNotFound
	}
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(w domain.Withdrawal) (idempotency.Outcome, error) {
		return outcome(h.render.Withdrawal(w, http.StatusOK))
	})
	if _, err := h.withdrawals.Cancel(ctx, m.ID, m.Mode, wid, step); err != nil {
		return nil, err
	}
	return settlement.Raw(step.Outcome()), nil
}

func (h *handlers) createWithdrawal(ctx context.Context, b gen.CreateWithdrawalRequest) (settlement.Raw, error) {
	chainID, err := chains.ParseCAIP2(string(b.ChainId))
	if err != nil {
		return settlement.Raw{}, domain.Invalid(domain.CodeParameterInvalid, "chainId", "%v", err)
	}
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(w domain.Withdrawal) (idempotency.Outcome, error) {
		return outcome(h.render.Withdrawal(w, http.StatusCreated))
	})
	_, err = h.withdrawals.Create(ctx, merchantFrom(ctx), withdrawals.CreateInput{AmountInCents: b.AmountInCents,
		ChainID: chainID, RecipientAddress: b.RecipientAddress, OrderID: b.OrderId, CustomMetadata: b.CustomMetadata,
		Currency: strOrEmpty(b.Currency)}, step)
	if err != nil {
		return settlement.Raw{}, err
	}
	h.metrics.WithdrawalCreated()
	return settlement.Raw(step.Outcome()), nil
}

func (h *handlers) listWithdrawals(ctx context.Context, status *gen.WithdrawalStatus, awaitingApproval bool, limitP *gen.Limit, offsetP *gen.Offset) (settlement.Response, error) {
	limit, offset := pageParams(limitP, offsetP)
	list, page, err := h.withdrawals.List(ctx, merchantFrom(ctx), domain.WithdrawalStatus(strOrEmpty(status)), awaitingApproval, limit, offset)
	if err != nil {
		return settlement.Response{}, err
	}
	return h.render.WithdrawalList(list, page), nil
}

func (h *handlers) getWithdrawal(ctx context.Context, id string) (settlement.Response, error) {
	w, err := h.withdrawals.Get(ctx, merchantFrom(ctx), id)
	if err != nil {
		return settlement.Response{}, err
	}
	return h.render.Withdrawal(w, http.StatusOK), nil
}

func (h *handlers) ListChains(ctx context.Context, req gen.ListChainsRequestObject) (gen.ListChainsResponseObject, error) {
	limit, offset := pageParams(req.Params.Limit, req.Params.Offset)
	list, total := chains.List(h.catalog, limit, offset)
	if h.chainHealth != nil {
		list = overlayHealth(list, h.chainHealth())
	}
	return h.render.ChainList(list, domain.Page{Limit: limit, Offset: offset, Total: total}), nil
}
