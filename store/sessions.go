package store

import (
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// Sessions of the dashboard's people: one per sign-in, holding the hash of its current refresh
// token (rotated on every use) and of the one before it.

// Session is one sign-in of a user.
type Session struct {
	ID                uuid.UUID
	UserID            uuid.UUID
	RefreshTokenHash  string
	PreviousTokenHash *string
	RotatedAt         *time.Time
	Mode              domain.Mode
	CreatedAt         time.Time
	LastUsedAt        time.Time
	ExpiresAt         time.Time
	RevokedAt         *time.Time
	SecondFactorAt    *time.Time
	IP                string
	UserAgent         string
}

type sessionRow struct {
	ID                uuid.UUID `gorm:"primaryKey"`
	UserID            uuid.UUID
	RefreshTokenHash  string
	PreviousTokenHash *string
	RotatedAt         *time.Time
	Mode              string
	CreatedAt         time.Time
	LastUsedAt        time.Time
	ExpiresAt         time.Time
	RevokedAt         *time.Time
	SecondFactorAt    *time.Time
	IP                string `gorm:"column:ip"`
	UserAgent         string
}

func (sessionRow) TableName() string { return "sessions" }

func (r sessionRow) domain() Session {
	return Session{ID: r.ID, UserID: r.UserID, RefreshTokenHash: r.RefreshTokenHash, PreviousTokenHash: r.PreviousTokenHash,
		RotatedAt: utcPtr(r.RotatedAt), Mode: domain.Mode(r.Mode), CreatedAt: r.CreatedAt.UTC(), LastUsedAt: r.LastUsedAt.UTC(),
		ExpiresAt: r.ExpiresAt.UTC(), RevokedAt: utcPtr(r.RevokedAt), SecondFactorAt: utcPtr(r.SecondFactorAt), IP: r.IP, UserAgent: r.UserAgent}
}

// InsertSession stores a new session.
func (t *Tx) InsertSession(s Session) error {
	return translate(t.db.Create(&sessionRow{ID: s.ID, UserID: s.UserID, RefreshTokenHash: s.RefreshTokenHash, Mode: string(s.Mode.Norm()),
		CreatedAt: s.CreatedAt.UTC(), LastUsedAt: s.LastUsedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), SecondFactorAt: utcPtr(s.SecondFactorAt),
		IP: s.IP, UserAgent: s.UserAgent}).Error)
}

// GetSession reads a session by id.
func (t *Tx) GetSession(id uuid.UUID) (Session, error) {
	var r sessionRow
	if err := t.db.Take(&r, "id = ?", id).Error; err != nil {
		return Session{}, translate(err)
	}
	return r.domain(), nil
}

// LockSession reads a session holding a row lock until the transaction ends (PostgreSQL), so
// two refreshes of one session are serialised.
func (t *Tx) LockSession(id uuid.UUID) (Session, error) {
	var r sessionRow
	if err := t.forUpdate().Take(&r, "id = ?", id).Error; err != nil {
		return Session{}, translate(err)
	}
	return r.domain(), nil
}

// RotateSession replaces a session's refresh token (the old one becomes the previous), marks it
// used now and sets its mode.
func (t *Tx) RotateSession(id uuid.UUID, oldHash, newHash string, mode domain.Mode, now time.Time) error {
	return t.updateSession(id, map[string]any{"refresh_token_hash": newHash, "previous_token_hash": oldHash,
		"rotated_at": now.UTC(), "last_used_at": now.UTC(), "mode": string(mode.Norm())})
}

// SetSessionSecondFactor records a second factor just given in the session.
func (t *Tx) SetSessionSecondFactor(id uuid.UUID, at time.Time) error {
	return t.updateSession(id, map[string]any{"second_factor_at": at.UTC(), "last_used_at": at.UTC()})
}

func (t *Tx) updateSession(id uuid.UUID, cols map[string]any) error {
	res := t.db.Model(&sessionRow{}).Where("id = ?", id).Updates(cols)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// RevokeSession ends one session of a user (already ended: no change; not the user's: ErrNotFound).
func (t *Tx) RevokeSession(userID, id uuid.UUID, now time.Time) error {
	var n int64
	if err := t.db.Model(&sessionRow{}).Where("id = ? AND user_id = ?", id, userID).Count(&n).Error; err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return translate(t.db.Model(&sessionRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now.UTC()).Error)
}

// RevokeUserSessions ends every session of a user but except (uuid.Nil: all of them).
func (t *Tx) RevokeUserSessions(userID, except uuid.UUID, now time.Time) error {
	q := t.db.Model(&sessionRow{}).Where("user_id = ? AND revoked_at IS NULL", userID)
	if except != uuid.Nil {
		q = q.Where("id <> ?", except)
	}
	return translate(q.Update("revoked_at", now.UTC()).Error)
}

// UserSessions lists a user's sessions that are not revoked and not past their absolute
// expiry, newest first.
func (t *Tx) UserSessions(userID uuid.UUID, now time.Time) ([]Session, error) {
	var rows []sessionRow
	if err := t.db.Where("user_id = ? AND revoked_at IS NULL AND expires_at > ?", userID, now.UTC()).
		Order("created_at DESC").Limit(1000).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}
