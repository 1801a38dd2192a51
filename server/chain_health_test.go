package server

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/paymentsd/paymentsd/domain"
)

func TestOverlayHealthLeavesTheCatalogueAlone(t *testing.T) {
	catalogue := []domain.Chain{{ID: 1337, Enabled: true}, {ID: 84532, Enabled: true}, {ID: 1, Enabled: false}}
	health := map[int64]ChainHealth{
		1337:  {State: "degraded", Serving: true},
		84532: {State: "down"},
		1:     {State: "up", Serving: true}, // health never enables a chain the catalogue does not serve
	}
	got := overlayHealth(catalogue, health)
	assert.Equal(t, []bool{true, false, false}, []bool{got[0].Enabled, got[1].Enabled, got[2].Enabled})
	assert.True(t, catalogue[1].Enabled, "a runtime overlay: the catalogue is not written")
	assert.Equal(t, catalogue, overlayHealth(catalogue, nil))

	r := readyChains(health)
	assert.Equal(t, "down", r["eip155:84532"].State)
	assert.Len(t, r, 3)
}
