package tests

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// operatorCatalog adds an EVM test chain with its native coin and a stablecoin, and raises
// Base's confirmations: adding a chain is this file and an RPC URL, no code.
const operatorCatalog = `
chains:
  - chainId: eip155:7777
    name: Example Testnet
    nativeSymbol: ETH
    nativeDecimals: 18
    isTestnet: true
    confirmations: 4
    finalizedTag: true
    blockExplorerUrl: https://explorer.example
    tokens:
      - id: eip155:7777/slip44:60
        symbol: ETH
        contractAddress: "0x0000000000000000000000000000000000000000"
        decimals: 18
        type: volatile
        assetType: native
        marketApiId: ethereum
      - id: eip155:7777/erc20:0x1111111111111111111111111111111111111111
        symbol: USDC
        contractAddress: "0x1111111111111111111111111111111111111111"
        decimals: 6
        type: stablecoin
        assetType: erc20
        marketApiId: usd-coin
        eip3009: true
        eip2612: true
  - chainId: eip155:8453
    confirmations: 15
`

func writeCatalog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte(operatorCatalog), 0o600))
	return path
}

// TestOperatorCatalogAddsAChain: PAYMENTS_CATALOG_FILE adds a chain; after start the chain list
// shows it served, and a test-mode payment is quoted in its tokens.
func TestOperatorCatalogAddsAChain(t *testing.T) {
	path := writeCatalog(t)
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, b, func(c *config.Config) { c.Chains.CatalogFile = path })
			r := e.do(http.MethodGet, chainsPath, "", nil)
			require.Equal(t, 200, r.Status)
			body := r.JSON(t)
			data := body["data"].([]any)
			require.Len(t, data, 12, "the embedded eleven and the operator's")
			assert.Equal(t, map[string]any{"chainId": "eip155:7777", "name": "Example Testnet", "nativeSymbol": "ETH",
				"nativeDecimals": 18.0, "isEnabled": true, "isTestnet": true}, data[5], "ordered by chain id: after 1337, before 8453")

			base, ok := e.app.Catalog.Chain(8453)
			require.True(t, ok)
			assert.Equal(t, int32(15), base.RequiredConfirmations, "an override of one field")
			assert.Equal(t, "Base", base.Name, "the other fields kept")
			ex, _ := e.app.Catalog.Chain(7777)
			assert.True(t, ex.FinalizedTag)
			assert.Equal(t, "https://explorer.example", ex.BlockExplorerURL)

			m := e.merchant(merchantOpts{mode: domain.ModeTest})
			tokens, _ := quotedTokens(t, e.createPayment(m.SecretKey, payment(2500))["payment"].(map[string]any))
			assert.Contains(t, tokens, "eip155:7777/slip44:60")
			assert.Contains(t, tokens, "eip155:7777/erc20:0x1111111111111111111111111111111111111111")
		})
	}
}

// TestOperatorCatalogChainServedOnlyWithRPCURL: without serving unwatched chains (production), the
// new chain is listed but not served until it has an RPC URL. The passive process (an operator
// command's) counts a configured URL without dialling it: no node answers for chain 7777 here.
func TestOperatorCatalogChainServedOnlyWithRPCURL(t *testing.T) {
	path := writeCatalog(t)
	served := func(edit func(*config.Config)) bool {
		e := newEnvWith(t, "sqlite", func(c *config.Config) {
			c.Chains.CatalogFile = path
			c.Chains.ServeUnwatched = false
			c.Chains.Passive = true
			edit(c)
		})
		ch, ok := e.app.Catalog.Chain(7777)
		require.True(t, ok)
		_, quoted := e.app.Catalog.AcceptedToken(7777, "USDC")
		assert.Equal(t, ch.Enabled, quoted)
		return ch.Enabled
	}
	assert.False(t, served(func(*config.Config) {}), "no RPC URL: listed, not served")
	assert.True(t, served(func(c *config.Config) {
		c.Chains.RPCURLs = map[int64][]string{7777: {"http://127.0.0.1:9"}}
	}), "an RPC URL for it: served")
}

// TestOperatorCatalogBadFileRefusesToStart: a file with a mistake stops the start with the
// file's name and the problem, before the database is touched.
func TestOperatorCatalogBadFileRefusesToStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte("chains:\n  - chainId: eip155:7777\n    confirmation: 3\n"), 0o600))
	cfg := config.Config{DatabaseURL: filepath.Join(t.TempDir(), "never.db"), Chains: config.Chains{CatalogFile: path}}
	_, err := app.Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.Error(t, err)
	assert.ErrorContains(t, err, path)
	assert.ErrorContains(t, err, "field confirmation not found")
	_, statErr := os.Stat(cfg.DatabaseURL)
	assert.True(t, os.IsNotExist(statErr), "no database created")
}
