package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/wallet"
)

const testMnemonic = "test test test test test test test test test test test junk"

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil))))
	return st
}

// Who holds the deposit key's private half: a worker does, the API and operator commands never;
// a key that is not the configured xpub's is refused at start.
func TestDepositKeysGoOnlyToWorkersAndMustMatchTheXPub(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	db := filepath.Join(t.TempDir(), "p.db")
	st := openStore(t, db)
	mn := filepath.Join(t.TempDir(), "mnemonic")
	require.NoError(t, os.WriteFile(mn, []byte(testMnemonic+"\n"), 0o600))
	keys, err := wallet.KeysFromMnemonic(testMnemonic)
	require.NoError(t, err)

	cfg := onchaintest.Config(db, config.Chains{DepositMnemonic: mn}, 0, 0)
	cfg.XPub = keys.XPub()
	for _, tc := range []struct {
		role    config.Role
		passive bool
		holds   bool
	}{{config.RoleAll, false, true}, {config.RoleWorker, false, true}, {config.RoleAPI, false, false}, {config.RoleAll, true, false}} {
		c := cfg
		c.Role, c.Chains.Passive = tc.role, tc.passive
		d, k, err := depositKeys(ctx, st, c, log)
		require.NoError(t, err)
		require.Equal(t, keys.XPub(), d.XPub())
		require.Equal(t, tc.holds, k != nil, "role %s passive %v", tc.role, tc.passive)
	}

	cfg.XPub = onchaintest.XPub // another wallet's xpub
	_, _, err = depositKeys(ctx, st, cfg, log)
	require.ErrorIs(t, err, wallet.ErrKeyMismatch)

	cfg.XPub = "" // the private key's own public half
	d, k, err := depositKeys(ctx, st, cfg, log)
	require.NoError(t, err)
	require.NotNil(t, k)
	require.Equal(t, keys.XPub(), d.XPub())
}

// The embedded development key: created once beside the database, the same on every start, and
// a key file that is not this database's is refused.
func TestDevDepositKeyFileBelongsToItsDatabase(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	st := openStore(t, db)
	cfg := onchaintest.Config(db, config.Chains{}, 0, 0)
	cfg.XPub, cfg.Role = "", config.RoleAll
	d1, k1, err := depositKeys(ctx, st, cfg, log)
	require.NoError(t, err)
	require.NotNil(t, k1, "the embedded development key keeps its private half")
	stored, err := st.Read(ctx).Setting(devXPubSetting)
	require.NoError(t, err)
	require.Equal(t, d1.XPub(), stored, "only the xpub is in the database")
	d2, k2, err := depositKeys(ctx, st, cfg, log)
	require.NoError(t, err)
	require.Equal(t, d1.XPub(), d2.XPub())
	require.Equal(t, k1.XPub(), k2.XPub())

	// Another database's key file in its place.
	other := filepath.Join(t.TempDir(), "dev-deposit.key")
	_, _, err = wallet.LoadOrCreateDevKeys(other)
	require.NoError(t, err)
	b, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(DevDepositKeyFile(db), b, 0o600))
	_, _, err = depositKeys(ctx, st, cfg, log)
	require.ErrorContains(t, err, "is not the key of this database's deposit addresses")

	// A database from before key files: its xpub stays, and nothing can be swept.
	require.NoError(t, os.Remove(DevDepositKeyFile(db)))
	d3, k3, err := depositKeys(ctx, st, cfg, log)
	require.NoError(t, err)
	require.Nil(t, k3)
	require.Equal(t, d1.XPub(), d3.XPub())
}
