package store

import (
	"time"

	"github.com/google/uuid"
)

// Passkeys (WebAuthn credentials), the WebAuthn ceremonies begun and the OIDC sign-ins begun: all
// in the database, so one `serve` process begins what another finishes.

// Passkey is a user's registered WebAuthn credential.
type Passkey struct {
	ID              uuid.UUID
	UserID          uuid.UUID
	CredentialID    []byte
	PublicKey       []byte // COSE key
	SignCount       uint32
	AAGUID          uuid.UUID
	Transports      string // comma-separated
	AttestationType string
	Flags           uint8 // authenticator data flags at registration
	Name            string
	CreatedAt       time.Time
	LastUsedAt      *time.Time
}

type passkeyRow struct {
	ID              uuid.UUID `gorm:"primaryKey"`
	UserID          uuid.UUID
	CredentialID    []byte
	PublicKey       []byte
	SignCount       int64
	AAGUID          uuid.UUID `gorm:"column:aaguid"`
	Transports      string
	AttestationType string
	Flags           int64
	Name            string
	CreatedAt       time.Time
	LastUsedAt      *time.Time
}

func (passkeyRow) TableName() string { return "passkeys" }

func (r passkeyRow) domain() Passkey {
	return Passkey{ID: r.ID, UserID: r.UserID, CredentialID: r.CredentialID, PublicKey: r.PublicKey, SignCount: uint32(r.SignCount),
		AAGUID: r.AAGUID, Transports: r.Transports, AttestationType: r.AttestationType, Flags: uint8(r.Flags), Name: r.Name,
		CreatedAt: r.CreatedAt.UTC(), LastUsedAt: passkeyUTC(r.LastUsedAt)}
}

// passkeyUTC is a nullable time in UTC.
func passkeyUTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// InsertPasskey stores a passkey; a credential id already registered (by anyone) is ErrConflict.
func (t *Tx) InsertPasskey(p Passkey) error {
	return translate(t.db.Create(&passkeyRow{ID: p.ID, UserID: p.UserID, CredentialID: p.CredentialID, PublicKey: p.PublicKey,
		SignCount: int64(p.SignCount), AAGUID: p.AAGUID, Transports: p.Transports, AttestationType: p.AttestationType,
		Flags: int64(p.Flags), Name: p.Name, CreatedAt: p.CreatedAt.UTC()}).Error)
}

