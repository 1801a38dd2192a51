package store

import (
	"fmt"
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

// ClaimIdempotencyKey inserts the key inside the effect's transaction, taking over an expired
// row of the same key, in one statement. ErrConflict means an unexpired key exists: the unique
// primary key, not a process-local mutex, decides the race between servers (PostgreSQL makes
// the second insert wait for the first transaction, then finds the conflict once it commits).
func (t *Tx) ClaimIdempotencyKey(r IdempotencyRecord, now time.Time) error {
	// UTC: SQLite compares stored times as text, so every time must be written and compared in one zone.
	res := t.db.Exec(`INSERT INTO idempotency_keys (merchant_id, key, operation, request_hash, state, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (merchant_id, key) DO UPDATE SET operation = excluded.operation, request_hash = excluded.request_hash,
			state = excluded.state, status_code = NULL, response_body = NULL, created_at = excluded.created_at,
			expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= ?`,
		r.MerchantID, r.Key, r.Operation, r.RequestHash, idemDone, now.UTC(), r.ExpiresAt.UTC(), now.UTC())
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("%w: idempotency key %q is in use", ErrConflict, r.Key)
	}
	return nil
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
