// Package idempotency owns Idempotency-Key semantics for every caller that can be
// retried: HTTP requests, operator commands and background jobs.
//
// The key is written in the same database transaction as the effect it guards: a Guard claims
// the key at the start of that transaction and seals it with the rendered outcome at the end, so
// the key, the request hash, the outcome and the effect commit together or not at all. There is
// no "in progress" state that could outlive a crashed request, and an effect that committed
// always replays. Concurrent duplicates are decided by the key's unique index: the second
// insert waits for the first transaction and fails once it commits, which rolls the duplicate's
// effect back; the caller then replays the winner's outcome.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
)

var (
	// ErrKeyReused is a key sent again with a different request (409).
	ErrKeyReused = errors.New("this Idempotency-Key was used with a different request")
	// ErrKeyInUse is a key whose first request's outcome cannot be shown (409): rows left in
	// progress by the earlier claim/complete design, until they expire, and stored answers that
	// do not open (ErrReplayUnreadable).
	ErrKeyInUse = errors.New("the first request with this Idempotency-Key did not finish; its outcome is unknown")
	// ErrDuplicate reports that a concurrent request with the same key committed first: this
	// transaction was rolled back, and the caller replays the stored outcome.
	ErrDuplicate = errors.New("idempotency: a concurrent request with this key committed first")
)

// Keeper looks keys up and builds guards. The answers it stores are sealed (seal.go).
type Keeper struct {
	Store *store.Store
	TTL   time.Duration
	Now   func() time.Time
	// Sealer encrypts stored answers: the deployment's secrets key. Nil: a key of this process's
	// own (see sealer).
	Sealer Sealer
	Log    *slog.Logger // nil: nothing logged

	localOnce sync.Once
	local     Sealer
	localErr  error
}

// Request is one retryable request: who sent it (keys are scoped per merchant), its key, the
// operation and the hash of its canonical input.
type Request struct {
	MerchantID uuid.UUID
	Key        string
	Operation  string
	Hash       []byte
}

// Outcome is a stored answer: a status and the exact bytes that were sent.
type Outcome struct {
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

// Lookup returns the stored outcome of a committed, unexpired key with the same request hash;
// ErrKeyReused when the key was used for a different request; (nil, nil) when the key is new.
func (k *Keeper) Lookup(ctx context.Context, r Request) (*Outcome, error) {
	rec, err := k.Store.Read(ctx).GetIdempotencyKey(r.MerchantID, r.Key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !rec.ExpiresAt.After(k.Now()) {
		return nil, nil // expired: the key may be used afresh (Claim deletes the old row)
	}
	if !bytes.Equal(rec.RequestHash, r.Hash) || rec.Operation != r.Operation {
		return nil, ErrKeyReused
	}
	if rec.Unsealed {
		return nil, ErrKeyInUse
	}
	body, err := k.open(r, rec.ResponseBody)
	switch {
	case errors.Is(err, errClear):
		// Written by an earlier version, before answers were sealed: replayed as it is (the
		// sweeper seals such rows; they expire within the TTL anyway).
		body = rec.ResponseBody
	case err != nil:
		if k.Log != nil {
			k.Log.WarnContext(ctx, "an idempotent replay cannot be opened: answered 409 idempotency_key_in_use "+
				"(PAYMENTS_SECRETS_KEY changed, or none is set and another process wrote it)", "key", r.Key, "err", err)
		}
		return nil, ErrReplayUnreadable
	}
	return &Outcome{Status: rec.StatusCode, Body: body}, nil
}

// Guard binds a Request to the transaction of its effect. A nil *Guard guards nothing, so
// callers without a key pass nil.
type Guard struct {
	keeper *Keeper
	req    Request
}

// Guard returns the guard of r.
func (k *Keeper) Guard(r Request) *Guard { return &Guard{keeper: k, req: r} }

// Request returns the guarded request.
func (g *Guard) Request() Request { return g.req }

// Claim inserts the key inside tx, before the effect. It blocks while a concurrent transaction
// holds the same key and returns ErrDuplicate once that one has committed.
func (g *Guard) Claim(tx *store.Tx) error {
	if g == nil {
		return nil
	}
	now := g.keeper.Now()
	err := tx.ClaimIdempotencyKey(store.IdempotencyRecord{MerchantID: g.req.MerchantID, Key: g.req.Key,
		Operation: g.req.Operation, RequestHash: g.req.Hash, ExpiresAt: now.Add(g.keeper.TTL)}, now)
	if errors.Is(err, store.ErrConflict) {
		return ErrDuplicate
	}
	return err
}

// Seal stores the outcome inside tx, after the effect: both commit together.
func (g *Guard) Seal(tx *store.Tx, o Outcome) error {
	if g == nil {
		return nil
	}
	body, err := g.keeper.seal(g.req, o.Body)
	if err != nil {
		return err
	}
	return tx.SealIdempotencyKey(g.req.MerchantID, g.req.Key, o.Status, body)
}

// RecordRefusal stores an answer that took no effect (a domain refusal such as
// insufficient_balance), in a transaction of its own, so a retry gets the same answer. When a
// concurrent request with the key committed first, its outcome is returned with replayed true.
func (k *Keeper) RecordRefusal(ctx context.Context, r Request, o Outcome) (out Outcome, replayed bool, err error) {
	g := k.Guard(r)
	err = k.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := g.Claim(tx); err != nil {
			return err
		}
		return g.Seal(tx, o)
	})
	if errors.Is(err, ErrDuplicate) {
		out, err = k.Replay(ctx, r)
		return out, true, err
	}
	return o, false, err
}

