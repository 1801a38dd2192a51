package store

import "time"

// SigningKey is one of the dashboard issuer's Ed25519 keys.
type SigningKey struct {
	KID           string
	PrivateSealed string
	PublicKey     string // base64url, 32 bytes
	CreatedAt     time.Time
	RetiredAt     *time.Time
}

type signingKeyRow struct {
	KID           string `gorm:"primaryKey;column:kid"`
	PrivateSealed string
	PublicKey     string
	CreatedAt     time.Time
	RetiredAt     *time.Time
}

func (signingKeyRow) TableName() string { return "signing_keys" }

// InsertSigningKey stores a new key and retires the ones before it (they stay published).
func (t *Tx) InsertSigningKey(k SigningKey) error {
	if err := t.db.Model(&signingKeyRow{}).Where("retired_at IS NULL").Update("retired_at", k.CreatedAt.UTC()).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Create(&signingKeyRow{KID: k.KID, PrivateSealed: k.PrivateSealed, PublicKey: k.PublicKey,
		CreatedAt: k.CreatedAt.UTC()}).Error)
}

// SigningKeys lists the keys still published (not retired, or retired after since), newest first.
func (t *Tx) SigningKeys(since time.Time) ([]SigningKey, error) {
	var rows []signingKeyRow
	if err := t.db.Where("retired_at IS NULL OR retired_at > ?", since.UTC()).Order("created_at DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]SigningKey, len(rows))
	for i, r := range rows {
		out[i] = SigningKey{KID: r.KID, PrivateSealed: r.PrivateSealed, PublicKey: r.PublicKey, CreatedAt: r.CreatedAt.UTC(), RetiredAt: r.RetiredAt}
	}
	return out, nil
}
