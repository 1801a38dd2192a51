// Package idempotency owns Idempotency-Key semantics (DESIGN §4): a key is claimed per merchant
// with a hash of the canonical request; a replay with the same body returns the stored response,
// a different body or a request still running is a conflict. The database's unique key decides
// races, so several server processes agree.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/store"
)

// Conflicts, mapped to 409 by the HTTP layer.
var (
	ErrKeyInUse  = errors.New("a request with this Idempotency-Key is still in progress")
	ErrKeyReused = errors.New("this Idempotency-Key was used with a different request")
)

// Keeper claims, completes and releases keys.
type Keeper struct {
	Store *store.Store
	TTL   time.Duration
	Now   func() time.Time
}

// Replay is a stored response to send again.
type Replay struct {
	Status int
	Body   []byte
}

// RequestHash is the SHA-256 of the operation and the canonical JSON of the body (object keys
// sorted, insignificant whitespace dropped), so reformatting a retry does not make it "different".
func RequestHash(operation string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(operation))
	h.Write([]byte{0})
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil {
		if canon, err := json.Marshal(v); err == nil {
			body = canon
		}
	}
	h.Write(body)
	return h.Sum(nil)
}

// Claim takes the key for this request. It returns a Replay when the same request already
// completed, ErrKeyInUse / ErrKeyReused on conflict, or (nil, nil) when the caller now owns the
// key and must Complete or Release it.
func (k *Keeper) Claim(ctx context.Context, merchantID uuid.UUID, key, operation string, hash []byte) (*Replay, error) {
	now := k.Now()
	rec := store.IdempotencyRecord{MerchantID: merchantID, Key: key, Operation: operation, RequestHash: hash, ExpiresAt: now.Add(k.TTL)}
	for attempt := 0; attempt < 2; attempt++ {
		err := k.Store.InTx(ctx, func(tx *store.Tx) error { return tx.ClaimIdempotencyKey(rec, now) })
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, err
		}
		existing, err := k.Store.Read(ctx).GetIdempotencyKey(merchantID, key)
		if errors.Is(err, store.ErrNotFound) {
			continue // released between our insert and read: try again
		}
		if err != nil {
			return nil, err
		}
		if !existing.ExpiresAt.After(now) {
			if err := k.Store.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteExpiredIdempotencyKey(merchantID, key, now) }); err != nil {
				return nil, err
			}
			continue
		}
		if !bytes.Equal(existing.RequestHash, hash) {
			return nil, ErrKeyReused
		}
		if existing.State != store.IdemDone {
			return nil, ErrKeyInUse
		}
		return &Replay{Status: existing.StatusCode, Body: existing.ResponseBody}, nil
	}
	return nil, ErrKeyInUse
}

// Complete stores the response for replays.
func (k *Keeper) Complete(ctx context.Context, merchantID uuid.UUID, key string, status int, body []byte) error {
	return k.Store.InTx(ctx, func(tx *store.Tx) error { return tx.CompleteIdempotencyKey(merchantID, key, status, body) })
}

// Release forgets a key whose request failed unexpectedly, so the client's retry runs afresh.
func (k *Keeper) Release(ctx context.Context, merchantID uuid.UUID, key string) error {
	return k.Store.InTx(ctx, func(tx *store.Tx) error { return tx.ReleaseIdempotencyKey(merchantID, key) })
}

// Sweep deletes expired keys every interval until ctx ends, so stored responses do not pile up.
func (k *Keeper) Sweep(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			var n int64
			err := k.Store.InTx(ctx, func(tx *store.Tx) error {
				var err error
				n, err = tx.PurgeExpiredIdempotencyKeys(k.Now())
				return err
			})
			if err != nil && ctx.Err() == nil {
				log.Error("sweep idempotency keys", "err", err)
			} else if n > 0 {
				log.Info("swept expired idempotency keys", "count", n)
			}
		}
	}
}
