package store

import (
	"time"

	"github.com/google/uuid"
)

// Idempotency key states.
const (
	IdemInProgress = "in_progress"
	IdemDone       = "done"
)

// IdempotencyRecord is a stored Idempotency-Key.
type IdempotencyRecord struct {
	MerchantID   uuid.UUID
	Key          string
	Operation    string
	RequestHash  []byte
	State        string
	StatusCode   int
	ResponseBody []byte
	ExpiresAt    time.Time
}

// ClaimIdempotencyKey inserts an in-progress record. ErrConflict means the key exists: the
// unique primary key, not a process-local mutex, decides the race between servers.
func (t *Tx) ClaimIdempotencyKey(r IdempotencyRecord, now time.Time) error {
	return translate(t.db.Create(&idempotencyRow{MerchantID: r.MerchantID, Key: r.Key, Operation: r.Operation,
		RequestHash: r.RequestHash, State: IdemInProgress, CreatedAt: now, ExpiresAt: r.ExpiresAt}).Error)
}

// GetIdempotencyKey reads a stored key.
func (t *Tx) GetIdempotencyKey(merchantID uuid.UUID, key string) (IdempotencyRecord, error) {
	var row idempotencyRow
	if err := t.db.Take(&row, "merchant_id = ? AND key = ?", merchantID, key).Error; err != nil {
		return IdempotencyRecord{}, translate(err)
	}
	rec := IdempotencyRecord{MerchantID: row.MerchantID, Key: row.Key, Operation: row.Operation,
		RequestHash: row.RequestHash, State: row.State, ResponseBody: row.ResponseBody, ExpiresAt: row.ExpiresAt}
	if row.StatusCode != nil {
		rec.StatusCode = *row.StatusCode
	}
	return rec, nil
}

// CompleteIdempotencyKey stores the response to replay.
func (t *Tx) CompleteIdempotencyKey(merchantID uuid.UUID, key string, status int, body []byte) error {
	return translate(t.db.Model(&idempotencyRow{}).Where("merchant_id = ? AND key = ?", merchantID, key).
		Updates(map[string]any{"state": IdemDone, "status_code": status, "response_body": body}).Error)
}

// ReleaseIdempotencyKey forgets a key whose request failed unexpectedly, so a retry can run.
func (t *Tx) ReleaseIdempotencyKey(merchantID uuid.UUID, key string) error {
	return translate(t.db.Where("merchant_id = ? AND key = ?", merchantID, key).Delete(&idempotencyRow{}).Error)
}

// DeleteExpiredIdempotencyKey removes one expired key so it can be claimed afresh.
func (t *Tx) DeleteExpiredIdempotencyKey(merchantID uuid.UUID, key string, now time.Time) error {
	// UTC: SQLite compares stored times as text, so every time must be written and compared in one zone.
	return translate(t.db.Where("merchant_id = ? AND key = ? AND expires_at <= ?", merchantID, key, now.UTC()).
		Delete(&idempotencyRow{}).Error)
}

// PurgeExpiredIdempotencyKeys deletes every expired key with its stored response.
func (t *Tx) PurgeExpiredIdempotencyKeys(now time.Time) (int64, error) {
	res := t.db.Where("expires_at <= ?", now.UTC()).Delete(&idempotencyRow{})
	return res.RowsAffected, translate(res.Error)
}
