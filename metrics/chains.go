package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ChainHealth is what the metrics show of one chain's health.
type ChainHealth struct {
	Up       bool      // up or degraded: quoted for new payments
	HeadTime time.Time // timestamp of the newest block seen; zero: none yet (no lag series)
}

// ObserveChains exports paymentsd_chain_up{chain} and paymentsd_chain_head_lag_seconds{chain},
// read from read at every scrape: health changes on every RPC call, so it is asked, not pushed.
func (m *Metrics) ObserveChains(read func() map[string]ChainHealth) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(&chainCollector{read: read, now: time.Now})
}

var (
	chainUpDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "chain", "up"),
		"1 while the chain answers (up or degraded: quoted for new payments), 0 when it is down or answers another chain id.",
		[]string{"chain"}, nil)
	chainLagDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "chain", "head_lag_seconds"),
		"Seconds between now and the timestamp of the newest block read from the chain.",
		[]string{"chain"}, nil)
)

type chainCollector struct {
	read func() map[string]ChainHealth
	now  func() time.Time
}

func (c *chainCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- chainUpDesc
	ch <- chainLagDesc
}

func (c *chainCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	for name, h := range c.read() {
		up := 0.0
		if h.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(chainUpDesc, prometheus.GaugeValue, up, name)
		if !h.HeadTime.IsZero() {
			ch <- prometheus.MustNewConstMetric(chainLagDesc, prometheus.GaugeValue, max(now.Sub(h.HeadTime), 0).Seconds(), name)
		}
	}
}
