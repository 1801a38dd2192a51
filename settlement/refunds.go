package settlement

import (
	"net/http"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// Refunds render the same in both shapes: the guide documents no refunds of its own, so its
// spec carries the typed schema's Refund unchanged.

// ClaimURL gives a refund's claim link while it awaits its address (nil otherwise): the link's
// fragment is a secret this package cannot make (refunds.Claims).
type ClaimURL func(r domain.Refund) *string

// Refund renders a refund.
func Refund(r domain.Refund, claimURL *string) gen.Refund {
	out := gen.Refund{Id: r.ID, MerchantId: r.MerchantID, PaymentId: r.PaymentID, Livemode: r.Mode.Live(), Status: gen.RefundStatus(r.Status),
		ChainId: chains.CAIP2(r.Chain.ID), TokenId: r.Token.ID, TokenSymbol: r.Token.Symbol, TokenDecimals: r.Token.Decimals,
		AmountInCents: r.AmountInCents, AmountAsset: r.AmountAsset.String(), SubtractNetworkFee: r.SubtractNetworkFee,
		RecipientAddress: r.RecipientAddress, Reason: r.Reason, ClaimUrl: claimURL, ClaimExpiresAt: r.ClaimExpiresAt,
		Approval:  gen.Approval{Required: r.Approval.Required, ApprovedBy: r.Approval.ApprovedByEmail, ApprovedAt: r.Approval.ApprovedAt, CreatedBy: r.Approval.CreatedBy},
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.NetworkFeeAsset != nil {
		s := r.NetworkFeeAsset.String()
		out.NetworkFeeAsset = &s
	}
	if r.RecipientSource != nil {
		s := string(*r.RecipientSource)
		out.RecipientSource = &s
	}
	if r.Status == domain.RefundFailed {
		out.ErrorMessage = r.ErrorMessage
	}
	if rc := r.Receipt; rc != nil {
		out.Receipt = &gen.RefundReceipt{SettledAmountAsset: rc.SettledAmountAsset.String(), TxHash: rc.TxHash, TxBlockNumber: rc.TxBlockNumber,
			TxTimestamp: rc.TxTimestamp, TxSenderAddress: rc.TxSenderAddress, TxGasUsed: rc.TxGasUsed, TxTotalCost: rc.TxTotalCost.String(),
			TxTotalCostUsdFractions: rc.TxTotalCostUSDFractions, CreatedAt: rc.CreatedAt}
	}
	return out
}

// claimURL is the renderer's claim link of r (nil without a ClaimURL function).
func (rd Renderer) claimURL(r domain.Refund) *string {
	if rd.ClaimURL == nil {
		return nil
	}
	return rd.ClaimURL(r)
}

// Refund renders one refund with the given status (201 on creation, 200 otherwise).
func (rd Renderer) Refund(r domain.Refund, status int) Response {
	return Response{status, Refund(r, rd.claimURL(r))}
}

// RefundList renders a page of refunds.
func (rd Renderer) RefundList(rs []domain.Refund, page domain.Page) Response {
	data := make([]any, len(rs))
	for i, r := range rs {
		data[i] = Refund(r, rd.claimURL(r))
	}
	return list(data, page)
}

// Refund encodes a refund as GET /refunds/{id} answers it.
func (o Objects) Refund(r domain.Refund) ([]byte, error) {
	return Renderer(o).Refund(r, http.StatusOK).Encode()
}

// VisitCreateRefundResponse writes the response.
func (r Raw) VisitCreateRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCreateMerchantRefundResponse writes the response.
func (r Raw) VisitCreateMerchantRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCancelRefundResponse writes the response.
func (r Raw) VisitCancelRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitCancelMerchantRefundResponse writes the response.
func (r Raw) VisitCancelMerchantRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListRefundsResponse writes the response.
func (r Response) VisitListRefundsResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitListMerchantRefundsResponse writes the response.
func (r Response) VisitListMerchantRefundsResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetRefundResponse writes the response.
func (r Response) VisitGetRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitGetMerchantRefundResponse writes the response.
func (r Response) VisitGetMerchantRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitApproveMerchantRefundResponse writes the response.
func (r Response) VisitApproveMerchantRefundResponse(w http.ResponseWriter) error { return r.write(w) }

// VisitRejectMerchantRefundResponse writes the response.
func (r Response) VisitRejectMerchantRefundResponse(w http.ResponseWriter) error { return r.write(w) }
