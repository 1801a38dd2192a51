package store

import (
	"time"

	"github.com/google/uuid"
)

// StoredIdempotencyBodies returns up to limit unexpired keys holding a stored response whose
// bytes do not begin with prefix (answers written in clear by an earlier version, which the
// idempotency keeper seals in place), in key order after the key (after, afterKey): a caller
// pages through them with the last key it got.
func (t *Tx) StoredIdempotencyBodies(now time.Time, prefix []byte, after uuid.UUID, afterKey string, limit int) ([]IdempotencyRecord, error) {
	var rows []idempotencyRow
	err := t.db.Where("expires_at > ? AND status_code IS NOT NULL AND response_body IS NOT NULL AND substr(response_body, 1, ?) <> ?",
		now.UTC(), len(prefix), prefix).
		Where("(merchant_id > ? OR (merchant_id = ? AND key > ?))", after, after, afterKey).
		Order("merchant_id, key").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]IdempotencyRecord, len(rows))
	for i, r := range rows {
		out[i] = IdempotencyRecord{MerchantID: r.MerchantID, Key: r.Key, Operation: r.Operation, RequestHash: r.RequestHash,
			ResponseBody: r.ResponseBody, ExpiresAt: r.ExpiresAt}
		if r.StatusCode != nil {
			out[i].StatusCode = *r.StatusCode
		}
	}
	return out, nil
}

// ReplaceIdempotencyBody swaps a key's stored response for another, only while it is still old:
// false when another process changed it first (sealed it too, or the key expired and was reused).
func (t *Tx) ReplaceIdempotencyBody(merchantID uuid.UUID, key string, old, body []byte) (bool, error) {
	res := t.db.Model(&idempotencyRow{}).Where("merchant_id = ? AND key = ? AND response_body = ?", merchantID, key, old).
		Update("response_body", body)
	return res.RowsAffected == 1, translate(res.Error)
}
