package store

import (
	"context"
	"io"
	"log/slog"

	"gorm.io/gorm"
)

// GormDB exposes the underlying handle to the store's external tests only: they capture the SQL
// the repositories issue and EXPLAIN it.
func (s *Store) GormDB() *gorm.DB { return s.db }

// MigrateUpTo migrates only up to version (then Migrate goes on to the latest).
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	migrateUpTo = version
	defer func() { migrateUpTo = 0 }()
	return s.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
}
