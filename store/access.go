package store

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// What a signed-in person may do for a merchant, read at every dashboard request in one query
// on primary keys (users.id, memberships (user_id, merchant_id), sessions.id).

// AccessSchema says which of the tables and columns the sessions' migration (16) adds exist in
// this database: each part of the check is made once its table or column is there, so the read
// works before that migration is merged and completes itself after.
type AccessSchema struct {
	Sessions   bool // sessions (id, user_id, created_at, last_used_at, expires_at, revoked_at)
	TOTP       bool // users.totp_enabled_at
	Require2FA bool // merchants.require_2fa
}

// DetectAccessSchema reads which parts of AccessSchema exist.
func (t *Tx) DetectAccessSchema() AccessSchema {
	m := t.db.Migrator()
	return AccessSchema{Sessions: m.HasTable("sessions"), TOTP: m.HasColumn(&userRow{}, "totp_enabled_at"),
		Require2FA: m.HasColumn("merchants", "require_2fa")}
}

// PersonAccess is a person's standing for one merchant now.
type PersonAccess struct {
	Email    string
	Disabled bool
	// SessionLive is false for a session unknown, of another user, revoked or expired (always
	// true while there is no sessions table).
	SessionLive     bool
	Role            domain.Role // "": not a member of the merchant
	Require2FA      bool        // the merchant requires a second factor
	HasSecondFactor bool        // the person has one (TOTP; passkeys when they come)
}

// PersonAccess reads a person's standing for a merchant; a user that does not exist is
// ErrNotFound.
func (t *Tx) PersonAccess(schema AccessSchema, userID, sessionID, merchantID uuid.UUID, now time.Time) (PersonAccess, error) {
	cols := []string{"users.email", "users.disabled_at", "memberships.role"}
	joins := []string{"LEFT JOIN memberships ON memberships.user_id = users.id AND memberships.merchant_id = ?"}
	args := []any{merchantID}
	if schema.TOTP {
		cols = append(cols, "users.totp_enabled_at")
	}
	if schema.Require2FA {
		cols = append(cols, "merchants.require_2fa")
		joins = append(joins, "LEFT JOIN merchants ON merchants.id = memberships.merchant_id")
	}
	if schema.Sessions {
		// integration: the sessions' own rule (revoked_at, expires_at) decides a session's life.
		cols = append(cols, "sessions.id AS session_id", "sessions.revoked_at", "sessions.expires_at")
		joins = append(joins, "LEFT JOIN sessions ON sessions.id = ? AND sessions.user_id = users.id")
		args = append(args, sessionID)
	}
	args = append(args, userID)
	var rows []struct {
		Email         string
		DisabledAt    *time.Time
		Role          *string
		TotpEnabledAt *time.Time `gorm:"column:totp_enabled_at"`
		Require2fa    *bool      `gorm:"column:require_2fa"`
		SessionID     *uuid.UUID `gorm:"column:session_id"`
		RevokedAt     *time.Time
		ExpiresAt     *time.Time
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM users " + strings.Join(joins, " ") + " WHERE users.id = ?"
	if err := t.db.Raw(q, args...).Scan(&rows).Error; err != nil {
		return PersonAccess{}, translate(err)
	}
	if len(rows) == 0 {
		return PersonAccess{}, ErrNotFound
	}
	r := rows[0]
	a := PersonAccess{Email: r.Email, Disabled: r.DisabledAt != nil, SessionLive: sessionLive(schema, r.SessionID, r.RevokedAt, r.ExpiresAt, now),
		HasSecondFactor: r.TotpEnabledAt != nil, Require2FA: r.Require2fa != nil && *r.Require2fa}
	if r.Role != nil {
		a.Role = domain.Role(*r.Role)
	}
	return a, nil
}

// sessionLive is the session check: found (for this user), not revoked, not expired.
// integration: check sessions.revoked_at/expires_at — the sessions helper owns this rule.
func sessionLive(schema AccessSchema, id *uuid.UUID, revokedAt, expiresAt *time.Time, now time.Time) bool {
	if !schema.Sessions {
		return true // no sessions table yet: a person's token is as good as its expiry
	}
	return id != nil && revokedAt == nil && (expiresAt == nil || now.Before(*expiresAt))
}
