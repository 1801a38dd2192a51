package metrics

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(b)
}

func TestObserveChains(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	require.NoError(t, err)
	head := time.Now().Add(-time.Hour)
	health := map[string]ChainHealth{
		"eip155:1337":  {Up: true, HeadTime: head},
		"eip155:84532": {Up: false}, // never answered: no lag series
	}
	require.NoError(t, m.ObserveChains(func() map[string]ChainHealth { return health }))
	out := scrape(t, m)
	assert.Contains(t, out, `paymentsd_chain_up{chain="eip155:1337"} 1`)
	assert.Contains(t, out, `paymentsd_chain_up{chain="eip155:84532"} 0`)
	assert.Regexp(t, `paymentsd_chain_head_lag_seconds\{chain="eip155:1337"\} 3600(\.\d+)?\n`, out)
	assert.NotContains(t, out, `paymentsd_chain_head_lag_seconds{chain="eip155:84532"}`)

	// Read at every scrape.
	health["eip155:84532"] = ChainHealth{Up: true, HeadTime: time.Now()}
	out = scrape(t, m)
	assert.Contains(t, out, `paymentsd_chain_up{chain="eip155:84532"} 1`)
	assert.Contains(t, out, `paymentsd_chain_head_lag_seconds{chain="eip155:84532"} `)

	var none *Metrics
	require.NoError(t, none.ObserveChains(nil))
}

func TestChainLagIsExact(t *testing.T) {
	head := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(&chainCollector{now: func() time.Time { return head.Add(7500 * time.Millisecond) },
		read: func() map[string]ChainHealth { return map[string]ChainHealth{"eip155:1": {Up: true, HeadTime: head}} }}))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
	}
	assert.Equal(t, map[string]float64{"paymentsd_chain_up": 1, "paymentsd_chain_head_lag_seconds": 7.5}, got)
}
