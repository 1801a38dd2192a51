package store

import (
	"time"

	"github.com/google/uuid"
)

// idemDone is the only state a key written now has: it is inserted and sealed inside the
// transaction of its effect, so no other transaction ever sees it unfinished. Rows of the
// earlier claim/complete design may still be "in_progress" until they expire (migration 00003).
const idemDone = "done"

// IdempotencyRecord is a stored Idempotency-Key.
type IdempotencyRecord struct {
	MerchantID   uuid.UUID
	Key          string
	Operation    string
	RequestHash  []byte
	StatusCode   int
	ResponseBody []byte
	ExpiresAt    time.Time
	// Unsealed marks a row of the earlier design left in progress by a crash: whether its effect
	// committed is unknown, so it must neither replay nor let the request run again.
	Unsealed bool
}

// ClaimIdempotencyKey inserts the key inside the effect's transaction, replacing an expired row
// of the same key. ErrConflict means an unexpired key exists: the unique primary key, not a
// process-local mutex, decides the race between servers (PostgreSQL makes the second insert
// wait for the first transaction and fail once it commits).
func (t *Tx) ClaimIdempotencyKey(r IdempotencyRecord, now time.Time) error {
	// UTC: SQLite compares stored times as text, so every time must be written and compared in one zone.
	if err := t.db.Where("merchant_id = ? AND key = ? AND expires_at <= ?", r.MerchantID, r.Key, now.UTC()).
		Delete(&idempotencyRow{}).Error; err != nil {
		return translate(err)
	}
	return translate(t.db.Create(&idempotencyRow{MerchantID: r.MerchantID, Key: r.Key, Operation: r.Operation,
		RequestHash: r.RequestHash, State: idemDone, CreatedAt: now, ExpiresAt: r.ExpiresAt}).Error)
}

// SealIdempotencyKey stores the outcome to replay, in the transaction that claimed the key.
func (t *Tx) SealIdempotencyKey(merchantID uuid.UUID, key string, status int, body []byte) error {
	return translate(t.db.Model(&idempotencyRow{}).Where("merchant_id = ? AND key = ?", merchantID, key).
		Updates(map[string]any{"status_code": status, "response_body": body}).Error)
}

// GetIdempotencyKey reads a stored key.
func (t *Tx) GetIdempotencyKey(merchantID uuid.UUID, key string) (IdempotencyRecord, error) {
	var row idempotencyRow
	if err := t.db.Take(&row, "merchant_id = ? AND key = ?", merchantID, key).Error; err != nil {
		return IdempotencyRecord{}, translate(err)
	}
	rec := IdempotencyRecord{MerchantID: row.MerchantID, Key: row.Key, Operation: row.Operation,
		RequestHash: row.RequestHash, ResponseBody: row.ResponseBody, ExpiresAt: row.ExpiresAt}
	if row.StatusCode != nil {
		rec.StatusCode = *row.StatusCode
	}
	rec.Unsealed = row.State != idemDone || row.StatusCode == nil
	return rec, nil
}

// PurgeExpiredIdempotencyKeys deletes every expired key with its stored response.
func (t *Tx) PurgeExpiredIdempotencyKeys(now time.Time) (int64, error) {
	res := t.db.Where("expires_at <= ?", now.UTC()).Delete(&idempotencyRow{})
	return res.RowsAffected, translate(res.Error)
}
