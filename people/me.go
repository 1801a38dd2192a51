package people

import (
	"context"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Me is the signed-in person as the dashboard shows them.
type Me struct {
	User        store.User
	TOTPEnabled bool
	Memberships []MeMembership
}

// MeMembership is one merchant the person acts for.
type MeMembership struct {
	MerchantID   uuid.UUID
	MerchantName string
	Role         domain.Role
	Permissions  []string
}

// Me reads the person and the merchants they act for, with each role's permissions.
func (s *Service) Me(ctx context.Context, userID uuid.UUID) (Me, error) {
	tx := s.Store.Read(ctx)
	u, err := tx.GetUser(userID)
	if err != nil {
		return Me{}, s.noUser(err)
	}
	st, err := tx.UserTOTP(userID)
	if err != nil {
		return Me{}, err
	}
	ms, err := tx.UserMemberships(userID)
	if err != nil {
		return Me{}, err
	}
	out := Me{User: u, TOTPEnabled: st.SecretSealed != nil, Memberships: []MeMembership{}}
	for _, m := range ms {
		role := domain.Role(m.Role)
		out.Memberships = append(out.Memberships, MeMembership{MerchantID: m.MerchantID, MerchantName: m.MerchantName, Role: role,
			Permissions: permissionsOf(role)})
	}
	return out, nil
}

// permissionsOf names what a role may do (domain/permissions.go), for the web app to show only
// what the person may use (the server checks every request all the same).
func permissionsOf(r domain.Role) []string {
	out := []string{}
	for _, p := range r.Permissions() {
		out = append(out, string(p))
	}
	return out
}

// Require2FA reads a merchant's setting: its team must sign in with a second factor.
func (s *Service) Require2FA(ctx context.Context, merchantID uuid.UUID) (bool, error) {
	v, err := s.Store.Read(ctx).MerchantRequires2FA(merchantID)
	if err == store.ErrNotFound {
		return false, domain.ErrMerchantNotFound
	}
	return v, err
}

// SetRequire2FA changes a merchant's require_2fa setting.
func (s *Service) SetRequire2FA(ctx context.Context, merchantID uuid.UUID, on bool) error {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetMerchantRequires2FA(merchantID, on) })
	if err == store.ErrNotFound {
		return domain.ErrMerchantNotFound
	}
	return err
}
