package settlement

import (
	"net/http"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// The payout policy's answers (issue 23): a withdrawal's approval, rendered alike in both
// shapes, and the approve and reject operations, which answer the withdrawal as GET does.

// withdrawalApproval renders whether a withdrawal waits for a second person, and who approved
// it (by email, as the dashboard shows people).
func withdrawalApproval(a domain.Approval) *gen.Approval {
	// CreatedBy lets the dashboard tell the creator why they cannot approve it.
	out := &gen.Approval{Required: a.Required, ApprovedAt: a.ApprovedAt, CreatedBy: a.CreatedBy}
	if a.ApprovedAt != nil {
		out.ApprovedBy = a.ApprovedByEmail
	}
	return out
}

// VisitApproveMerchantWithdrawalResponse writes the response.
func (r Response) VisitApproveMerchantWithdrawalResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitRejectMerchantWithdrawalResponse writes the response.
func (r Response) VisitRejectMerchantWithdrawalResponse(w http.ResponseWriter) error {
	return r.write(w)
}
