package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/catalog"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

const (
	baseUSDT   = "eip155:8453/erc20:0xfde4c96c8593536e31f229ea8f37b2ada2699bb2"
	polygonPOL = "eip155:137/slip44:60"
	extraChain = `
chains:
  - chainId: eip155:7777
    name: Example Chain
    nativeSymbol: EXC
    nativeDecimals: 18
    isTestnet: true
    confirmations: 5
    tokens:
      - id: eip155:7777/slip44:60
        symbol: EXC
        contractAddress: "0x0000000000000000000000000000000000000000"
        decimals: 18
        type: volatile
        assetType: native
        marketApiId: ethereum
`
)

// TestSyncCatalog: the stored catalogue follows the file at each start — rows added, changed
// ones updated, removed ones kept but out of service, nothing written when nothing changed.
func TestSyncCatalog(t *testing.T) {
	embedded, err := catalog.Embedded()
	require.NoError(t, err)
	withExtra, err := catalog.Merge(embedded, []byte(extraChain+`
  - chainId: eip155:8453
    confirmations: 30
    blockExplorerUrl: https://base.example
`), "operator.yaml")
	require.NoError(t, err)
	// The embedded catalogue without Polygon and without Base's USDT.
	var smaller catalog.File
	for _, c := range embedded.Chains {
		switch c.ChainID {
		case "eip155:137":
			continue
		case "eip155:8453":
			var kept []catalog.Token
			for _, tk := range c.Tokens {
				if tk.ID != baseUSDT {
					kept = append(kept, tk)
				}
			}
			c.Tokens = kept
		}
		smaller.Chains = append(smaller.Chains, c)
	}
	require.NoError(t, smaller.Validate())

	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		sync := func(f catalog.File) store.CatalogSync {
			t.Helper()
			var sum store.CatalogSync
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) (err error) { sum, err = tx.SyncCatalog(f); return }))
			return sum
		}
		assert.Equal(t, store.CatalogSync{}, sync(embedded), "a migrated database already holds the embedded catalogue")

		// An operator's file: one chain and its token added, one chain's fields changed.
		assert.Equal(t, store.CatalogSync{Added: 2, Updated: 1}, sync(withExtra), "7777 and its token; Base")
		cat := loadCatalog(t, st)
		c, ok := cat.Chain(7777)
		require.True(t, ok)
		assert.True(t, c.Enabled)
		assert.Equal(t, domain.TokenActive, cat.Tokens["eip155:7777/slip44:60"].Status)
		base, _ := cat.Chain(8453)
		assert.Equal(t, int32(30), base.RequiredConfirmations)
		assert.Equal(t, "https://base.example", base.BlockExplorerURL)
		assert.Equal(t, "Base", base.Name)

		// A token blocked by hand stays blocked when the file drops it (deprecated is weaker).
		require.NoError(t, st.GormDB().Exec("UPDATE tokens SET status = 'blocked' WHERE id = ?", "eip155:137/erc20:0x3c499c542cef5e3811e1192ce70d8cc03d5c3359").Error)
		sum := sync(smaller)
		assert.Equal(t, store.CatalogSync{Updated: 1, Deprecated: 6}, sum,
			"Base back to its values; chains 137 and 7777 inactive; POL, Polygon's USDT, Base's USDT, 7777's native deprecated")
		cat = loadCatalog(t, st)
		pol, ok := cat.Chain(137)
		require.True(t, ok, "a removed chain is kept")
		assert.False(t, pol.Enabled, "but no longer active")
		assert.Equal(t, domain.TokenDeprecated, cat.Tokens[polygonPOL].Status)
		assert.Equal(t, domain.TokenBlocked, cat.Tokens["eip155:137/erc20:0x3c499c542cef5e3811e1192ce70d8cc03d5c3359"].Status)
		assert.Equal(t, domain.TokenDeprecated, cat.Tokens[baseUSDT].Status)
		c, ok = cat.Chain(7777)
		require.True(t, ok)
		assert.False(t, c.Enabled)
		assert.Equal(t, domain.TokenDeprecated, cat.Tokens["eip155:7777/slip44:60"].Status)
		assert.Equal(t, store.CatalogSync{}, sync(smaller), "a second start with the same file writes nothing")

		// The file naming them again puts them back in service.
		sync(embedded)
		cat = loadCatalog(t, st)
		pol, _ = cat.Chain(137)
		assert.True(t, pol.Enabled)
		assert.Equal(t, domain.TokenActive, cat.Tokens[polygonPOL].Status)
		assert.Equal(t, domain.TokenActive, cat.Tokens[baseUSDT].Status)
		assert.Equal(t, domain.TokenActive, cat.Tokens["eip155:137/erc20:0x3c499c542cef5e3811e1192ce70d8cc03d5c3359"].Status,
			"the file is the source of truth: a hand edit lasts until the next start")
	})
}

