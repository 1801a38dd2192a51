package store_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
)

// withUmask runs fn under umask u. The umask is the process's: these tests are not parallel,
// and Go runs no parallel test while a sequential one runs.
func withUmask(t *testing.T, u int, fn func()) {
	old := syscall.Umask(u)
	defer syscall.Umask(old)
	fn()
}

func perm(t *testing.T, p string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err, p)
	return st.Mode().Perm()
}

// The embedded database and its -wal and -shm files are owner-only, whatever the umask.
func TestSQLiteFilesAreCreatedOwnerOnly(t *testing.T) {
	for _, u := range []int{0o022, 0o000} {
		withUmask(t, u, func() {
			path := filepath.Join(t.TempDir(), "data", "paymentsd.db")
			st, err := store.Open(path)
			require.NoError(t, err)
			defer st.Close()
			require.NoError(t, st.Migrate(context.Background(), discardLog()))
			require.NoError(t, st.InTx(context.Background(), func(tx *store.Tx) error { return tx.InsertSetting("k", "v") }))
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				assert.Equal(t, fs.FileMode(0o600), perm(t, p), "%s under umask %04o", filepath.Base(p), u)
			}
			assert.Equal(t, fs.FileMode(0o700), perm(t, filepath.Dir(path)), "the data directory")
		})
	}
}

// A database file an earlier version left readable by others is tightened at open, and said so.
func TestSQLiteFilesWithWiderPermissionsAreTightened(t *testing.T) {
	withUmask(t, 0o000, func() {
		path := filepath.Join(t.TempDir(), "paymentsd.db")
		st, err := store.Open(path)
		require.NoError(t, err)
		require.NoError(t, st.Migrate(context.Background(), discardLog()))
		require.NoError(t, st.Close())
		require.NoError(t, os.WriteFile(path+"-wal", nil, 0o666)) // as a crash may leave it
		for _, p := range []string{path, path + "-wal"} {
			require.NoError(t, os.Chmod(p, 0o644))
		}

		var logged bytes.Buffer
		st, err = store.Open(path, store.WithLog(slog.New(slog.NewTextHandler(&logged, nil))))
		require.NoError(t, err)
		defer st.Close()
		require.NoError(t, st.Ping(context.Background()))
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			assert.Equal(t, fs.FileMode(0o600), perm(t, p), filepath.Base(p))
		}
		assert.Contains(t, logged.String(), "permissions tightened")
		assert.Contains(t, logged.String(), "file="+path+" ")
		assert.Contains(t, logged.String(), "was=-rw-r--r--")
	})
}
