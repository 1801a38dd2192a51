package server

import (
	"context"
	"net/http"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/withdrawals"
)

func (h *handlers) CreateWithdrawal(ctx context.Context, req gen.CreateWithdrawalRequestObject) (gen.CreateWithdrawalResponseObject, error) {
	b := req.Body
	chainID, err := chains.ParseCAIP2(string(b.ChainId))
	if err != nil {
		return nil, domain.Invalid(domain.CodeParameterInvalid, "chainId", "%v", err)
	}
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(w domain.Withdrawal) (idempotency.Outcome, error) {
		return outcome(h.render.Withdrawal(w, http.StatusCreated))
	})
	_, err = h.withdrawals.Create(ctx, merchantFrom(ctx), withdrawals.CreateInput{AmountInCents: b.AmountInCents,
		ChainID: chainID, RecipientAddress: b.RecipientAddress, OrderID: b.OrderId, CustomMetadata: b.CustomMetadata,
		Currency: strOrEmpty(b.Currency)}, step)
	if err != nil {
		return nil, err
	}
	h.metrics.WithdrawalCreated()
	return settlement.Raw(step.Outcome()), nil
}

func (h *handlers) ListWithdrawals(ctx context.Context, req gen.ListWithdrawalsRequestObject) (gen.ListWithdrawalsResponseObject, error) {
	limit, offset := pageParams(req.Params.Limit, req.Params.Offset)
	list, page, err := h.withdrawals.List(ctx, merchantFrom(ctx), domain.WithdrawalStatus(strOrEmpty(req.Params.Status)), limit, offset)
	if err != nil {
		return nil, err
	}
	return h.render.WithdrawalList(list, page), nil
}

func (h *handlers) GetWithdrawal(ctx context.Context, req gen.GetWithdrawalRequestObject) (gen.GetWithdrawalResponseObject, error) {
	w, err := h.withdrawals.Get(ctx, merchantFrom(ctx), req.WithdrawalId)
	if err != nil {
		return nil, err
	}
	return h.render.Withdrawal(w, http.StatusOK), nil
}

func (h *handlers) ListChains(ctx context.Context, req gen.ListChainsRequestObject) (gen.ListChainsResponseObject, error) {
	limit, offset := pageParams(req.Params.Limit, req.Params.Offset)
	list, total := chains.List(h.catalog, limit, offset)
	return h.render.ChainList(list, domain.Page{Limit: limit, Offset: offset, Total: total}), nil
}
