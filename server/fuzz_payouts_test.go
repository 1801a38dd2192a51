package server

import (
	"context"

	"github.com/paymentsd/paymentsd/gen"
)

// The refund and payout-policy operations of fuzzStub (issue 23).

func (s fuzzStub) ApproveMerchantRefund(context.Context, gen.ApproveMerchantRefundRequestObject) (gen.ApproveMerchantRefundResponseObject, error) {
	s.call.reached = true
	return gen.ApproveMerchantRefund200JSONResponse{}, nil
}

func (s fuzzStub) CancelMerchantRefund(context.Context, gen.CancelMerchantRefundRequestObject) (gen.CancelMerchantRefundResponseObject, error) {
	s.call.reached = true
	return gen.CancelMerchantRefund200JSONResponse{}, nil
}

func (s fuzzStub) CancelRefund(context.Context, gen.CancelRefundRequestObject) (gen.CancelRefundResponseObject, error) {
	s.call.reached = true
	return gen.CancelRefund200JSONResponse{}, nil
}

func (s fuzzStub) ClaimOverpaymentRefund(context.Context, gen.ClaimOverpaymentRefundRequestObject) (gen.ClaimOverpaymentRefundResponseObject, error) {
	s.call.reached = true
	return gen.ClaimOverpaymentRefund200JSONResponse{}, nil
}

func (s fuzzStub) ClaimRefund(context.Context, gen.ClaimRefundRequestObject) (gen.ClaimRefundResponseObject, error) {
	s.call.reached = true
	return gen.ClaimRefund200JSONResponse{}, nil
}

func (s fuzzStub) CreateMerchantRefund(context.Context, gen.CreateMerchantRefundRequestObject) (gen.CreateMerchantRefundResponseObject, error) {
	s.call.reached = true
	return gen.CreateMerchantRefund201JSONResponse{}, nil
}

func (s fuzzStub) CreateRefund(context.Context, gen.CreateRefundRequestObject) (gen.CreateRefundResponseObject, error) {
	s.call.reached = true
	return gen.CreateRefund201JSONResponse{}, nil
}

func (s fuzzStub) GetMerchantRefund(context.Context, gen.GetMerchantRefundRequestObject) (gen.GetMerchantRefundResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantRefund200JSONResponse{}, nil
}

func (s fuzzStub) GetRefund(context.Context, gen.GetRefundRequestObject) (gen.GetRefundResponseObject, error) {
	s.call.reached = true
	return gen.GetRefund200JSONResponse{}, nil
}

func (s fuzzStub) GetRefundClaim(context.Context, gen.GetRefundClaimRequestObject) (gen.GetRefundClaimResponseObject, error) {
	s.call.reached = true
	return gen.GetRefundClaim200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantRefunds(context.Context, gen.ListMerchantRefundsRequestObject) (gen.ListMerchantRefundsResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantRefunds200JSONResponse{}, nil
}

func (s fuzzStub) ListRefunds(context.Context, gen.ListRefundsRequestObject) (gen.ListRefundsResponseObject, error) {
	s.call.reached = true
	return gen.ListRefunds200JSONResponse{}, nil
}

func (s fuzzStub) RejectMerchantRefund(context.Context, gen.RejectMerchantRefundRequestObject) (gen.RejectMerchantRefundResponseObject, error) {
	s.call.reached = true
	return gen.RejectMerchantRefund200JSONResponse{}, nil
}

func (s fuzzStub) ApproveMerchantWithdrawal(context.Context, gen.ApproveMerchantWithdrawalRequestObject) (gen.ApproveMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return gen.ApproveMerchantWithdrawal200JSONResponse{}, nil
}

func (s fuzzStub) CreateMerchantAddressBookEntry(context.Context, gen.CreateMerchantAddressBookEntryRequestObject) (gen.CreateMerchantAddressBookEntryResponseObject, error) {
	s.call.reached = true
	return gen.CreateMerchantAddressBookEntry201JSONResponse{}, nil
}

func (s fuzzStub) DeleteMerchantAddressBookEntry(context.Context, gen.DeleteMerchantAddressBookEntryRequestObject) (gen.DeleteMerchantAddressBookEntryResponseObject, error) {
	s.call.reached = true
	return gen.DeleteMerchantAddressBookEntry204Response{}, nil
}

func (s fuzzStub) EstimateWithdrawal(context.Context, gen.EstimateWithdrawalRequestObject) (gen.EstimateWithdrawalResponseObject, error) {
	s.call.reached = true
	return gen.EstimateWithdrawal200JSONResponse{}, nil
}

func (s fuzzStub) GetMerchantPayoutSettings(context.Context, gen.GetMerchantPayoutSettingsRequestObject) (gen.GetMerchantPayoutSettingsResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantPayoutSettings200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantAddressBook(context.Context, gen.ListMerchantAddressBookRequestObject) (gen.ListMerchantAddressBookResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantAddressBook200JSONResponse{}, nil
}

func (s fuzzStub) RejectMerchantWithdrawal(context.Context, gen.RejectMerchantWithdrawalRequestObject) (gen.RejectMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return gen.RejectMerchantWithdrawal200JSONResponse{}, nil
}

func (s fuzzStub) UpdateMerchantPayoutSettings(context.Context, gen.UpdateMerchantPayoutSettingsRequestObject) (gen.UpdateMerchantPayoutSettingsResponseObject, error) {
	s.call.reached = true
	return gen.UpdateMerchantPayoutSettings200JSONResponse{}, nil
}
