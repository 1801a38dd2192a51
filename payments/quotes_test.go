package payments

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/domain"
)

func ptr[T any](v T) *T { return &v }

func TestCheapestDue(t *testing.T) {
	tests := []struct {
		name string
		dues []*int64
		want int64
	}{
		{"no quotes", nil, 0},
		{"deposit quotes carry no due", []*int64{nil, nil}, 0},
		{"single", []*int64{ptr[int64](1150)}, 1150},
		{"minimum wins regardless of order", []*int64{ptr[int64](1150), ptr[int64](1005), ptr[int64](1010)}, 1005},
		{"minimum last", []*int64{ptr[int64](1150), ptr[int64](1010), ptr[int64](1000)}, 1000},
		{"nil dues are skipped", []*int64{nil, ptr[int64](1010), nil, ptr[int64](1005)}, 1005},
		{"zero is a valid minimum", []*int64{ptr[int64](5), ptr[int64](0)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			qs := make([]domain.Quote, len(tc.dues))
			for i, d := range tc.dues {
				qs[i].AmountDueCents = d
			}
			assert.Equal(t, tc.want, cheapestDue(qs))
		})
	}
}

func TestEffectiveQuoteStatus(t *testing.T) {
	expiry := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		status domain.QuoteStatus
		now    time.Time
		want   domain.QuoteStatus
	}{
		{"active before expiry stays active", "active", expiry.Add(-time.Nanosecond), "active"},
		{"active at the expiry instant reads expired", "active", expiry, "expired"},
		{"active past expiry reads expired", "active", expiry.Add(time.Hour), "expired"},
		{"used past expiry stays used", "used", expiry.Add(time.Hour), "used"},
		{"used before expiry stays used", "used", expiry.Add(-time.Hour), "used"},
		{"expired stays expired", "expired", expiry.Add(-time.Hour), "expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := domain.Quote{Status: tc.status, ExpiresAt: expiry}
			assert.Equal(t, tc.want, effectiveQuoteStatus(q, tc.now))
			assert.Equal(t, tc.status, q.Status, "the stored quote is not mutated")
		})
	}
}
