package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

// Sealer encrypts the stored answers: a replayed payment creation carries the payment's secret,
// which must not sit in the database in clear for the key's lifetime. It is the deployment's
// secrets sealer (PAYMENTS_SECRETS_KEY, webhooks.AESSealer), shared with webhook secrets.
type Sealer interface {
	Seal(plain []byte) (string, error)
	Open(sealed string) ([]byte, error)
}

// ErrReplayUnreadable is a committed key whose stored answer does not open: the secrets key
// changed since it was written (or, without PAYMENTS_SECRETS_KEY, another process or an earlier
// run of this one wrote it under its own key). The request took effect and must not run again,
// so it is a kind of ErrKeyInUse (409): the client looks the result up, or uses a new key after
// checking whether it took effect.
var ErrReplayUnreadable error = unreadableError{}

type unreadableError struct{}

func (unreadableError) Error() string {
	return "the first request with this Idempotency-Key took effect, but its stored response cannot be read " +
		"with this server's secrets key (PAYMENTS_SECRETS_KEY changed?)"
}

// Is makes it an ErrKeyInUse to every caller that refuses those.
func (unreadableError) Is(target error) bool { return target == ErrKeyInUse }

// sealedPrefix marks a stored answer as sealed. An answer without it was written in clear by an
// earlier version (a JSON body never begins with it).
const sealedPrefix = "sealed:"

// sealer is the configured Sealer or, without one, a key of this process's own, made once: an
// answer is never stored in clear, at the price of replays that only this process, until it
// stops, can read.
func (k *Keeper) sealer() (Sealer, error) {
	if k.Sealer != nil {
		return k.Sealer, nil
	}
	k.localOnce.Do(func() {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			k.localErr = err
			return
		}
		k.local, k.localErr = webhooks.NewAESSealer(key)
	})
	if k.localErr != nil {
		return nil, k.localErr
	}
	return k.local, nil
}

// binding ties a sealed answer to its merchant and request: an answer copied into another
// merchant's row does not open there. (Not to the key's text or the operation's name, which
// migrations may rewrite — migration 12 scopes keys per mode — and Lookup compares anyway.)
func binding(merchantID uuid.UUID, hash []byte) []byte {
	h := sha256.New()
	h.Write([]byte("paymentsd idempotency answer v1\x00"))
	h.Write(merchantID[:])
	h.Write(hash)
	return h.Sum(nil)
}

// seal encrypts the answer stored for r.
func (k *Keeper) seal(r Request, body []byte) ([]byte, error) {
	s, err := k.sealer()
	if err != nil {
		return nil, err
	}
	plain := append(binding(r.MerchantID, r.Hash), body...)
	sealed, err := s.Seal(plain)
	if err != nil {
		return nil, fmt.Errorf("idempotency: seal the stored response: %w", err)
	}
	return []byte(sealedPrefix + sealed), nil
}

// errClear is an answer stored in clear by an earlier version.
var errClear = errors.New("idempotency: the stored response was written in clear")

// open decrypts the answer stored for r; errClear when it was stored in clear.
func (k *Keeper) open(r Request, stored []byte) ([]byte, error) {
	text, ok := strings.CutPrefix(string(stored), sealedPrefix)
	if !ok {
		return nil, errClear
	}
	s, err := k.sealer()
	if err != nil {
		return nil, err
	}
	plain, err := s.Open(text)
	if err != nil {
		return nil, err
	}
	want := binding(r.MerchantID, r.Hash)
	if len(plain) < len(want) || !bytes.Equal(plain[:len(want)], want) {
		return nil, errors.New("idempotency: the stored response belongs to another merchant or request")
	}
	return plain[len(want):], nil
}

// SealClearAnswers seals in place every unexpired answer an earlier version stored in clear (a
// payment creation's carries the payment secret); it returns how many it sealed. Several
// processes may run it at once: each row is swapped only while it still holds the clear answer.
func (k *Keeper) SealClearAnswers(ctx context.Context) (int, error) {
	var (
		after    uuid.UUID
		afterKey string
		sealed   int
	)
	for {
		var batch []store.IdempotencyRecord
		err := k.Store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			batch, err = tx.StoredIdempotencyBodies(k.Now(), []byte(sealedPrefix), after, afterKey, 200)
			if err != nil {
				return err
			}
			for _, rec := range batch {
				body, err := k.seal(Request{MerchantID: rec.MerchantID, Key: rec.Key, Operation: rec.Operation, Hash: rec.RequestHash},
					rec.ResponseBody)
				if err != nil {
					return err
				}
				ok, err := tx.ReplaceIdempotencyBody(rec.MerchantID, rec.Key, rec.ResponseBody, body)
				if err != nil {
					return err
				}
				if ok {
					sealed++
				}
			}
			return nil
		})
		if err != nil {
			return sealed, err
		}
		if len(batch) < 200 {
			return sealed, nil
		}
		last := batch[len(batch)-1]
		after, afterKey = last.MerchantID, last.Key
	}
}
