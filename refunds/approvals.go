package refunds

import (
	"context"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Cancel moves an awaiting_address or pending refund to cancelled; the lifecycle core books the
// reversal that restores the balance and writes refund.cancelled in the same transaction
// (sealed with seal when it is not nil). Any other status is refused with a
// *domain.TransitionError. A merchant's request finds only its own refunds of its mode.
func (s *Service) Cancel(ctx context.Context, m domain.Merchant, id string, seal Sealer) (domain.Refund, error) {
	rid, err := uuid.Parse(id)
	if err != nil {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	var out domain.Refund
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		out, err = s.Core.UpdateRefundTx(tx, rid, func(r *domain.Refund) error {
			if !owns(m, *r) {
				return domain.ErrRefundNotFound
			}
			return r.TransitionTo(domain.RefundCancelled)
		})
		if err != nil {
			return err
		}
		if err := audit.Append(ctx, tx, audit.Event{MerchantID: out.MerchantID, Action: audit.RefundCancelled, TargetType: audit.TargetRefund,
			TargetID: out.ID.String(), Details: map[string]any{"mode": string(out.Mode), "amountInCents": out.AmountInCents}}); err != nil {
			return err
		}
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	})
	return out, err
}

// Approve gives a pending refund's required approval: a person of the team (the dashboard's
// withdrawals:write holders, admins and owners) who did not create it. The payout manager sends
// it from then on.
func (s *Service) Approve(ctx context.Context, m domain.Merchant, id string) (domain.Refund, error) {
	return s.decide(ctx, m, id, false)
}

// Reject cancels a refund waiting for its approval (the balance is restored); its creator may
// reject their own.
func (s *Service) Reject(ctx context.Context, m domain.Merchant, id string) (domain.Refund, error) {
	return s.decide(ctx, m, id, true)
}

func (s *Service) decide(ctx context.Context, m domain.Merchant, id string, reject bool) (domain.Refund, error) {
	rid, err := uuid.Parse(id)
	if err != nil {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	who := actingPerson(ctx)
	var out domain.Refund
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		out, err = s.Core.UpdateRefundTx(tx, rid, func(r *domain.Refund) error {
			if !owns(m, *r) {
				return domain.ErrRefundNotFound
			}
			var approver *uuid.UUID
			if who != nil {
				approver = &who.id
			}
			if err := r.Approval.CheckApprover(approver, reject); err != nil {
				return err
			}
			if r.Status != domain.RefundPending {
				// A required approval is given once the address is known: the approver sees it.
				return domain.ErrNotAwaitingApproval
			}
			if reject {
				return r.TransitionTo(domain.RefundCancelled)
			}
			now := s.Now()
			r.Approval.ApprovedBy, r.Approval.ApprovedByEmail, r.Approval.ApprovedAt = &who.id, &who.email, &now
			return nil
		})
		if err != nil {
			return err
		}
		action := audit.RefundApproved
		if reject {
			action = audit.RefundRejected
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: out.MerchantID, Action: action, TargetType: audit.TargetRefund,
			TargetID: out.ID.String(), Details: map[string]any{"mode": string(out.Mode), "amountInCents": out.AmountInCents,
				"recipientAddress": out.RecipientAddress, "recipientSource": out.RecipientSource}})
	})
	return out, err
}

// owns reports whether the refund is the merchant's, in the mode it acts in.
func owns(m domain.Merchant, r domain.Refund) bool {
	return r.MerchantID == m.ID && r.Mode.Norm() == m.Mode.Norm()
}
