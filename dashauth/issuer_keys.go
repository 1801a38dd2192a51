package dashauth

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"time"
)

// Timings of the built-in issuer's cache of its published keys. Keys are written by whichever
// process rotates them (`paymentsd tokens rotate-key` is a process of its own), so a verifier
// learns of a new key by reading the database again.
const (
	// KeyCacheTTL is how long the published keys are used without reading them again.
	KeyCacheTTL = 30 * time.Second
	// KeyReloadInterval bounds the reads tokens with an unknown kid trigger: a token whose kid
	// is not in the cache re-reads the keys at once unless a read started within this interval
	// (it is then refused at once, not held). A flood of made-up kids thus costs a process at
	// most one read per interval, and a key rotated by another process verifies on first use
	// unless a read happened in the second before.
	KeyReloadInterval = time.Second
)

// errUnknownKID: a token names a key that is not published (or not yet re-read, see KeyReloadInterval).
var errUnknownKID = errors.New("unknown kid")

// JWK is one published public key.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// JWKS is the published key set.
func (i *Issuer) JWKS(ctx context.Context) (map[string][]JWK, error) {
	keys, err := i.Store.Read(ctx).SigningKeys(i.Now().Add(-MaxTTL))
	if err != nil {
		return nil, err
	}
	out := []JWK{}
	for _, k := range keys {
		out = append(out, JWK{Kty: "OKP", Crv: "Ed25519", X: k.PublicKey, Kid: k.KID, Alg: "EdDSA", Use: "sig"})
	}
	return map[string][]JWK{"keys": out}, nil
}

// publicKey is the published key kid. The keys are cached for KeyCacheTTL; an unknown kid re-reads
// them at once when mayReload (a token claiming this issuer) and no read started within
// KeyReloadInterval. An unknown kid is errUnknownKID; any other error is the database's.
func (i *Issuer) publicKey(ctx context.Context, kid string, mayReload bool) (ed25519.PublicKey, error) {
	if kid == "" {
		return nil, errUnknownKID // every key of this issuer has one
	}
	i.mu.Lock()
	keys, loaded, tried, reading := i.keys, i.loaded, i.tried, i.reading
	i.mu.Unlock()
	fresh := keys != nil && time.Since(loaded) < KeyCacheTTL
	if fresh {
		if k, ok := keys[kid]; ok {
			return k, nil
		}
		// A read in flight is joined: it may be the one that finds this kid.
		if !mayReload || (!reading && time.Since(tried) < KeyReloadInterval) {
			return nil, errUnknownKID
		}
	}
	read, err := i.readKeys(ctx)
	if err != nil {
		if k, ok := keys[kid]; ok {
			return k, nil // the database is unreachable: a key still cached stays good
		}
		return nil, err
	}
	if k, ok := read[kid]; ok {
		return k, nil
	}
	return nil, errUnknownKID
}

// readKeys reads the published keys, once for all concurrent callers; a caller arriving just
// after a read (within KeyReloadInterval, the cache fresh) gets its outcome without another.
func (i *Issuer) readKeys(ctx context.Context) (map[string]ed25519.PublicKey, error) {
	ch := i.reload.DoChan("keys", func() (any, error) {
		i.mu.Lock()
		if i.keys != nil && time.Since(i.loaded) < KeyCacheTTL && time.Since(i.tried) < KeyReloadInterval {
			keys := i.keys
			i.mu.Unlock()
			return keys, nil
		}
		start, gen := time.Now(), i.gen
		i.tried, i.reading = start, true
		i.mu.Unlock()
		defer func() {
			i.mu.Lock()
			i.reading = false
			i.mu.Unlock()
		}()

		i.reads.Add(1)
		// A request's cancellation must not fail the read the others wait for; a database that
		// does not answer must not hold them all for minutes either.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyReadTimeout)
		defer cancel()
		keys, err := i.Store.Read(rctx).SigningKeys(i.Now().Add(-MaxTTL))
		if err != nil {
			return nil, err
		}
		m := make(map[string]ed25519.PublicKey, len(keys))
		for _, k := range keys {
			b, err := base64.RawURLEncoding.DecodeString(k.PublicKey)
			if err == nil && len(b) == ed25519.PublicKeySize {
				m[k.KID] = ed25519.PublicKey(b)
			}
		}
		i.mu.Lock()
		if i.gen == gen { // else a rotation here made the keys read stale
			i.keys, i.loaded = m, start
		}
		i.mu.Unlock()
		return m, nil
	})
	select {
	case <-ctx.Done(): // this request gave up: it stops waiting, the read goes on for the others
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(map[string]ed25519.PublicKey), nil
	}
}

// keyReadTimeout bounds one read of the signing keys.
const keyReadTimeout = 5 * time.Second
