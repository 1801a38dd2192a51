package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/gen"
)

// fuzzStub's answers for the dashboard's data operations (issue 22).

func (s fuzzStub) ListMerchantPayments(context.Context, gen.ListMerchantPaymentsRequestObject) (gen.ListMerchantPaymentsResponseObject, error) {
	s.call.reached = true
	return stubResponse(http.StatusOK), nil
}

func (s fuzzStub) GetMerchantPayment(context.Context, gen.GetMerchantPaymentRequestObject) (gen.GetMerchantPaymentResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantPayment200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantPaymentEvents(context.Context, gen.ListMerchantPaymentEventsRequestObject) (gen.ListMerchantPaymentEventsResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantPaymentEvents200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantPaymentTransfers(context.Context, gen.ListMerchantPaymentTransfersRequestObject) (gen.ListMerchantPaymentTransfersResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantPaymentTransfers200JSONResponse{}, nil
}

func (s fuzzStub) ListMerchantPaymentDeliveries(context.Context, gen.ListMerchantPaymentDeliveriesRequestObject) (gen.ListMerchantPaymentDeliveriesResponseObject, error) {
	s.call.reached = true
	return gen.ListMerchantPaymentDeliveries200JSONResponse{}, nil
}

func (s fuzzStub) GetMerchantOverview(context.Context, gen.GetMerchantOverviewRequestObject) (gen.GetMerchantOverviewResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantOverview200JSONResponse{}, nil
}

func (s fuzzStub) GetMerchantProfile(context.Context, gen.GetMerchantProfileRequestObject) (gen.GetMerchantProfileResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantProfile200JSONResponse{}, nil
}

func (s fuzzStub) UpdateMerchantProfile(context.Context, gen.UpdateMerchantProfileRequestObject) (gen.UpdateMerchantProfileResponseObject, error) {
	s.call.reached = true
	return gen.UpdateMerchantProfile200JSONResponse{}, nil
}

func (s fuzzStub) ExportMerchantPayments(context.Context, gen.ExportMerchantPaymentsRequestObject) (gen.ExportMerchantPaymentsResponseObject, error) {
	s.call.reached = true
	return gen.ExportMerchantPayments200TextcsvResponse{Body: strings.NewReader("")}, nil
}

func (s fuzzStub) ExportMerchantWithdrawals(context.Context, gen.ExportMerchantWithdrawalsRequestObject) (gen.ExportMerchantWithdrawalsResponseObject, error) {
	s.call.reached = true
	return gen.ExportMerchantWithdrawals200TextcsvResponse{Body: strings.NewReader("")}, nil
}

func (s fuzzStub) TestMerchantWebhookEndpoint(context.Context, gen.TestMerchantWebhookEndpointRequestObject) (gen.TestMerchantWebhookEndpointResponseObject, error) {
	s.call.reached = true
	return gen.TestMerchantWebhookEndpoint202JSONResponse{}, nil
}

func (s fuzzStub) EstimateMerchantWithdrawal(context.Context, gen.EstimateMerchantWithdrawalRequestObject) (gen.EstimateMerchantWithdrawalResponseObject, error) {
	s.call.reached = true
	return gen.EstimateMerchantWithdrawal200JSONResponse{}, nil
}
