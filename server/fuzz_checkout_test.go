package server

import (
	"context"

	"github.com/paymentsd/paymentsd/gen"
)

// The checkout's transaction report of fuzzStub (issue 24).

func (s fuzzStub) ReportCheckoutTransaction(_ context.Context, req gen.ReportCheckoutTransactionRequestObject) (gen.ReportCheckoutTransactionResponseObject, error) {
	s.call.reached = true
	return gen.ReportCheckoutTransaction202JSONResponse{TxHash: req.Body.TxHash, EvmChainId: 1337, Status: gen.TransactionReportStatusPending,
		Transfers: []gen.ReportedTransfer{}}, nil
}
