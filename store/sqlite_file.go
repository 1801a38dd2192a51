package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	log *slog.Logger
}

// WithLog names the logger Open reports to (a database file whose permissions it tightened).
func WithLog(log *slog.Logger) Option { return func(o *openOptions) { o.log = log } }

// sqliteFileMode is the embedded database's: it holds merchants' data, key hashes and sealed
// secrets, and the key that opens those lies beside it. Only the owner reads it.
const sqliteFileMode fs.FileMode = 0o600

// secureSQLiteFiles makes the database file owner-only before SQLite opens it, whatever the
// process umask: a new file is created 0600 here (SQLite would make it 0644), and SQLite gives
// its -wal and -shm files the database file's permissions. An existing database, -wal or -shm
// file any other user may read or write is tightened to 0600, with a log line.
//
// Only a file that cannot be created or examined fails the open.
func secureSQLiteFiles(path string, log *slog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	switch {
	case err == nil:
		// The umask may have taken bits off (or left them, for a mode SQLite reads from here):
		// set exactly 0600.
		err = errors.Join(f.Chmod(sqliteFileMode), f.Close())
		if err != nil {
			return fmt.Errorf("store: create database file: %w", err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("store: create database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: database file: %w", err)
		}
		if !st.Mode().IsRegular() || st.Mode().Perm()&^sqliteFileMode == 0 {
			continue
		}
		if err := os.Chmod(p, sqliteFileMode); err != nil {
			// Another user's file (a volume made by root): refusing to start would not make it
			// private; the operator is told.
			if log != nil {
				log.Error("database file is readable or writable by other users and its permissions cannot be tightened",
					"file", p, "mode", st.Mode().Perm().String(), "err", err)
			}
			continue
		}
		if log != nil {
			log.Warn("database file was readable or writable by other users: permissions tightened",
				"file", p, "was", st.Mode().Perm().String(), "now", sqliteFileMode.String())
		}
	}
	return nil
}
