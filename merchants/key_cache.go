package merchants

import (
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/domain"
)

// keyCache remembers, for a short TTL, which merchant a secret key's hash names, so the hot
// paths do not look the key up on every request. Correctness bound: a key revoked by any
// process (the CLI, another serve) stops working here within the TTL; a revocation made by
// this process takes effect at once (RevokeKeys flushes). Only found keys are cached, so
// unknown keys cannot fill it, and it is flushed whole when it reaches its size bound.
type keyCache struct {
	ttl     time.Duration
	max     int
	mu      sync.Mutex
	entries map[[32]byte]cachedKey
}

type cachedKey struct {
	merchant domain.Merchant
	until    time.Time
}

func newKeyCache(ttl time.Duration, max int) *keyCache {
	return &keyCache{ttl: ttl, max: max, entries: make(map[[32]byte]cachedKey)}
}

func (c *keyCache) get(hash [32]byte, now time.Time) (domain.Merchant, bool) {
	if c == nil || c.ttl <= 0 {
		return domain.Merchant{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || !now.Before(e.until) {
		return domain.Merchant{}, false
	}
	return e.merchant, true
}

func (c *keyCache) put(hash [32]byte, m domain.Merchant, now time.Time) {
	if c == nil || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[hash] = cachedKey{merchant: m, until: now.Add(c.ttl)}
}

func (c *keyCache) flush() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}
