package server

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/gen"
)

// The checkout's transaction report of fuzzStub (issue 24).

func (s fuzzStub) ReportCheckoutTransaction(_ context.Context, req gen.ReportCheckoutTransactionRequestObject) (gen.ReportCheckoutTransactionResponseObject, error) {
	s.call.reached = true
	return gen.ReportCheckoutTransaction202JSONResponse{TxHash: req.Body.TxHash, EvmChainId: 1337, Status: gen.TransactionReportStatusPending,
		Transfers: []gen.ReportedTransfer{}}, nil
}

func (s fuzzStub) SubmitCheckoutGaslessPayment(_ context.Context, req gen.SubmitCheckoutGaslessPaymentRequestObject) (gen.SubmitCheckoutGaslessPaymentResponseObject, error) {
	s.call.reached = true
	return gen.SubmitCheckoutGaslessPayment202JSONResponse{Id: req.Body.QuoteId, QuoteId: req.Body.QuoteId, Status: gen.GaslessPaymentStatusAccepted,
		From: req.Body.From, ValueAsset: req.Body.Value, FeeAsset: "0", FeePaidBy: gen.Merchant, ValidBefore: req.Body.ValidBefore,
		CreatedAt: time.Unix(0, 0).UTC()}, nil
}
