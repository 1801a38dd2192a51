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
	User User
	Role domain.Role
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
	CreatedAt  time.Time
}

func (invitationRow) TableName() string { return "invitations" }

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
	}
	err := t.db.Table("memberships").
		Select("users.id, users.email, users.password_hash, users.disabled_at, users.created_at, users.updated_at, memberships.role").
		Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.merchant_id = ?", merchantID).Order("users.email").Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		u := userRow{ID: r.ID, Email: r.Email, PasswordHash: r.PasswordHash, DisabledAt: r.DisabledAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		out[i] = Member{User: u.domain(), Role: domain.Role(r.Role)}
	}
	return out, nil
}

// InsertInvitation stores an invitation.
func (t *Tx) InsertInvitation(inv Invitation) error {
	return translate(t.db.Create(&invitationRow{ID: inv.ID, MerchantID: inv.MerchantID, Email: NormalizeEmail(inv.Email),
		Role: string(inv.Role), TokenHash: inv.TokenHash, ExpiresAt: inv.ExpiresAt.UTC(), CreatedAt: inv.CreatedAt.UTC()}).Error)
}
