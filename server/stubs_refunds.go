package server

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/gen"
)

// Stubs of issue 23's refunds operations until they are built: each helper replaces its own.

func (h *handlers) ApproveMerchantRefund(ctx context.Context, req gen.ApproveMerchantRefundRequestObject) (gen.ApproveMerchantRefundResponseObject, error) {
	return nil, errors.New("ApproveMerchantRefund: not built yet")
}

func (h *handlers) CancelMerchantRefund(ctx context.Context, req gen.CancelMerchantRefundRequestObject) (gen.CancelMerchantRefundResponseObject, error) {
	return nil, errors.New("CancelMerchantRefund: not built yet")
}

func (h *handlers) CancelRefund(ctx context.Context, req gen.CancelRefundRequestObject) (gen.CancelRefundResponseObject, error) {
	return nil, errors.New("CancelRefund: not built yet")
}

func (h *handlers) ClaimOverpaymentRefund(ctx context.Context, req gen.ClaimOverpaymentRefundRequestObject) (gen.ClaimOverpaymentRefundResponseObject, error) {
	return nil, errors.New("ClaimOverpaymentRefund: not built yet")
}

func (h *handlers) ClaimRefund(ctx context.Context, req gen.ClaimRefundRequestObject) (gen.ClaimRefundResponseObject, error) {
	return nil, errors.New("ClaimRefund: not built yet")
}

func (h *handlers) CreateMerchantRefund(ctx context.Context, req gen.CreateMerchantRefundRequestObject) (gen.CreateMerchantRefundResponseObject, error) {
	return nil, errors.New("CreateMerchantRefund: not built yet")
}

func (h *handlers) CreateRefund(ctx context.Context, req gen.CreateRefundRequestObject) (gen.CreateRefundResponseObject, error) {
	return nil, errors.New("CreateRefund: not built yet")
}

func (h *handlers) GetMerchantRefund(ctx context.Context, req gen.GetMerchantRefundRequestObject) (gen.GetMerchantRefundResponseObject, error) {
	return nil, errors.New("GetMerchantRefund: not built yet")
}

func (h *handlers) GetRefund(ctx context.Context, req gen.GetRefundRequestObject) (gen.GetRefundResponseObject, error) {
	return nil, errors.New("GetRefund: not built yet")
}

func (h *handlers) GetRefundClaim(ctx context.Context, req gen.GetRefundClaimRequestObject) (gen.GetRefundClaimResponseObject, error) {
	return nil, errors.New("GetRefundClaim: not built yet")
}

func (h *handlers) ListMerchantRefunds(ctx context.Context, req gen.ListMerchantRefundsRequestObject) (gen.ListMerchantRefundsResponseObject, error) {
	return nil, errors.New("ListMerchantRefunds: not built yet")
}

func (h *handlers) ListRefunds(ctx context.Context, req gen.ListRefundsRequestObject) (gen.ListRefundsResponseObject, error) {
	return nil, errors.New("ListRefunds: not built yet")
}

func (h *handlers) RejectMerchantRefund(ctx context.Context, req gen.RejectMerchantRefundRequestObject) (gen.RejectMerchantRefundResponseObject, error) {
	return nil, errors.New("RejectMerchantRefund: not built yet")
}
