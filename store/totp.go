package store

import (
	"time"

	"github.com/google/uuid"
)

// A user's second factor: a TOTP secret (sealed), the last time step a code was accepted for
// (RFC 6238 §5.2: a code is accepted once), and single-use recovery codes kept as hashes.

// UserTOTP is a user's TOTP state.
type UserTOTP struct {
	UserID        uuid.UUID
	SecretSealed  *string // confirmed secret; nil: no second factor
	PendingSealed *string // enrolled, waiting for a first code
	EnabledAt     *time.Time
	LastStep      int64
}

type userTOTPRow struct {
	ID                uuid.UUID `gorm:"primaryKey"`
	TotpSecretSealed  *string
	TotpPendingSealed *string
	TotpEnabledAt     *time.Time
	TotpLastStep      int64
}

func (userTOTPRow) TableName() string { return "users" }

// RecoveryCode is one single-use recovery code (its hash).
type RecoveryCode struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	CodeHash  string
	UsedAt    *time.Time
	CreatedAt time.Time
}

type recoveryCodeRow RecoveryCode

func (recoveryCodeRow) TableName() string { return "recovery_codes" }

// GetUser reads a user by id.
func (t *Tx) GetUser(id uuid.UUID) (User, error) {
	var r userRow
	if err := t.db.Take(&r, "id = ?", id).Error; err != nil {
		return User{}, translate(err)
	}
	return r.domain(), nil
}

// UserTOTP reads a user's TOTP state.
func (t *Tx) UserTOTP(userID uuid.UUID) (UserTOTP, error) {
	var r userTOTPRow
	if err := t.db.Select("id, totp_secret_sealed, totp_pending_sealed, totp_enabled_at, totp_last_step").Take(&r, "id = ?", userID).Error; err != nil {
		return UserTOTP{}, translate(err)
	}
	return UserTOTP{UserID: r.ID, SecretSealed: r.TotpSecretSealed, PendingSealed: r.TotpPendingSealed, EnabledAt: utcPtr(r.TotpEnabledAt), LastStep: r.TotpLastStep}, nil
}

// SetPendingTOTP records an enrolled secret waiting for its first code (replacing any other).
func (t *Tx) SetPendingTOTP(userID uuid.UUID, sealed string, now time.Time) error {
	return t.updateUser(userID, map[string]any{"totp_pending_sealed": sealed, "updated_at": now.UTC()})
}

// ConfirmTOTP makes the pending secret the user's second factor, step the one just used.
func (t *Tx) ConfirmTOTP(userID uuid.UUID, sealed string, step int64, now time.Time) error {
	return t.updateUser(userID, map[string]any{"totp_secret_sealed": sealed, "totp_pending_sealed": nil,
		"totp_enabled_at": now.UTC(), "totp_last_step": step, "updated_at": now.UTC()})
}

// DisableTOTP removes the user's second factor and its recovery codes.
func (t *Tx) DisableTOTP(userID uuid.UUID, now time.Time) error {
	if err := t.updateUser(userID, map[string]any{"totp_secret_sealed": nil, "totp_pending_sealed": nil,
		"totp_enabled_at": nil, "updated_at": now.UTC()}); err != nil {
		return err
	}
	return translate(t.db.Where("user_id = ?", userID).Delete(&recoveryCodeRow{}).Error)
}

// UseTOTPStep records step as the last one used, if it is later than the last one: false means
// the step (or a later one) was already used — a replayed code. One conditional UPDATE, so two
// concurrent sign-ins with one code cannot both pass.
func (t *Tx) UseTOTPStep(userID uuid.UUID, step int64) (bool, error) {
	res := t.db.Model(&userTOTPRow{}).Where("id = ? AND totp_last_step < ?", userID, step).Update("totp_last_step", step)
	return res.RowsAffected == 1, translate(res.Error)
}

// ReplaceRecoveryCodes stores a user's new recovery codes (hashes), dropping the old ones.
func (t *Tx) ReplaceRecoveryCodes(userID uuid.UUID, hashes []string, now time.Time) error {
	if err := t.db.Where("user_id = ?", userID).Delete(&recoveryCodeRow{}).Error; err != nil {
		return translate(err)
	}
	for _, h := range hashes {
		r := recoveryCodeRow{ID: uuid.Must(uuid.NewV7()), UserID: userID, CodeHash: h, CreatedAt: now.UTC()}
		if err := t.db.Create(&r).Error; err != nil {
			return translate(err)
		}
	}
	return nil
}

// UseRecoveryCode spends an unused recovery code of the user: false when there is none with
// this hash (wrong, or already used).
func (t *Tx) UseRecoveryCode(userID uuid.UUID, hash string, now time.Time) (bool, error) {
	res := t.db.Model(&recoveryCodeRow{}).Where("user_id = ? AND code_hash = ? AND used_at IS NULL", userID, hash).
		Update("used_at", now.UTC())
	return res.RowsAffected == 1, translate(res.Error)
}

// MerchantRequires2FA reads a merchant's require_2fa setting.
func (t *Tx) MerchantRequires2FA(merchantID uuid.UUID) (bool, error) {
	var v struct {
		Require2fa bool `gorm:"column:require_2fa"`
	}
	res := t.db.Table("merchants").Select("require_2fa").Where("id = ?", merchantID).Scan(&v)
	if res.Error != nil {
		return false, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return false, ErrNotFound
	}
	return v.Require2fa, nil
}

// SetMerchantRequires2FA changes a merchant's require_2fa setting.
func (t *Tx) SetMerchantRequires2FA(merchantID uuid.UUID, on bool) error {
	res := t.db.Table("merchants").Where("id = ?", merchantID).Update("require_2fa", on)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
