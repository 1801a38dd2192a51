package server

import (
	"context"
	"net/http"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/settlement"
)

// Refunds, by secret key and from the dashboard: the same code for the merchant the credential
// acts for (merchantFrom: the key's, or the one bearer() authorised, in its mode).

// refundRender is the renderer of ctx's refunds. A claim link lets whoever holds it direct the
// refund's money (a typed address still waits for an approval), so a dashboard role that may not
// move money (viewer, developer) reads claimUrl as null; a secret key and an admin see it.
func (h *handlers) refundRender(ctx context.Context) settlement.Renderer {
	r := h.render
	if role := actingRole(ctx); role != "" && !role.Permits(domain.PermWithdrawalsWrite) {
		r.ClaimURL = nil
	}
	return r
}

func (h *handlers) CreateRefund(ctx context.Context, req gen.CreateRefundRequestObject) (gen.CreateRefundResponseObject, error) {
	return h.createRefund(ctx, req.PaymentId, *req.Body)
}

func (h *handlers) ListRefunds(ctx context.Context, req gen.ListRefundsRequestObject) (gen.ListRefundsResponseObject, error) {
	p := req.Params
	return h.listRefunds(ctx, refunds.ListInput{PaymentID: p.PaymentId, Status: domain.RefundStatus(strOrEmpty(p.Status))}, p.Limit, p.Offset)
}

func (h *handlers) GetRefund(ctx context.Context, req gen.GetRefundRequestObject) (gen.GetRefundResponseObject, error) {
	return h.getRefund(ctx, req.RefundId)
}

func (h *handlers) CancelRefund(ctx context.Context, req gen.CancelRefundRequestObject) (gen.CancelRefundResponseObject, error) {
	return h.cancelRefund(ctx, req.RefundId)
}

func (h *handlers) CreateMerchantRefund(ctx context.Context, req gen.CreateMerchantRefundRequestObject) (gen.CreateMerchantRefundResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	return h.createRefund(ctx, req.PaymentId, *req.Body)
}

func (h *handlers) ListMerchantRefunds(ctx context.Context, req gen.ListMerchantRefundsRequestObject) (gen.ListMerchantRefundsResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	p := req.Params
	return h.listRefunds(ctx, refunds.ListInput{PaymentID: p.PaymentId, Status: domain.RefundStatus(strOrEmpty(p.Status)),
		AwaitingApproval: p.AwaitingApproval}, p.Limit, p.Offset)
}

func (h *handlers) GetMerchantRefund(ctx context.Context, req gen.GetMerchantRefundRequestObject) (gen.GetMerchantRefundResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	return h.getRefund(ctx, req.RefundId)
}

func (h *handlers) CancelMerchantRefund(ctx context.Context, req gen.CancelMerchantRefundRequestObject) (gen.CancelMerchantRefundResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	return h.cancelRefund(ctx, req.RefundId)
}

// ApproveMerchantRefund gives a refund's approval; the person acting is the approver (the
// service refuses its creator, and a service token).
func (h *handlers) ApproveMerchantRefund(ctx context.Context, req gen.ApproveMerchantRefundRequestObject) (gen.ApproveMerchantRefundResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.refunds.Approve(ctx, m, req.RefundId)
	if err != nil {
		return nil, err
	}
	return h.refundRender(ctx).Refund(r, http.StatusOK), nil
}

// RejectMerchantRefund cancels a refund waiting for its approval.
func (h *handlers) RejectMerchantRefund(ctx context.Context, req gen.RejectMerchantRefundRequestObject) (gen.RejectMerchantRefundResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.refunds.Reject(ctx, m, req.RefundId)
	if err != nil {
		return nil, err
	}
	return h.refundRender(ctx).Refund(r, http.StatusOK), nil
}

// createRefund creates a refund, rendered inside its transaction so the bytes sent are the
// bytes an Idempotency-Key keeps.
func (h *handlers) createRefund(ctx context.Context, paymentID string, b gen.CreateRefundRequest) (settlement.Raw, error) {
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(r domain.Refund) (idempotency.Outcome, error) {
		return outcome(h.refundRender(ctx).Refund(r, http.StatusCreated))
	})
	in := refunds.CreateInput{AmountInCents: b.AmountInCents, AmountAsset: b.AmountAsset, RecipientAddress: b.RecipientAddress,
		Reason: b.Reason, SubtractNetworkFee: b.SubtractNetworkFee != nil && *b.SubtractNetworkFee}
	if _, err := h.refunds.Create(ctx, merchantFrom(ctx), paymentID, in, step); err != nil {
		return settlement.Raw{}, err
	}
	return settlement.Raw(step.Outcome()), nil
}

func (h *handlers) listRefunds(ctx context.Context, in refunds.ListInput, limitP *gen.Limit, offsetP *gen.Offset) (settlement.Response, error) {
	in.Limit, in.Offset = pageParams(limitP, offsetP)
	list, page, err := h.refunds.List(ctx, merchantFrom(ctx), in)
	if err != nil {
		return settlement.Response{}, err
	}
	return h.refundRender(ctx).RefundList(list, page), nil
}

func (h *handlers) getRefund(ctx context.Context, id string) (settlement.Response, error) {
	r, err := h.refunds.Get(ctx, merchantFrom(ctx), id)
	if err != nil {
		return settlement.Response{}, err
	}
	return h.refundRender(ctx).Refund(r, http.StatusOK), nil
}

func (h *handlers) cancelRefund(ctx context.Context, id string) (settlement.Raw, error) {
	step := idempotency.NewStep(idempotency.GuardFrom(ctx), func(r domain.Refund) (idempotency.Outcome, error) {
		return outcome(h.refundRender(ctx).Refund(r, http.StatusOK))
	})
	if _, err := h.refunds.Cancel(ctx, merchantFrom(ctx), id, step); err != nil {
		return settlement.Raw{}, err
	}
	return settlement.Raw(step.Outcome()), nil
}
