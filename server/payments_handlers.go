package server

import (
	"context"
	"strings"

	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/payments"
)

func (h *handlers) CreatePayment(ctx context.Context, req gen.CreatePaymentRequestObject) (gen.CreatePaymentResponseObject, error) {
	b := req.Body
	created, err := h.payments.Create(ctx, merchantFrom(ctx), payments.CreateInput{Type: strOrEmpty(b.Type), Amount: b.Amount,
		Currency: string(b.Currency), OrderID: b.OrderId, CustomerRefID: b.CustomerRefId, RedirectURL: b.RedirectUrl,
		CustomMetadata: b.CustomMetadata})
	if err != nil {
		return nil, err
	}
	return h.render.CreatedPayment(created.Payment, created.Secret, created.PaymentURL), nil
}

func (h *handlers) ListPayments(ctx context.Context, req gen.ListPaymentsRequestObject) (gen.ListPaymentsResponseObject, error) {
	p := req.Params
	limit, offset := pageParams(p.Limit, p.Offset)
	search := ""
	if p.Search != nil {
		search = strings.TrimSpace(*p.Search)
	}
	list, page, err := h.payments.List(ctx, merchantFrom(ctx), payments.ListInput{Type: strOrEmpty(p.Type),
		Status: strOrEmpty(p.Status), Search: search, SortBy: strOrEmpty(p.SortBy), SortOrder: strOrEmpty(p.SortOrder),
		Limit: limit, Offset: offset})
	if err != nil {
		return nil, err
	}
	return h.render.PaymentList(list, page), nil
}

func (h *handlers) GetPayment(ctx context.Context, req gen.GetPaymentRequestObject) (gen.GetPaymentResponseObject, error) {
	p, err := h.payments.Get(ctx, merchantFrom(ctx), req.PaymentId)
	if err != nil {
		return nil, err
	}
	return h.render.Payment(p), nil
}
