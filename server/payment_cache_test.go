package server

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/domain"
)

func TestPaymentCacheAnswersOnlyWhileNothingShownChanged(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	logo := "https://acme.example/logo.png"
	m := domain.Merchant{ID: uuid.New(), ShortName: "Acme", LogoURL: &logo}
	p := domain.Payment{ID: uuid.New(), Version: 3, Quotes: []domain.Quote{
		{Status: domain.QuoteActive, ExpiresAt: now.Add(15 * time.Minute)},
		{Status: domain.QuoteActive, ExpiresAt: now.Add(10 * time.Minute)},
		{Status: domain.QuoteExpired, ExpiresAt: now.Add(-time.Minute)},
	}}
	c := newPaymentCache(2)
	c.put(p, m, now, []byte("body-v3"))

	body, ok := c.get(p.ID, 3, m, now.Add(10*time.Minute-time.Nanosecond))
	assert.True(t, ok)
	assert.Equal(t, "body-v3", string(body))
	_, ok = c.get(p.ID, 3, m, now.Add(10*time.Minute))
	assert.False(t, ok, "the first active quote reads expired from its expiresAt on")
	_, ok = c.get(p.ID, 4, m, now)
	assert.False(t, ok, "a newer version")
	renamed := m
	renamed.ShortName = "Acme Coffee"
	_, ok = c.get(p.ID, 3, renamed, now)
	assert.False(t, ok, "the merchant's name shown in the body changed")
	_, ok = c.get(uuid.New(), 3, m, now)
	assert.False(t, ok, "another payment")
	for name, change := range map[string]func(*domain.Merchant){
		"display name set":   func(m *domain.Merchant) { s := "Acme Coffee"; m.DisplayName = &s },
		"display name empty": func(m *domain.Merchant) { s := ""; m.DisplayName = &s },
		"accent set":         func(m *domain.Merchant) { s := "#0a7cff"; m.AccentColor = &s },
		"logo removed":       func(m *domain.Merchant) { m.LogoURL = nil },
	} {
		branded := m
		change(&branded)
		_, ok = c.get(p.ID, 3, branded, now)
		assert.False(t, ok, name)
	}

	done := domain.Payment{ID: uuid.New(), Version: 7, Quotes: []domain.Quote{{Status: domain.QuoteUsed, ExpiresAt: now}}}
	c.put(done, m, now, []byte("done"))
	_, ok = c.get(done.ID, 7, m, now.Add(23*time.Hour))
	assert.True(t, ok, "nothing time-dependent: kept (a day at most)")
	c.put(domain.Payment{ID: uuid.New(), Version: 1}, m, now, []byte("third"))
	_, ok = c.get(done.ID, 7, m, now)
	assert.False(t, ok, "full: forgotten")

	var nilCache *paymentCache
	_, ok = nilCache.get(p.ID, 3, m, now)
	assert.False(t, ok)
	nilCache.put(p, m, now, nil)
}
