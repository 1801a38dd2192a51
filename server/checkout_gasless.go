package server

import (
	"context"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// SubmitCheckoutGaslessPayment: the page posts the customer's signed EIP-3009 transfer; the
// server checks it and stores it for the chain's relayer (checkout.Service.SubmitGasless).
func (h *handlers) SubmitCheckoutGaslessPayment(ctx context.Context, req gen.SubmitCheckoutGaslessPaymentRequestObject) (gen.SubmitCheckoutGaslessPaymentResponseObject, error) {
	b := req.Body
	g, err := h.checkout.SubmitGasless(ctx, checkoutPayment(ctx), checkout.GaslessRequest{QuoteID: b.QuoteId, EVMChainID: b.EvmChainId,
		TokenAddress: b.TokenAddress, From: b.From, To: b.To, Value: b.Value, ValidAfter: b.ValidAfter, ValidBefore: b.ValidBefore,
		Nonce: b.Nonce, Signature: b.Signature})
	if err != nil {
		return nil, err
	}
	return gen.SubmitCheckoutGaslessPayment202JSONResponse(gaslessPaymentOut(g)), nil
}

// gaslessPaymentOut renders a posted authorization.
func gaslessPaymentOut(g store.GaslessAuthorization) gen.GaslessPayment {
	return gen.GaslessPayment{Id: g.ID, QuoteId: g.QuoteID, Status: gen.GaslessPaymentStatus(g.Status), From: g.From,
		ValueAsset: g.Value.String(), FeeAsset: g.FeeAsset.String(), FeePaidBy: gen.GaslessFeePayer(g.FeePaidBy),
		ValidBefore: g.ValidBefore, TxHash: g.TxHash, FailureReason: g.Error, CreatedAt: g.CreatedAt}
}

// checkoutGasless renders what a quote is signed for without gas (nil: not offered).
func checkoutGasless(o *checkout.GaslessOffer) *gen.CheckoutGasless {
	if o == nil {
		return nil
	}
	return &gen.CheckoutGasless{DomainName: o.Domain.Name, DomainVersion: o.Domain.Version, ValueAsset: o.Value.String(),
		FeeAsset: o.FeeAsset.String(), FeeCents: o.FeeCents, FeePaidBy: gen.GaslessFeePayer(o.FeePaidBy), ValidBefore: o.ValidBefore}
}
