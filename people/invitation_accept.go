package people

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/store"
)

// AcceptInvitation spends an invitation and signs its person in. Without a user of the
// invitation's email one is made with password; an existing user proves it is them with their
// password. An existing membership is never changed (an invitation never demotes or promotes).
func (s *Service) AcceptInvitation(ctx context.Context, token, password string, c Client) (AuthResult, error) {
	inv, err := s.Store.Read(ctx).InvitationByHash(TokenHash(token))
	if errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, ErrInvalidInvitation
	}
	if err != nil {
		return AuthResult{}, err
	}
	now := s.Now()
	if inv.UsedAt != nil || inv.RevokedAt != nil || !now.Before(inv.ExpiresAt) {
		return AuthResult{}, ErrInvalidInvitation // one answer for unknown, used, revoked and expired
	}
	if err := s.checkThrottle(ctx, inv.Email, c.IP); err != nil {
		return AuthResult{}, err
	}
	u, err := s.Store.Read(ctx).UserByEmail(inv.Email)
	exists := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return AuthResult{}, err
	}
	var newHash string
	if exists {
		ok, err := CheckPassword(password, u.PasswordHash)
		if err != nil || !ok || u.DisabledAt != nil {
			reason := "wrong_password"
			if ok {
				reason = "user_disabled"
			}
			return AuthResult{}, errors.Join(ErrInvalidCredentials, s.recordUserFailure(ctx, u, c.IP, methodPassword, reason))
		}
	} else {
		if password == "" {
			return AuthResult{}, ErrPasswordRequired
		}
		if newHash, err = HashPassword(password); err != nil {
			return AuthResult{}, err
		}
		u = store.User{ID: uuid.Must(uuid.NewV7()), Email: inv.Email, PasswordHash: newHash, CreatedAt: now, UpdatedAt: now}
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.UseInvitation(inv.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return ErrInvalidInvitation
		}
		if !exists {
			if err := tx.InsertUser(u); err != nil {
				return err
			}
		}
		// The invitation's merchant records who accepted it, and who joined (an existing
		// membership stays as it is: nobody joined).
		actx := audit.AsPerson(ctx, u.ID.String(), u.Email)
		_, err = tx.Membership(u.ID, inv.MerchantID)
		joined := errors.Is(err, store.ErrNotFound)
		if err != nil && !joined {
			return err
		}
		if err := audit.Append(actx, tx, audit.Event{MerchantID: inv.MerchantID, Action: audit.InvitationAccepted, TargetType: audit.TargetInvitation,
			TargetID: inv.ID.String(), Details: map[string]any{"email": inv.Email, "role": string(inv.Role), "new_user": !exists,
				"already_member": !joined}}); err != nil {
			return err
		}
		if !joined {
			return nil
		}
		if err := tx.SetMembership(u.ID, inv.MerchantID, inv.Role, now); err != nil {
			return err
		}
		return audit.Append(actx, tx, audit.Event{MerchantID: inv.MerchantID, Action: audit.MemberJoined, TargetType: audit.TargetUser,
			TargetID: u.ID.String(), Details: map[string]any{"email": u.Email, "role": string(inv.Role), "invitation_id": inv.ID.String()}})
	})
	if err != nil {
		return AuthResult{}, err
	}
	return s.signIn(ctx, u, c, methodPassword)
}
