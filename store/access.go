package store

import (
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// What a signed-in person may do for a merchant, read at every dashboard request in one query
// on primary keys (users.id, memberships (user_id, merchant_id), sessions.id).

// PersonAccess is a person's standing for one merchant now.
type PersonAccess struct {
	Email    string
	Disabled bool
	// Session is the token's session when it is this user's (nil: unknown or another's); its
	// life is the sessions' rule (people.live).
	Session         *Session
	Role            domain.Role // "": not a member of the merchant
	Require2FA      bool        // the merchant requires a second factor
	HasSecondFactor bool        // the person has one (TOTP or a passkey)
}

// PersonAccess reads a person's standing for a merchant in one query on primary keys; a user
// that does not exist is ErrNotFound.
func (t *Tx) PersonAccess(userID, sessionID, merchantID uuid.UUID) (PersonAccess, error) {
	var rows []struct {
		Email         string
		DisabledAt    *time.Time
		Role          *string
		TotpEnabledAt *time.Time `gorm:"column:totp_enabled_at"`
		Require2fa    *bool      `gorm:"column:require_2fa"`
		HasPasskey    bool       `gorm:"column:has_passkey"`
		SessionID     *uuid.UUID `gorm:"column:session_id"`
		RevokedAt     *time.Time
		ExpiresAt     *time.Time
		LastUsedAt    *time.Time
	}
	q := `SELECT users.email, users.disabled_at, memberships.role, users.totp_enabled_at, merchants.require_2fa,
		EXISTS (SELECT 1 FROM passkeys WHERE passkeys.user_id = users.id) AS has_passkey,
		sessions.id AS session_id, sessions.revoked_at, sessions.expires_at, sessions.last_used_at
		FROM users
		LEFT JOIN memberships ON memberships.user_id = users.id AND memberships.merchant_id = ?
		LEFT JOIN merchants ON merchants.id = memberships.merchant_id
		LEFT JOIN sessions ON sessions.id = ? AND sessions.user_id = users.id
		WHERE users.id = ?`
	if err := t.db.Raw(q, merchantID, sessionID, userID).Scan(&rows).Error; err != nil {
		return PersonAccess{}, translate(err)
	}
	if len(rows) == 0 {
		return PersonAccess{}, ErrNotFound
	}
	r := rows[0]
	a := PersonAccess{Email: r.Email, Disabled: r.DisabledAt != nil, HasSecondFactor: r.TotpEnabledAt != nil || r.HasPasskey,
		Require2FA: r.Require2fa != nil && *r.Require2fa}
	if r.SessionID != nil && r.ExpiresAt != nil && r.LastUsedAt != nil {
		a.Session = &Session{ID: *r.SessionID, UserID: userID, RevokedAt: r.RevokedAt, ExpiresAt: r.ExpiresAt.UTC(), LastUsedAt: r.LastUsedAt.UTC()}
	}
	if r.Role != nil {
		a.Role = domain.Role(*r.Role)
	}
	return a, nil
}