// TestMigrateBringsAnOldDatabaseInLine: a database migrated before the catalogue file held the
// version-2 seed's rows (here OP Mainnet as that seed had it, at 20 confirmations and without the
// new columns' values); the next start updates them and adds what is new.
func TestMigrateBringsAnOldDatabaseInLine(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, testdb.URL(t, backend))
			require.NoError(t, st.MigrateUpTo(ctx, 12))
			db := st.GormDB()
			require.NoError(t, db.Exec(`INSERT INTO chains (chain_id, name, native_symbol, native_decimals, is_testnet, is_active, convenience_fee_cents, required_confirmations)
				VALUES (10, 'OP Mainnet', 'ETH', 18, FALSE, TRUE, 5, 20)`).Error)
			require.NoError(t, db.Exec(`INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status)
				VALUES ('eip155:10/slip44:60', 10, 'ETH', 'ethereum', '0x0000000000000000000000000000000000000000', 18, 'volatile', 'native', 'active')`).Error)
			var logs bytes.Buffer
			require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(&logs, nil))))
			assert.Contains(t, logs.String(), "catalogue updated")
			cat := loadCatalog(t, st)
			assert.Len(t, cat.Chains, 11)
			assert.Len(t, cat.Tokens, 31)
			op, _ := cat.Chain(10)
			assert.Equal(t, int32(10), op.RequiredConfirmations)
			assert.True(t, op.FinalizedTag)
			assert.Equal(t, "https://optimistic.etherscan.io", op.BlockExplorerURL)
		})
	}
}

// TestSyncCatalogConcurrentStarts: processes starting together on one PostgreSQL with the same
// new catalogue all succeed (an insert meeting another's becomes an update) and agree.
func TestSyncCatalogConcurrentStarts(t *testing.T) {
	if !slices.Contains(testdb.Backends(), "postgres") {
		t.Skip("PostgreSQL only: SQLite has one writer")
	}
	embedded, err := catalog.Embedded()
	require.NoError(t, err)
	withExtra, err := catalog.Merge(embedded, []byte(extraChain), "operator.yaml")
	require.NoError(t, err)
	url := testdb.URL(t, "postgres")
	openMigrated(t, url)
	const n = 4
	errs := make(chan error, n)
	for range n {
		st := openStore(t, url)
		go func() { errs <- st.MigrateWith(context.Background(), discardLog(), withExtra) }()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	cat := loadCatalog(t, openStore(t, url))
	c, ok := cat.Chain(7777)
	require.True(t, ok)
	assert.True(t, c.Enabled)
	assert.Len(t, cat.Tokens, 32)
}

// A token's decimals (or a chain's native decimals) cannot change under the quotes, transfers
// and payouts that recorded amounts in its units: the start is refused, naming it. An unused
// token may still be corrected.
func TestSyncCatalogRefusesRevaluingWhatIsRecorded(t *testing.T) {
	embedded, err := catalog.Embedded()
	require.NoError(t, err)
	change := func(chainID, tokenID string, edit func(c *catalog.Chain, tk *catalog.Token)) catalog.File {
		var f catalog.File
		for _, c := range embedded.Chains {
			c.Tokens = slices.Clone(c.Tokens)
			if c.ChainID == chainID {
				var tk *catalog.Token
				for i := range c.Tokens {
					if c.Tokens[i].ID == tokenID {
						tk = &c.Tokens[i]
					}
				}
				edit(&c, tk)
			}
			f.Chains = append(f.Chains, c)
		}
		return f
	}
	usdcEth := store.ERC20TokenID(1, usdcEthereum)
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		m := createMerchant(t, st, "Acme Corp", "acme")
		insertPayment(t, st, cat, m, paymentSpec{Amount: 1000}) // quoted in Ethereum USDC and Base ETH
		sync := func(f catalog.File) error {
			return st.InTx(ctx, func(tx *store.Tx) error { _, err := tx.SyncCatalog(f); return err })
		}
		err := sync(change("eip155:1", usdcEth, func(_ *catalog.Chain, tk *catalog.Token) { tk.Decimals = 18 }))
		require.ErrorIs(t, err, store.ErrCatalogChangeInUse)
		assert.ErrorContains(t, err, usdcEth)
		err = sync(change("eip155:8453", "", func(c *catalog.Chain, _ *catalog.Token) { c.NativeDecimals = 9 }))
		require.ErrorIs(t, err, store.ErrCatalogChangeInUse)
		assert.ErrorContains(t, err, "eip155:8453")
		require.NoError(t, sync(change("eip155:8453", baseUSDT, func(_ *catalog.Chain, tk *catalog.Token) { tk.Decimals = 18 })),
			"Base USDT is used by nothing yet")
		after := loadCatalog(t, st)
		assert.EqualValues(t, 6, after.Tokens[usdcEth].Decimals, "the refused change wrote nothing")
		assert.EqualValues(t, 18, after.Tokens[baseUSDT].Decimals)
	})
}
