package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

const usdcBase = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"

func TestAcceptedAssets(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := createMerchant(t, st, "Acme", "acme")
		other := createMerchant(t, st, "Other", "other")
		usdc, eth := store.ERC20TokenID(8453, usdcBase), store.NativeTokenID(1)
		read := func(id uuid.UUID) domain.AcceptedAssets {
			t.Helper()
			a, err := st.Read(ctx).AcceptedAssets(id)
			require.NoError(t, err)
			return a
		}
		put := func(id uuid.UUID, a domain.AcceptedAssets) error {
			return st.InTx(ctx, func(tx *store.Tx) error { return tx.PutAcceptedAssets(id, a) })
		}

		assert.True(t, read(m.ID).IsDefault(), "no rows: the default")
		assert.True(t, read(uuid.Must(uuid.NewV7())).IsDefault(), "an unknown merchant has no rows either (the service checks existence)")

		require.NoError(t, put(m.ID, domain.SelectAssets(usdc, eth, usdc)))
		got := read(m.ID)
		assert.False(t, got.IsDefault())
		assert.Equal(t, []string{eth, usdc}, got.TokenIDs(), "duplicates stored once, ids sorted")
		assert.True(t, read(other.ID).IsDefault(), "another merchant keeps the default")

		// A replacement, not a merge.
		require.NoError(t, put(m.ID, domain.SelectAssets(eth)))
		assert.Equal(t, []string{eth}, read(m.ID).TokenIDs())

		// An unknown token violates the foreign key; the transaction rolls back, so the
		// previous selection survives the failed replacement (its DELETE included).
		require.Error(t, put(m.ID, domain.SelectAssets(usdc, "eip155:8453/erc20:0xnope")))
		assert.Equal(t, []string{eth}, read(m.ID).TokenIDs(), "nothing changed")
		require.Error(t, put(uuid.Must(uuid.NewV7()), domain.SelectAssets(eth)), "an unknown merchant violates the foreign key")

		// The default deletes the rows.
		require.NoError(t, put(m.ID, domain.AcceptedAssets{}))
		assert.True(t, read(m.ID).IsDefault())
		require.NoError(t, put(m.ID, domain.AcceptedAssets{}), "resetting the default again is harmless")
		assert.True(t, read(m.ID).IsDefault())
	})
}
