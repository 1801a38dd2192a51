package server

import (
	"time"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
)

// ChainHealth is one chain's health as this process's RPC calls saw it: shown by GET /readyz,
// and laid over the catalogue by the chain list (a chain that is not serving reads
// isEnabled: false until it answers again; the catalogue itself is not changed).
type ChainHealth struct {
	State          string     `json:"state"`   // up, degraded, down or wrong_chain_id
	Serving        bool       `json:"serving"` // quoted for new payments (up or degraded)
	LastSuccessAt  *time.Time `json:"lastSuccessAt,omitempty"`
	HeadBlock      *int64     `json:"headBlock,omitempty"`
	HeadLagSeconds *int64     `json:"headLagSeconds,omitempty"` // now − the newest block's timestamp
}

// readyChains renders the chains' health for /readyz, by CAIP-2 id.
func readyChains(health map[int64]ChainHealth) map[string]ChainHealth {
	out := make(map[string]ChainHealth, len(health))
	for id, h := range health {
		out[chains.CAIP2(id)] = h
	}
	return out
}

// overlayHealth copies list with isEnabled false on the chains that are not serving now.
func overlayHealth(list []domain.Chain, health map[int64]ChainHealth) []domain.Chain {
	if len(health) == 0 {
		return list
	}
	out := make([]domain.Chain, len(list))
	copy(out, list) // list is the catalogue's own slice: never written
	for i, c := range out {
		if h, ok := health[c.ID]; ok && !h.Serving {
			out[i].Enabled = false
		}
	}
	return out
}
