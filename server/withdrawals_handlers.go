package server

import (
	"context"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/withdrawals"
)

func (h *handlers) CreateWithdrawal(ctx context.Context, req gen.CreateWithdrawalRequestObject) (gen.CreateWithdrawalResponseObject, error) {
	b := req.Body
	chainID, err := chains.ParseCAIP2(string(b.ChainId))
	if err != nil {
		return nil, domain.Invalid("parameter_invalid", "chainId", "%v", err)
	}
	w, err := h.withdrawals.Create(ctx, merchantFrom(ctx), withdrawals.CreateInput{AmountInCents: b.AmountInCents,
		ChainID: chainID, RecipientAddress: b.RecipientAddress, OrderID: b.OrderId, CustomMetadata: b.CustomMetadata,
		Currency: strOrEmpty(b.Currency)})
	if err != nil {
		return nil, err
	}
	return gen.CreateWithdrawal201JSONResponse{Body: settlement.Withdrawal(w)}, nil
}

func (h *handlers) ListWithdrawals(ctx context.Context, req gen.ListWithdrawalsRequestObject) (gen.ListWithdrawalsResponseObject, error) {
	limit, offset := pageParams(req.Params.Limit, req.Params.Offset)
	list, page, err := h.withdrawals.List(ctx, merchantFrom(ctx), strOrEmpty(req.Params.Status), limit, offset)
	if err != nil {
		return nil, err
	}
	data := make([]gen.Withdrawal, len(list))
	for i, w := range list {
		data[i] = settlement.Withdrawal(w)
	}
	return gen.ListWithdrawals200JSONResponse{Data: data, Pagination: settlement.Pagination(page, len(data))}, nil
}

func (h *handlers) GetWithdrawal(ctx context.Context, req gen.GetWithdrawalRequestObject) (gen.GetWithdrawalResponseObject, error) {
	w, err := h.withdrawals.Get(ctx, merchantFrom(ctx), req.WithdrawalId)
	if err != nil {
		return nil, err
	}
	return gen.GetWithdrawal200JSONResponse(settlement.Withdrawal(w)), nil
}

func (h *handlers) ListChains(ctx context.Context, req gen.ListChainsRequestObject) (gen.ListChainsResponseObject, error) {
	limit, offset := pageParams(req.Params.Limit, req.Params.Offset)
	list, total, err := chains.List(ctx, h.store, h.networks, limit, offset)
	if err != nil {
		return nil, err
	}
	data := make([]gen.Chain, len(list))
	for i, c := range list {
		data[i] = settlement.Chain(c)
	}
	return gen.ListChains200JSONResponse{Data: data, Pagination: settlement.Pagination(domain.Page{Limit: limit, Offset: offset, Total: total}, len(data))}, nil
}
