package store

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// The people of the dashboard: users, the merchants they act for (memberships with a role) and
// invitations. Emails are stored lowercased: one address is one user.

// User is a person who signs in to the dashboard.
type User struct {
	ID           uuid.UUID
	Email        string
	PasswordHash string // argon2id, PHC string format
	DisabledAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Member is a user as a member of one merchant.
type Member struct {
	User     User
	Role     domain.Role
	JoinedAt time.Time // the membership's creation
}

// Invitation is a single-use invitation to join a merchant with a role.
type Invitation struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Email      string
	Role       domain.Role
	TokenHash  string // hex SHA-256 of the link's token; the token itself is never stored
	ExpiresAt  time.Time
	UsedAt     *time.Time
	RevokedAt  *time.Time // revoked by an owner, or by a change to the invitee's membership
	CreatedAt  time.Time
}

type userRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	Email        string
	PasswordHash string
	DisabledAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (userRow) TableName() string { return "users" }

func (r userRow) domain() User {
	return User{ID: r.ID, Email: r.Email, PasswordHash: r.PasswordHash, DisabledAt: r.DisabledAt,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

type membershipRow struct {
	UserID     uuid.UUID `gorm:"primaryKey"`
	MerchantID uuid.UUID `gorm:"primaryKey"`
	Role       string
	CreatedAt  time.Time
}

func (membershipRow) TableName() string { return "memberships" }

type invitationRow struct {
	ID         uuid.UUID `gorm:"primaryKey"`
	MerchantID uuid.UUID
	Email      string
	Role       string
	TokenHash  string
	ExpiresAt  time.Time
	UsedAt     *time.Time
	RevokedAt  *time.Time
	CreatedAt  time.Time
}

func (invitationRow) TableName() string { return "invitations" }

func (r invitationRow) domain() Invitation {
	return Invitation{ID: r.ID, MerchantID: r.MerchantID, Email: r.Email, Role: domain.Role(r.Role), TokenHash: r.TokenHash,
		ExpiresAt: r.ExpiresAt.UTC(), UsedAt: r.UsedAt, RevokedAt: r.RevokedAt, CreatedAt: r.CreatedAt.UTC()}
}

// NormalizeEmail is the stored form of an email address.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// InsertUser stores a new user; an email already taken is ErrConflict.
func (t *Tx) InsertUser(u User) error {
	return translate(t.db.Create(&userRow{ID: u.ID, Email: NormalizeEmail(u.Email), PasswordHash: u.PasswordHash,
		DisabledAt: u.DisabledAt, CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC()}).Error)
}

// UserByEmail reads a user by email (any letter case).
func (t *Tx) UserByEmail(email string) (User, error) {
	var r userRow
	if err := t.db.Take(&r, "email = ?", NormalizeEmail(email)).Error; err != nil {
		return User{}, translate(err)
	}
	return r.domain(), nil
}

// SetUserPassword replaces a user's password hash.
func (t *Tx) SetUserPassword(id uuid.UUID, hash string, now time.Time) error {
	return t.updateUser(id, map[string]any{"password_hash": hash, "updated_at": now.UTC()})
}

// DisableUser marks a user disabled from now (again: no change).
func (t *Tx) DisableUser(id uuid.UUID, now time.Time) error {
	res := t.db.Model(&userRow{}).Where("id = ? AND disabled_at IS NULL", id).
		Updates(map[string]any{"disabled_at": now.UTC(), "updated_at": now.UTC()})
	return translate(res.Error)
}

func (t *Tx) updateUser(id uuid.UUID, cols map[string]any) error {
	res := t.db.Model(&userRow{}).Where("id = ?", id).Updates(cols)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SetMembership makes a user a member of a merchant with a role (or changes the role).
func (t *Tx) SetMembership(userID, merchantID uuid.UUID, role domain.Role, now time.Time) error {
	var r membershipRow
	err := t.db.Take(&r, "user_id = ? AND merchant_id = ?", userID, merchantID).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return translate(t.db.Create(&membershipRow{UserID: userID, MerchantID: merchantID, Role: string(role), CreatedAt: now.UTC()}).Error)
	case err != nil:
		return translate(err)
	}
	return translate(t.db.Model(&membershipRow{}).Where("user_id = ? AND merchant_id = ?", userID, merchantID).
		Update("role", string(role)).Error)
}

// Members lists a merchant's members, by email.
func (t *Tx) Members(merchantID uuid.UUID) ([]Member, error) {
	var rows []struct {
		ID           uuid.UUID
		Email        string
		PasswordHash string
		DisabledAt   *time.Time
		CreatedAt    time.Time
		UpdatedAt    time.Time
		Role         string
		JoinedAt     time.Time
	}
	err := t.db.Table("memberships").
		Select("users.id, users.email, users.password_hash, users.disabled_at, users.created_at, users.updated_at, memberships.role, "+
			"memberships.created_at AS joined_at").
		Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.merchant_id = ?", merchantID).Order("users.email").Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		u := userRow{ID: r.ID, Email: r.Email, PasswordHash: r.PasswordHash, DisabledAt: r.DisabledAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		out[i] = Member{User: u.domain(), Role: domain.Role(r.Role), JoinedAt: r.JoinedAt.UTC()}
	}
	return out, nil
}

// InsertInvitation stores an invitation.
func (t *Tx) InsertInvitation(inv Invitation) error {
	return translate(t.db.Create(&invitationRow{ID: inv.ID, MerchantID: inv.MerchantID, Email: NormalizeEmail(inv.Email),
		Role: string(inv.Role), TokenHash: inv.TokenHash, ExpiresAt: inv.ExpiresAt.UTC(), CreatedAt: inv.CreatedAt.UTC()}).Error)
}

// Member reads one user's membership of a merchant; ErrNotFound when they are not a member.
func (t *Tx) Member(merchantID, userID uuid.UUID) (Member, error) {
	ms, err := t.Members(merchantID)
	if err != nil {
		return Member{}, err
	}
	for _, m := range ms {
		if m.User.ID == userID {
			return m, nil
		}
	}
	return Member{}, ErrNotFound
}

// CountOwners counts a merchant's owners (disabled users included: they can be enabled again).
func (t *Tx) CountOwners(merchantID uuid.UUID) (int64, error) {
	var n int64
	err := t.db.Model(&membershipRow{}).Where("merchant_id = ? AND role = ?", merchantID, string(domain.RoleOwner)).Count(&n).Error
	return n, translate(err)
}

// DeleteMembership ends a user's membership of a merchant; ErrNotFound when there was none.
func (t *Tx) DeleteMembership(userID, merchantID uuid.UUID) error {
	res := t.db.Where("user_id = ? AND merchant_id = ?", userID, merchantID).Delete(&membershipRow{})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// pendingInvitations are the invitations still usable at now.
func (t *Tx) pendingInvitations(merchantID uuid.UUID, now time.Time) *gorm.DB {
	return t.db.Model(&invitationRow{}).
		Where("merchant_id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?", merchantID, now.UTC())
}

// PendingInvitations lists a merchant's usable invitations, newest first.
func (t *Tx) PendingInvitations(merchantID uuid.UUID, now time.Time) ([]Invitation, error) {
	var rows []invitationRow
	if err := t.pendingInvitations(merchantID, now).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// RevokeInvitation revokes one of a merchant's pending invitations; ErrNotFound when there is
// no such pending invitation (used, revoked, expired or another merchant's).
func (t *Tx) RevokeInvitation(merchantID, id uuid.UUID, now time.Time) (Invitation, error) {
	var r invitationRow
	if err := t.pendingInvitations(merchantID, now).Where("id = ?", id).Take(&r).Error; err != nil {
		return Invitation{}, translate(err)
	}
	at := now.UTC()
	if err := t.db.Model(&invitationRow{}).Where("id = ?", id).Update("revoked_at", at).Error; err != nil {
		return Invitation{}, translate(err)
	}
	r.RevokedAt = &at
	return r.domain(), nil
}

// RevokeInvitationsFor revokes a merchant's pending invitations of one email (the person's
// membership changed: an old link must not undo it).
func (t *Tx) RevokeInvitationsFor(merchantID uuid.UUID, email string, now time.Time) (int64, error) {
	res := t.pendingInvitations(merchantID, now).Where("email = ?", NormalizeEmail(email)).Update("revoked_at", now.UTC())
	return res.RowsAffected, translate(res.Error)
}