// UserPasskeys lists a user's passkeys, oldest first.
func (t *Tx) UserPasskeys(userID uuid.UUID) ([]Passkey, error) {
	var rows []passkeyRow
	if err := t.db.Where("user_id = ?", userID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Passkey, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// CountPasskeys is the number of a user's passkeys.
func (t *Tx) CountPasskeys(userID uuid.UUID) (int, error) {
	var n int64
	err := t.db.Model(&passkeyRow{}).Where("user_id = ?", userID).Count(&n).Error
	return int(n), translate(err)
}

// DeletePasskey removes a user's passkey (ErrNotFound: none of that user with that id).
func (t *Tx) DeletePasskey(userID, id uuid.UUID) error {
	res := t.db.Where("id = ? AND user_id = ?", id, userID).Delete(&passkeyRow{})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// UsePasskey records a sign-in with a passkey: the new counter, only when the stored one is
// still what the check saw (false: another sign-in moved it meanwhile — refused as a replay).
func (t *Tx) UsePasskey(id uuid.UUID, seenCount, newCount uint32, now time.Time) (bool, error) {
	res := t.db.Model(&passkeyRow{}).Where("id = ? AND sign_count = ?", id, int64(seenCount)).
		Updates(map[string]any{"sign_count": int64(newCount), "last_used_at": now.UTC()})
	return res.RowsAffected == 1, translate(res.Error)
}

// CeremonyKind is what a WebAuthn ceremony does.
type CeremonyKind string

// The ceremonies.
const (
	CeremonyRegister CeremonyKind = "register"
	CeremonyLogin    CeremonyKind = "login"
)

// Ceremony is a WebAuthn ceremony begun: single-use, short-lived.
type Ceremony struct {
	ID        uuid.UUID
	Challenge string // base64url, as in clientDataJSON
	UserID    uuid.UUID
	Kind      CeremonyKind
	Session   string // go-webauthn's session data, JSON
	BoundTo   *uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

type ceremonyRow struct {
	ID        uuid.UUID `gorm:"primaryKey"`
	Challenge string
	UserID    uuid.UUID
	Kind      string
	Session   string
	BoundTo   *uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (ceremonyRow) TableName() string { return "webauthn_ceremonies" }

// InsertCeremony stores a ceremony begun and forgets the ones expired before forgetBefore.
func (t *Tx) InsertCeremony(c Ceremony, forgetBefore time.Time) error {
	if err := t.db.Where("expires_at < ?", forgetBefore.UTC()).Delete(&ceremonyRow{}).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Create(&ceremonyRow{ID: c.ID, Challenge: c.Challenge, UserID: c.UserID, Kind: string(c.Kind),
		Session: c.Session, BoundTo: c.BoundTo, CreatedAt: c.CreatedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC()}).Error)
}

// SpendCeremony reads the ceremony of a challenge and marks it used, in one step: ErrNotFound
// when there is none of that user and kind, or it was used already, or it expired before now.
func (t *Tx) SpendCeremony(challenge string, userID uuid.UUID, kind CeremonyKind, now time.Time) (Ceremony, error) {
	res := t.db.Model(&ceremonyRow{}).Where("challenge = ? AND user_id = ? AND kind = ? AND used_at IS NULL AND expires_at > ?",
		challenge, userID, string(kind), now.UTC()).Update("used_at", now.UTC())
	if res.Error != nil {
		return Ceremony{}, translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return Ceremony{}, ErrNotFound
	}
	var r ceremonyRow
	if err := t.db.Take(&r, "challenge = ?", challenge).Error; err != nil {
		return Ceremony{}, translate(err)
	}
	return Ceremony{ID: r.ID, Challenge: r.Challenge, UserID: r.UserID, Kind: CeremonyKind(r.Kind), Session: r.Session,
		BoundTo: r.BoundTo, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), UsedAt: passkeyUTC(r.UsedAt)}, nil
}

// OIDCLogin is a sign-in with the OIDC provider begun: the browser holds the state (a cookie and
// the provider's redirect), the database its hash, the nonce and the PKCE verifier.
type OIDCLogin struct {
	ID           uuid.UUID
	StateHash    string
	Nonce        string
	CodeVerifier string
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

type oidcLoginRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	StateHash    string
	Nonce        string
	CodeVerifier string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	UsedAt       *time.Time
}

func (oidcLoginRow) TableName() string { return "oidc_logins" }

// InsertOIDCLogin stores a sign-in begun and forgets the ones expired before forgetBefore.
func (t *Tx) InsertOIDCLogin(l OIDCLogin, forgetBefore time.Time) error {
	if err := t.db.Where("expires_at < ?", forgetBefore.UTC()).Delete(&oidcLoginRow{}).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Create(&oidcLoginRow{ID: l.ID, StateHash: l.StateHash, Nonce: l.Nonce, CodeVerifier: l.CodeVerifier,
		CreatedAt: l.CreatedAt.UTC(), ExpiresAt: l.ExpiresAt.UTC()}).Error)
}

// SpendOIDCLogin reads the sign-in of a state's hash and marks it used, in one step: ErrNotFound
// when there is none, it was used already, or it expired before now.
func (t *Tx) SpendOIDCLogin(stateHash string, now time.Time) (OIDCLogin, error) {
	res := t.db.Model(&oidcLoginRow{}).Where("state_hash = ? AND used_at IS NULL AND expires_at > ?", stateHash, now.UTC()).
		Update("used_at", now.UTC())
	if res.Error != nil {
		return OIDCLogin{}, translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return OIDCLogin{}, ErrNotFound
	}
	var r oidcLoginRow
	if err := t.db.Take(&r, "state_hash = ?", stateHash).Error; err != nil {
		return OIDCLogin{}, translate(err)
	}
	return OIDCLogin{ID: r.ID, StateHash: r.StateHash, Nonce: r.Nonce, CodeVerifier: r.CodeVerifier,
		CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}, nil
}
