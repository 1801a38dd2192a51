package tests

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// When every chain a merchant could be quoted on is down, creating a payment is a documented 503
// (no_chain_available: retry later), not a 500, and creates nothing.
func TestEveryChainDownIsA503(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			e := newEnvWith(t, b, func(c *config.Config) {
				c.Chains.ServeUnwatched = false
				c.Chains.RPCURLs = map[int64][]string{84532: {"http://127.0.0.1:9"}} // refuses connections
				c.Chains.RPCTimeout = 500 * time.Millisecond
			})
			m := e.merchant(merchantOpts{mode: domain.ModeTest})
			res := e.do(http.MethodPost, "/v1/external/secretkey-auth/payments", m.SecretKey, payment(2500))
			require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s", res.Body)
			errBody := res.JSON(t)["error"].(map[string]any)
			assert.Equal(t, "no_chain_available", errBody["code"])
			assert.Equal(t, "api_error", errBody["type"])
			list := e.do(http.MethodGet, "/v1/external/secretkey-auth/payments", m.SecretKey, nil)
			require.Equal(t, http.StatusOK, list.Status)
			assert.Empty(t, list.JSON(t)["data"], "nothing created")
		})
	}
}
