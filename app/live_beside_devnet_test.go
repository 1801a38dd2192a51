package app

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
)

// A deployment serving mainnets that also reaches the devnet says so loudly at start; one that
// serves only test chains (the embedded default) does not.
func TestLiveChainsBesideTheDevnetWarn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		networks chains.Networks
		warn     bool
	}{{"mainnets and the devnet", chains.All, true}, {"testnets and the devnet", chains.Testnet, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := onchaintest.Config(filepath.Join(t.TempDir(), "p.db"), config.Chains{ServeUnwatched: true, Passive: true,
				RPCURLs: map[int64][]string{devnet.ChainID: {"http://127.0.0.1:9"}}}, time.Hour, time.Minute)
			cfg.Networks = tc.networks
			a, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			require.NoError(t, err)
			t.Cleanup(a.Close)
			assert.Equal(t, tc.warn, strings.Contains(logs.String(), "LIVE CHAINS AND THE DEVNET ARE BOTH SERVED"), logs.String())
		})
	}
}
