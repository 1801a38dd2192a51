package store

import (
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// The sign-in throttle's failures and the second-factor challenges: in the database, so every
// `serve` process sees the same counts and a challenge made by one is finished by another.

type loginFailureRow struct {
	ID         uuid.UUID `gorm:"primaryKey"`
	Account    string
	ClientAddr string
	At         time.Time
	Cleared    bool // a full sign-in of the account since: no longer counts for the account (still for the address)
}

func (loginFailureRow) TableName() string { return "login_failures" }

// InsertLoginFailure records a failed sign-in (or second factor) for an account and a client
// address, and forgets the failures older than forgetBefore (nothing reads them any more).
func (t *Tx) InsertLoginFailure(account, addr string, at, forgetBefore time.Time) error {
	if err := t.db.Where("at < ?", forgetBefore.UTC()).Delete(&loginFailureRow{}).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Create(&loginFailureRow{ID: uuid.Must(uuid.NewV7()), Account: NormalizeEmail(account), ClientAddr: addr, At: at.UTC()}).Error)
}

// loginFailuresSince lists the times of the failures matching where (with args) since a time,
// newest first, at most limit of them.
func (t *Tx) loginFailuresSince(since time.Time, limit int, where string, args ...any) ([]time.Time, error) {
	var rows []loginFailureRow
	if err := t.db.Where(where, args...).Where("at >= ?", since.UTC()).Order("at DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]time.Time, len(rows))
	for i, r := range rows {
		out[i] = r.At.UTC()
	}
	return out, nil
}

// AccountFailuresSince lists an account's failures since a time not cleared by a sign-in since,
// newest first (at most limit).
func (t *Tx) AccountFailuresSince(account string, since time.Time, limit int) ([]time.Time, error) {
	return t.loginFailuresSince(since, limit, "account = ? AND cleared = ?", NormalizeEmail(account), false)
}

// AddressFailuresSince lists a client address's failures since a time, newest first (at most limit).
func (t *Tx) AddressFailuresSince(addr string, since time.Time, limit int) ([]time.Time, error) {
	return t.loginFailuresSince(since, limit, "client_addr = ?", addr)
}

// ClearAccountFailures stops an account's failures counting for the account (after a full
// sign-in). They are kept, and still count for their client addresses: a sign-in never frees
// an address to guess more.
func (t *Tx) ClearAccountFailures(account string) error {
	return translate(t.db.Model(&loginFailureRow{}).Where("account = ? AND cleared = ?", NormalizeEmail(account), false).
		Update("cleared", true).Error)
}

// LoginChallenge is a pending second-factor step of a sign-in.
type LoginChallenge struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	TokenHash string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

type loginChallengeRow LoginChallenge

func (loginChallengeRow) TableName() string { return "login_challenges" }

// InsertLoginChallenge stores a challenge (and forgets the ones expired before forgetBefore).
func (t *Tx) InsertLoginChallenge(c LoginChallenge, forgetBefore time.Time) error {
	if err := t.db.Where("expires_at < ?", forgetBefore.UTC()).Delete(&loginChallengeRow{}).Error; err != nil {
		return translate(err)
	}
	r := loginChallengeRow(c)
	r.CreatedAt, r.ExpiresAt = c.CreatedAt.UTC(), c.ExpiresAt.UTC()
	return translate(t.db.Create(&r).Error)
}

// LoginChallengeByHash reads a challenge by its token's hash.
func (t *Tx) LoginChallengeByHash(hash string) (LoginChallenge, error) {
	var r loginChallengeRow
	if err := t.db.Take(&r, "token_hash = ?", hash).Error; err != nil {
		return LoginChallenge{}, translate(err)
	}
	r.CreatedAt, r.ExpiresAt, r.UsedAt = r.CreatedAt.UTC(), r.ExpiresAt.UTC(), utcPtr(r.UsedAt)
	return LoginChallenge(r), nil
}

// UseLoginChallenge spends a challenge: false when it was already spent.
func (t *Tx) UseLoginChallenge(id uuid.UUID, now time.Time) (bool, error) {
	res := t.db.Model(&loginChallengeRow{}).Where("id = ? AND used_at IS NULL", id).Update("used_at", now.UTC())
	return res.RowsAffected == 1, translate(res.Error)
}

// InvitationByHash reads an invitation by its token's hash.
func (t *Tx) InvitationByHash(hash string) (Invitation, error) {
	var r invitationRow
	if err := t.db.Take(&r, "token_hash = ?", hash).Error; err != nil {
		return Invitation{}, translate(err)
	}
	return Invitation{ID: r.ID, MerchantID: r.MerchantID, Email: r.Email, Role: domain.Role(r.Role), TokenHash: r.TokenHash,
		ExpiresAt: r.ExpiresAt.UTC(), UsedAt: utcPtr(r.UsedAt), RevokedAt: utcPtr(r.RevokedAt), CreatedAt: r.CreatedAt.UTC()}, nil
}

// UseInvitation spends an invitation: false when it is used, revoked or expired (checked in the
// update itself, so of two concurrent accepts only one spends it).
func (t *Tx) UseInvitation(id uuid.UUID, now time.Time) (bool, error) {
	res := t.db.Model(&invitationRow{}).Where("id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?", id, now.UTC()).
		Update("used_at", now.UTC())
	return res.RowsAffected == 1, translate(res.Error)
}

// Membership reads a user's role for a merchant (ErrNotFound: not a member).
func (t *Tx) Membership(userID, merchantID uuid.UUID) (string, error) {
	var r membershipRow
	if err := t.db.Take(&r, "user_id = ? AND merchant_id = ?", userID, merchantID).Error; err != nil {
		return "", translate(err)
	}
	return r.Role, nil
}

// UserMembership is one merchant a user acts for.
type UserMembership struct {
	MerchantID   uuid.UUID
	MerchantName string
	Role         string
}

// UserMemberships lists the merchants a user acts for, by merchant name.
func (t *Tx) UserMemberships(userID uuid.UUID) ([]UserMembership, error) {
	var rows []UserMembership
	err := t.db.Table("memberships").Select("memberships.merchant_id, merchants.name AS merchant_name, memberships.role").
		Joins("JOIN merchants ON merchants.id = memberships.merchant_id").Where("memberships.user_id = ?", userID).
		Order("merchants.name").Scan(&rows).Error
	return rows, translate(err)
}
