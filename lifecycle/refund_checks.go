package lifecycle

import (
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
)

// A change may alter a refund's status, its errorMessage, add a first receipt, give it its
// recipient once (the claim), require or give its approval once, and record the network fee
// once (at signing). Everything else — the amounts, the payment, the token — is frozen.

// frozenRefund serialises what a change may not alter; was is the refund before the change
// (what it lacked then may be added once).
func frozenRefund(r, was domain.Refund) []byte {
	f := r
	f.Status, f.ErrorMessage, f.UpdatedAt, f.Version = "", nil, time.Time{}, 0
	f.Approval = domain.Approval{CreatedBy: r.Approval.CreatedBy}
	if was.Receipt == nil {
		f.Receipt = nil
	}
	if was.RecipientAddress == nil {
		f.RecipientAddress, f.RecipientSource = nil, nil
	}
	if was.NetworkFeeAsset == nil {
		f.NetworkFeeAsset = nil
	}
	return mustJSON(f)
}

// checkRefund refuses a change the table or the refund's rules do not allow.
func checkRefund(before, after domain.Refund) error {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("lifecycle: refund %s: "+format, append([]any{before.ID}, args...)...)
	}
	if before.Status.Terminal() && refundChanged(before, after) {
		return &domain.TransitionError{Entity: "refund", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	if after.Status != before.Status && !before.Status.CanTransitionTo(after.Status) {
		return &domain.TransitionError{Entity: "refund", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	switch {
	case after.Status == domain.RefundFailed && (after.ErrorMessage == nil || *after.ErrorMessage == ""):
		return refuse("cannot fail without an errorMessage")
	case after.Status != domain.RefundFailed && after.ErrorMessage != nil:
		return refuse("errorMessage is only set on failure")
	case after.Status == domain.RefundCompleted && after.Receipt == nil:
		return refuse("cannot complete without a receipt")
	case (after.RecipientAddress == nil) != (after.RecipientSource == nil):
		return refuse("a recipient comes with its source")
	case before.RecipientAddress != nil && (after.RecipientAddress == nil || *after.RecipientAddress != *before.RecipientAddress ||
		*after.RecipientSource != *before.RecipientSource):
		return refuse("its recipient is never changed once given")
	case before.RecipientAddress == nil && after.RecipientAddress != nil && after.Status != domain.RefundPending:
		return refuse("a recipient is given by the claim that moves it to pending")
	case after.RecipientAddress == nil && after.Status != domain.RefundAwaitingAddress && after.Status != domain.RefundCancelled:
		return refuse("%s needs a recipient", after.Status)
	}
	return checkRefundApproval(before, after)
}

// checkRefundApproval: an approval, once required, stays required; once given, stays given; it
// is given to a pending refund only; and a refund whose approval waits is never signed.
func checkRefundApproval(before, after domain.Refund) error {
	b, a := before.Approval, after.Approval
	switch {
	case b.Required && !a.Required:
		return fmt.Errorf("lifecycle: refund %s: a required approval cannot be dropped", before.ID)
	case b.ApprovedAt != nil && !sameApproval(b, a):
		return fmt.Errorf("lifecycle: refund %s: an approval once given is never changed", before.ID)
	case b.ApprovedAt == nil && a.ApprovedAt != nil && (!a.Required || a.ApprovedBy == nil || before.Status != domain.RefundPending ||
		after.Status != domain.RefundPending):
		return fmt.Errorf("lifecycle: refund %s: only a pending refund's required approval is given, by a person", before.ID)
	case (a.ApprovedAt == nil) != (a.ApprovedBy == nil):
		return fmt.Errorf("lifecycle: refund %s: an approval names who gave it and when", before.ID)
	case after.Status == domain.RefundProcessing && before.Status != domain.RefundProcessing && before.Approval.Waiting():
		return fmt.Errorf("lifecycle: refund %s waits for an approval: it cannot be signed", before.ID)
	}
	return nil
}

func sameApproval(a, b domain.Approval) bool {
	return a.Required == b.Required && samePtr(a.ApprovedBy, b.ApprovedBy) && sameStr(a.ApprovedByEmail, b.ApprovedByEmail) &&
		sameTime(a.ApprovedAt, b.ApprovedAt)
}

func refundChanged(before, after domain.Refund) bool {
	return before.Status != after.Status || !sameStr(before.ErrorMessage, after.ErrorMessage) ||
		(before.Receipt == nil) != (after.Receipt == nil) || !sameStr(before.RecipientAddress, after.RecipientAddress) ||
		!sameApproval(before.Approval, after.Approval) || (before.NetworkFeeAsset == nil) != (after.NetworkFeeAsset == nil)
}

func cloneRefund(r domain.Refund) domain.Refund {
	out := r
	out.ErrorMessage, out.RecipientAddress, out.RecipientSource = copyPtr(r.ErrorMessage), copyPtr(r.RecipientAddress), copyPtr(r.RecipientSource)
	out.NetworkFeeAsset, out.Reason, out.ClaimExpiresAt = copyPtr(r.NetworkFeeAsset), copyPtr(r.Reason), copyPtr(r.ClaimExpiresAt)
	out.Approval.ApprovedBy, out.Approval.ApprovedByEmail = copyPtr(r.Approval.ApprovedBy), copyPtr(r.Approval.ApprovedByEmail)
	out.Approval.ApprovedAt, out.Approval.CreatedBy = copyPtr(r.Approval.ApprovedAt), copyPtr(r.Approval.CreatedBy)
	if r.Receipt != nil {
		rc := *r.Receipt
		out.Receipt = &rc
	}
	return out
}

// sameTime is checks.go's (one definition for withdrawals and refunds).

func samePtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// refundSnapshot is a refund right after a change, in the API's field names.
type refundSnapshot struct {
	ID                 string  `json:"id"`
	MerchantID         string  `json:"merchantId"`
	PaymentID          string  `json:"paymentId"`
	Status             string  `json:"status"`
	PreviousStatus     *string `json:"previousStatus"`
	AmountInCents      int64   `json:"amountInCents"`
	AmountAsset        string  `json:"amountAsset"`
	ChainID            string  `json:"chainId"`
	TokenID            string  `json:"tokenId"`
	SubtractNetworkFee bool    `json:"subtractNetworkFee"`
	NetworkFeeAsset    *string `json:"networkFeeAsset"`
	RecipientAddress   *string `json:"recipientAddress"`
	RecipientSource    *string `json:"recipientSource"`
	ApprovalRequired   bool    `json:"approvalRequired"`
	ApprovedBy         *string `json:"approvedBy"`
	ErrorMessage       *string `json:"errorMessage"`
	TxHash             *string `json:"txHash"`
	CreatedAt          string  `json:"createdAt"`
	UpdatedAt          string  `json:"updatedAt"`
	Version            int64   `json:"version"`
}

func (c *Core) refundEvent(typ domain.EventType, prev domain.RefundStatus, r domain.Refund) domain.Event {
	snap := refundSnapshot{ID: r.ID.String(), MerchantID: r.MerchantID.String(), PaymentID: r.PaymentID.String(), Status: string(r.Status),
		PreviousStatus: previous(prev), AmountInCents: r.AmountInCents, AmountAsset: r.AmountAsset.String(), ChainID: chains.CAIP2(r.Chain.ID),
		TokenID: r.Token.ID, SubtractNetworkFee: r.SubtractNetworkFee, RecipientAddress: r.RecipientAddress,
		ApprovalRequired: r.Approval.Required, ApprovedBy: r.Approval.ApprovedByEmail, ErrorMessage: r.ErrorMessage,
		CreatedAt: stamp(r.CreatedAt), UpdatedAt: stamp(r.UpdatedAt), Version: r.Version}
	if r.RecipientSource != nil {
		s := string(*r.RecipientSource)
		snap.RecipientSource = &s
	}
	if r.NetworkFeeAsset != nil {
		s := r.NetworkFeeAsset.String()
		snap.NetworkFeeAsset = &s
	}
	if r.Receipt != nil {
		h := r.Receipt.TxHash
		snap.TxHash = &h
	}
	e := c.event(typ, domain.EntityRefund, r.ID, r.MerchantID, r.Version, snap)
	e.Mode = r.Mode.Norm()
	if c.Render != nil && domain.IsWebhookEvent(typ) {
		e.Render = func() ([]byte, error) { return c.Render.Refund(r) }
	}
	return e
}
