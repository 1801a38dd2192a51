package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
)

// A one-shot command run from a shell without the deployment's PAYMENTS_CATALOG_FILE keeps the
// stored catalogue (the operator's chain stays in service); migrate brings it in line with the
// file it is given, and any command writes the catalogue into a database that has none.
func TestOneShotCommandsKeepTheStoredCatalogue(t *testing.T) {
	db := cliEnv(t)
	file := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
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
`), 0o600))
	active := func() (bool, bool) {
		st, err := store.Open(db)
		require.NoError(t, err)
		defer st.Close()
		cat, err := st.Read(context.Background()).LoadCatalog()
		require.NoError(t, err)
		c, ok := cat.Chain(7777)
		return ok, c.Enabled
	}

	t.Setenv("PAYMENTS_CATALOG_FILE", "")
	cliJSON(t, "merchants", "create", "--name", "Acme", "--json") // a fresh database: the catalogue is written
	listed, _ := active()
	assert.False(t, listed)

	t.Setenv("PAYMENTS_CATALOG_FILE", file)
	_, errOut, err := cli(t, "migrate")
	require.NoError(t, err, errOut)
	listed, on := active()
	require.True(t, listed)
	require.True(t, on, "migrate writes the operator's file")

	t.Setenv("PAYMENTS_CATALOG_FILE", "")
	cliJSON(t, "merchants", "create", "--name", "Other", "--json")
	_, on = active()
	assert.True(t, on, "a command from a shell without the file leaves the operator's chain in service")

	_, errOut, err = cli(t, "migrate")
	require.NoError(t, err, errOut)
	listed, on = active()
	assert.True(t, listed, "never deleted")
	assert.False(t, on, "migrate without the file takes it out of service, as serve would")
}
