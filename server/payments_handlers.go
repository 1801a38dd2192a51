package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/settlement"
)

func (h *handlers) CreatePayment(ctx context.Context, req gen.CreatePaymentRequestObject) (gen.CreatePaymentResponseObject, error) {
	b := req.Body
	// The response is rendered inside the create transaction, so the bytes sent now are the
	// bytes committed with the Idempotency-Key (when there is one) and replayed later.
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(c payments.Created) (idempotency.Outcome, error) {
		return outcome(h.render.CreatedPayment(c.Payment, c.Secret, c.PaymentURL))
	})
	created, err := h.payments.Create(ctx, merchantFrom(ctx), payments.CreateInput{Type: domain.PaymentType(strOrEmpty(b.Type)),
		Amount: b.Amount, Currency: string(b.Currency), OrderID: b.OrderId, CustomerRefID: b.CustomerRefId,
		RedirectURL: b.RedirectUrl, CustomMetadata: b.CustomMetadata}, step)
	if err != nil {
		return nil, err
	}
	h.metrics.PaymentCreated(string(created.Payment.Type))
	return settlement.Raw(step.Outcome()), nil
}

// outcome encodes a rendered response into the bytes an idempotency key stores.
func outcome(r settlement.Response) (idempotency.Outcome, error) {
	body, err := r.Encode()
	return idempotency.Outcome{Status: r.Status, Body: body}, err
}

func (h *handlers) ListPayments(ctx context.Context, req gen.ListPaymentsRequestObject) (gen.ListPaymentsResponseObject, error) {
	return h.listPayments(ctx, req.Params)
}

// listPayments answers a list of the merchant in the context (a secret key's, or the one a
// dashboard token acts for, in its mode).
func (h *handlers) listPayments(ctx context.Context, p gen.ListPaymentsParams) (settlement.Response, error) {
	limit, offset := pageParams(p.Limit, p.Offset)
	search := ""
	if p.Search != nil {
		search = strings.TrimSpace(*p.Search)
	}
	list, page, err := h.payments.List(ctx, merchantFrom(ctx), payments.ListInput{Type: domain.PaymentType(strOrEmpty(p.Type)),
		Status: domain.PaymentStatus(strOrEmpty(p.Status)), Search: search, SortBy: strOrEmpty(p.SortBy),
		SortOrder: strOrEmpty(p.SortOrder), Limit: limit, Offset: offset})
	if err != nil {
		return settlement.Response{}, err
	}
	return h.render.PaymentList(list, page), nil
}

// GetPayment answers from the cache of encoded payments while the payment's version (one small
// query) says nothing changed, and loads, encodes and remembers it otherwise.
func (h *handlers) GetPayment(ctx context.Context, req gen.GetPaymentRequestObject) (gen.GetPaymentResponseObject, error) {
	r, err := h.getPayment(ctx, req.PaymentId)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// getPayment reads a payment of the merchant in the context (see listPayments).
func (h *handlers) getPayment(ctx context.Context, paymentID string) (settlement.Raw, error) {
	m := merchantFrom(ctx)
	id, version, err := h.payments.Version(ctx, m, paymentID)
	if err != nil {
		return settlement.Raw{}, err
	}
	now := time.Now()
	if body, ok := h.paymentCache.get(id, version, m, now); ok {
		return settlement.Raw{Status: http.StatusOK, Body: body}, nil
	}
	p, err := h.payments.Get(ctx, m, paymentID)
	if err != nil {
		return settlement.Raw{}, err
	}
	resp := h.render.Payment(p)
	body, err := resp.Encode()
	if err != nil {
		return settlement.Raw{}, err
	}
	h.paymentCache.put(p, m, now, body)
	return settlement.Raw{Status: resp.Status, Body: body}, nil
}
