package server

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// paymentCache keeps the encoded answer of GET payment, so a payment polled by a checkout page
// or a dashboard is read with one small query (its version) instead of being loaded and encoded
// again. An entry answers only while everything the body shows is unchanged:
//   - the payment's version: every committed change bumps it (the lifecycle core);
//   - the merchant's display fields rendered into it (short name, logo; the display name and the
//     accent colour too, though today only the checkout payload shows them, so a branding
//     change can never leave a stale body behind once the payment body shows them);
//   - the clock: before the first still-active quote's expiresAt, when that quote starts to read
//     as expired.
//
// It holds at most max bodies (about 20 KB each) and forgets everything when full.
type paymentCache struct {
	max     int
	mu      sync.Mutex
	entries map[uuid.UUID]cachedPayment
}

type cachedPayment struct {
	version    int64
	merchant   string // the display fields the body carries
	validUntil time.Time
	body       []byte
}

func newPaymentCache(max int) *paymentCache {
	return &paymentCache{max: max, entries: make(map[uuid.UUID]cachedPayment)}
}

// merchantDisplay is what the body shows of the merchant.
func merchantDisplay(m domain.Merchant) string {
	opt := func(s *string) string {
		if s == nil {
			return "\x01" // absent differs from ""
		}
		return *s
	}
	return m.ShortName + "\x00" + opt(m.LogoURL) + "\x00" + opt(m.DisplayName) + "\x00" + opt(m.AccentColor)
}

func (c *paymentCache) get(id uuid.UUID, version int64, m domain.Merchant, now time.Time) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || e.version != version || e.merchant != merchantDisplay(m) || !now.Before(e.validUntil) {
		return nil, false
	}
	return e.body, true
}

// put stores the body rendered from p at now.
func (c *paymentCache) put(p domain.Payment, m domain.Merchant, now time.Time, body []byte) {
	if c == nil {
		return
	}
	until := now.Add(24 * time.Hour) // nothing time-dependent left: a day bounds the memory anyway
	for _, q := range p.Quotes {
		if q.Status == domain.QuoteActive && q.ExpiresAt.Before(until) {
			until = q.ExpiresAt
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[p.ID] = cachedPayment{version: p.Version, merchant: merchantDisplay(m), validUntil: until, body: body}
}
