package policy

import (
	"context"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Approvals: a withdrawal created above the merchant's approval threshold stays pending, and
// the payout manager leaves it alone, until a person other than its creator approves it
// (a second pair of eyes); a rejection cancels it. The approver is ctx's actor: a person signed
// in to the dashboard (the operation's permission, withdrawals:write, is the admin's and the
// owner's); a service token or a secret key is never a person.

// ApproveWithdrawal approves one of m's withdrawals (of m's mode) that awaits an approval. The
// creator is refused (ErrApprovalByCreator), anyone but a person too (ErrApprovalNeedsPerson),
// and a withdrawal not awaiting one is ErrNotAwaitingApproval. The approval is a change of the
// lifecycle core (withdrawal.updated) and is audited, in one transaction.
func (s *Service) ApproveWithdrawal(ctx context.Context, m domain.Merchant, id string) (domain.Withdrawal, error) {
	approver, email := approverOf(ctx)
	return s.decide(ctx, m, id, audit.WithdrawalApproved, func(w *domain.Withdrawal) error {
		if err := w.Approval.CheckApprover(approver, false); err != nil {
			return err
		}
		if w.Status != domain.WithdrawalPending {
			return domain.ErrNotAwaitingApproval // a cancelled one's approval was never given either
		}
		now := s.Now()
		w.Approval.ApprovedBy, w.Approval.ApprovedByEmail, w.Approval.ApprovedAt = approver, &email, &now
		return nil
	})
}

// RejectWithdrawal cancels one of m's withdrawals awaiting an approval through the lifecycle
// core (the debit reversed, withdrawal.cancelled), audited as a rejection. Its creator may reject
// it (withdrawing one's own request is no risk); anyone but a person may not.
func (s *Service) RejectWithdrawal(ctx context.Context, m domain.Merchant, id string) (domain.Withdrawal, error) {
	approver, _ := approverOf(ctx)
	return s.decide(ctx, m, id, audit.WithdrawalRejected, func(w *domain.Withdrawal) error {
		if err := w.Approval.CheckApprover(approver, true); err != nil {
			return err
		}
		if w.Status != domain.WithdrawalPending {
			return domain.ErrNotAwaitingApproval
		}
		return w.TransitionTo(domain.WithdrawalCancelled)
	})
}

// decide applies change to m's withdrawal id under its lock and audits action with it.
func (s *Service) decide(ctx context.Context, m domain.Merchant, id string, action audit.Action, change func(w *domain.Withdrawal) error) (domain.Withdrawal, error) {
	wid, err := uuid.Parse(id)
	if err != nil {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	var out domain.Withdrawal
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		w, err := s.Core.UpdateWithdrawalTx(tx, wid, func(w *domain.Withdrawal) error {
			if w.MerchantID != m.ID || w.Mode != m.Mode.Norm() {
				return domain.ErrWithdrawalNotFound // another merchant's or mode's: not there
			}
			return change(w)
		})
		if err != nil {
			return err
		}
		out = w
		return audit.Append(ctx, tx, audit.Event{MerchantID: m.ID, Action: action, TargetType: audit.TargetWithdrawal, TargetID: w.ID.String(),
			Details: map[string]any{"mode": string(w.Mode), "amountInCents": w.AmountInCents, "recipientAddress": w.RecipientAddress}})
	})
	return out, err
}

// approverOf is the person ctx acts for (user id and email), or nil.
func approverOf(ctx context.Context) (*uuid.UUID, string) {
	id := audit.PersonOf(ctx)
	if id == nil {
		return nil, ""
	}
	return id, audit.ActorFrom(ctx).Label
}
