package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// Migration 8 on the data of version 7: the payout transactions and their attempts survive the
// SQLite table rebuild with their links intact, and a nonce becomes unique per (chain, sender,
// genesis) — rows from before count as the chain's current genesis once a nonce is next taken.
func TestMigrationEightKeepsPayoutsAndMakesNoncesPerGenesis(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			st, db := storeAt(t, backend, 7)
			sender := "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"
			oid, aid := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
			require.NoError(t, db.Exec(`INSERT INTO tx_nonces (chain_id, sender, next_nonce) VALUES (1337, ?, 1)`, sender).Error)
			require.NoError(t, db.Exec(`INSERT INTO outgoing_txs (id, chain_id, sender, nonce, kind, token_id, recipient, amount_asset,
				rate_usd, tx_to, tx_value, tx_data, gas_limit, status, created_at, updated_at)
				VALUES (?, 1337, ?, 0, 'payout', 'eip155:1337/slip44:60', ?, 5, '3000', ?, 5, '', 21000, 'signed', ?, ?)`,
				oid, sender, sender, sender, t0, t0).Error)
			require.NoError(t, db.Exec(`INSERT INTO tx_attempts (id, outgoing_tx_id, hash, raw, tip_cap, fee_cap, created_at)
				VALUES (?, ?, '0xabc', '02f8', 1, 2, ?)`, aid, oid, t0).Error)

			require.NoError(t, st.Migrate(ctx, discardLog()))
			open, err := st.Read(ctx).OpenOutgoingTxs(1337, sender)
			require.NoError(t, err)
			require.Len(t, open, 1)
			require.Equal(t, oid, open[0].ID)
			require.Len(t, open[0].Attempts, 1, "the attempt still points at its transaction")
			require.Equal(t, "", open[0].GenesisHash)
			if backend == "sqlite" {
				var broken []map[string]any
				require.NoError(t, db.Raw("PRAGMA foreign_key_check").Scan(&broken).Error)
				require.Empty(t, broken)
				var fk int
				require.NoError(t, db.Raw("PRAGMA foreign_keys").Scan(&fk).Error)
				require.Equal(t, 1, fk, "foreign keys are on again after the rebuild")
			}

			insert := func(nonce int64, genesis string) error {
				return st.InTx(ctx, func(tx *store.Tx) error {
					return tx.InsertOutgoingTx(store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: 1337, Sender: sender, Nonce: nonce,
						Kind: "payout", TokenID: "eip155:1337/slip44:60", Recipient: sender, TxTo: sender, GasLimit: 21000,
						GenesisHash: genesis, CreatedAt: t0})
				})
			}
			// The first nonce taken says which genesis the old rows were for.
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
				n, err := tx.TakeNonce(1337, sender, 0, "0xg1", false)
				require.Equal(t, int64(1), n)
				return err
			}))
			require.ErrorIs(t, insert(0, "0xg1"), store.ErrConflict, "nonce 0 of this genesis is the old row's")
			require.NoError(t, insert(0, "0xg2"), "a new genesis is another chain: its nonce 0 is free")
			// A node with another genesis is refused, unless the chain may restart (the devnet).
			require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.TakeNonce(1337, sender, 0, "0xg2", false)
				require.ErrorIs(t, err, store.ErrGenesisChanged)
				n, err := tx.TakeNonce(1337, sender, 0, "0xg2", true)
				require.Equal(t, int64(0), n, "starts over at the new chain's count")
				return err
			}))
		})
	}
}