// Replay reads the outcome a concurrent request committed (after ErrDuplicate).
func (k *Keeper) Replay(ctx context.Context, r Request) (Outcome, error) {
	out, err := k.Lookup(ctx, r)
	if err != nil {
		return Outcome{}, err
	}
	if out == nil {
		return Outcome{}, fmt.Errorf("idempotency: key %q reported committed but not found", r.Key)
	}
	return *out, nil
}

// Step runs a render-and-seal inside an effect's transaction: Begin claims the key before the
// effect, End renders the result and seals it. Services call both; a nil *Step does nothing.
type Step[T any] struct {
	guard  *Guard
	render func(T) (Outcome, error)
	out    Outcome
}

// NewStep binds a guard (nil: no key) and the renderer of the operation's result.
func NewStep[T any](g *Guard, render func(T) (Outcome, error)) *Step[T] {
	return &Step[T]{guard: g, render: render}
}

// Begin claims the key (see Guard.Claim).
func (s *Step[T]) Begin(tx *store.Tx) error {
	if s == nil {
		return nil
	}
	return s.guard.Claim(tx)
}

// End renders the result and seals it with the key (see Guard.Seal).
func (s *Step[T]) End(tx *store.Tx, v T) error {
	if s == nil {
		return nil
	}
	out, err := s.render(v)
	if err != nil {
		return err
	}
	s.out = out
	return s.guard.Seal(tx, out)
}

// Outcome is what End rendered: the bytes to send, identical to what a replay will send.
func (s *Step[T]) Outcome() Outcome { return s.out }

// SweepLease is the lease the sweep's loop holds: one process of a deployment purges at a time.
const SweepLease = "idempotency-keys"

// SweepLoop is the sweep as a background loop (internal/worker, which holds its lease), a pass
// every interval, so stored responses do not pile up.
func (k *Keeper) SweepLoop(interval time.Duration, log *slog.Logger) worker.Loop {
	return worker.Loop{Name: "idempotency-keys", Lease: SweepLease, Interval: interval,
		Round: func(ctx context.Context) (bool, error) { return false, k.SweepOnce(ctx, log) }}
}

// SweepOnce seals the answers earlier versions stored in clear (an older process may still write
// some during a rolling upgrade) and deletes expired keys.
func (k *Keeper) SweepOnce(ctx context.Context, log *slog.Logger) error {
	n, err := k.SealClearAnswers(ctx)
	if err != nil {
		return fmt.Errorf("seal idempotent answers stored in clear: %w", err)
	}
	if n > 0 {
		log.Info("sealed idempotent answers an earlier version stored in clear", "count", n)
	}
	var purged int64
	err = k.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		purged, err = tx.PurgeExpiredIdempotencyKeys(k.Now())
		return err
	})
	if err != nil {
		return fmt.Errorf("sweep idempotency keys: %w", err)
	}
	if purged > 0 {
		log.Info("swept expired idempotency keys", "count", purged)
	}
	return nil
}

type guardKey struct{}

// WithGuard carries a request's guard to the handler that runs its effect.
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// GuardFrom returns the guard put by WithGuard, or nil.
func GuardFrom(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	return g
}
