package people

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// The team of a merchant as its owners manage it: roles changed, members removed, invitations
// listed and revoked. Every change locks the merchant's row first, so two owners demoting each
// other at once are serialised and the second sees the first's result: a merchant always keeps
// an owner. A changed or ended membership revokes the person's open invitations (an old link
// must not undo the change), and each change is appended to the audit log in its transaction.

// SetRole changes a member's role. by is the role of who asks: only an owner grants owner.
func (s *Service) SetRole(ctx context.Context, merchantID, userID uuid.UUID, role domain.Role, by domain.Role) (store.Member, error) {
	if role == domain.RoleOwner && by != domain.RoleOwner {
		return store.Member{}, fmt.Errorf("%w: only an owner may grant the owner role", domain.ErrForbidden)
	}
	var out store.Member
	err := s.team(ctx, merchantID, userID, func(tx *store.Tx, m store.Member) error {
		if m.Role == domain.RoleOwner && role != domain.RoleOwner {
			if err := keepAnOwner(tx, merchantID); err != nil {
				return err
			}
		}
		now := s.Now()
		if err := tx.SetMembership(userID, merchantID, role, now); err != nil {
			return err
		}
		if _, err := tx.RevokeInvitationsFor(merchantID, m.User.Email, now); err != nil {
			return err
		}
		out = m
		out.Role = role
		if m.Role == role {
			return nil // nothing changed: nothing to record
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.MemberRoleChanged, TargetType: audit.TargetUser,
			TargetID: userID.String(), Details: map[string]any{"email": m.User.Email, "from": string(m.Role), "to": string(role)}})
	})
	return out, err
}

// RemoveMember ends a user's membership of the merchant (the user stays: the log names them).
func (s *Service) RemoveMember(ctx context.Context, merchantID, userID uuid.UUID) error {
	return s.team(ctx, merchantID, userID, func(tx *store.Tx, m store.Member) error {
		if m.Role == domain.RoleOwner {
			if err := keepAnOwner(tx, merchantID); err != nil {
				return err
			}
		}
		if err := tx.DeleteMembership(userID, merchantID); err != nil {
			return err
		}
		if _, err := tx.RevokeInvitationsFor(merchantID, m.User.Email, s.Now()); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.MemberRemoved, TargetType: audit.TargetUser,
			TargetID: userID.String(), Details: map[string]any{"email": m.User.Email, "role": string(m.Role)}})
	})
}

// team runs fn on a member under the merchant's row lock.
func (s *Service) team(ctx context.Context, merchantID, userID uuid.UUID, fn func(tx *store.Tx, m store.Member) error) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.LockMerchant(merchantID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return domain.ErrMerchantNotFound
			}
			return err
		}
		m, err := tx.Member(merchantID, userID)
		if errors.Is(err, store.ErrNotFound) {
			return domain.ErrMemberNotFound
		}
		if err != nil {
			return err
		}
		return fn(tx, m)
	})
}

// keepAnOwner refuses to take away the merchant's last owner (the caller holds the merchant's lock).
func keepAnOwner(tx *store.Tx, merchantID uuid.UUID) error {
	n, err := tx.CountOwners(merchantID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return domain.ErrLastOwner
	}
	return nil
}

// Invitations lists the merchant's pending invitations, newest first.
func (s *Service) Invitations(ctx context.Context, merchantID uuid.UUID) ([]store.Invitation, error) {
	return s.Store.Read(ctx).PendingInvitations(merchantID, s.Now())
}

// RevokeInvitation makes a pending invitation's link dead.
func (s *Service) RevokeInvitation(ctx context.Context, merchantID, id uuid.UUID) (store.Invitation, error) {
	var inv store.Invitation
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if inv, err = tx.RevokeInvitation(merchantID, id, s.Now()); err != nil {
			return err
		}
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.InvitationRevoked, TargetType: audit.TargetInvitation,
			TargetID: id.String(), Details: map[string]any{"email": inv.Email, "role": string(inv.Role)}})
	})
	if errors.Is(err, store.ErrNotFound) {
		return store.Invitation{}, domain.ErrInvitationNotFound
	}
	return inv, err
}
