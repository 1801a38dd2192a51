// Package store owns persistence: GORM on PostgreSQL (pgx) or an embedded pure-Go SQLite, the
// versioned migrations for both, and the repositories. It speaks domain types and its own error
// vocabulary (ErrNotFound, ErrConflict); it never knows HTTP.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/paymentsd/paymentsd/catalog"
)

// Store errors: every storage failure that callers act on is translated to one of these.
var (
	ErrNotFound = errors.New("store: not found")
	ErrConflict = errors.New("store: conflict")
)

// Dialect names the backing database.
type Dialect string

// Supported dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

//go:embed migrations
var migrationsFS embed.FS

// Store is the database handle. Reads and writes go through Tx values.
type Store struct {
	db      *gorm.DB
	dialect Dialect
}

// Tx is a unit of work on the database, inside or outside a transaction.
type Tx struct {
	db       *gorm.DB
	dialect  Dialect
	readOnly bool      // from Read: no transaction, so no lock could outlive the statement
	ended    *[]func() // OnEnd's functions, run by InTx once the transaction is over
}

// ErrLockOutsideTx is a locking method called on Store.Read's Tx: a row lock outside a
// transaction ends with its statement and protects nothing, so the call is refused rather
// than silently unprotected.
var ErrLockOutsideTx = errors.New("store: a locking read needs a transaction (Store.InTx), not Store.Read")

// SQLiteFile is the file of an embedded database URL (a path, sqlite:path or file:path).
func SQLiteFile(databaseURL string) string {
	return strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "file:")
}

// Open connects to databaseURL: a postgres:// or postgresql:// URL, or a SQLite file path
// (optionally prefixed with sqlite: or file:).
func Open(databaseURL string, opts ...Option) (*Store, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	cfg := &gorm.Config{TranslateError: true, Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	var (
		db      *gorm.DB
		dialect Dialect
		err     error
	)
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		dialect = Postgres
		db, err = gorm.Open(postgres.Open(databaseURL), cfg)
	default:
		dialect = SQLite
		path := SQLiteFile(databaseURL)
		if path == "" {
			return nil, errors.New("store: empty database path")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create data directory: %w", err)
			}
		}
		if err := secureSQLiteFiles(path, o.log); err != nil {
			return nil, err
		}
		dsn := path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
		db, err = gorm.Open(sqlite.Open(dsn), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if dialect == SQLite {
		// One connection serialises every transaction: SQLite has one writer anyway, and this
		// makes the balance check under "lock" trivially safe without FOR UPDATE.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(16)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	return &Store{db: db, dialect: dialect}, nil
}

// Dialect reports the backing database.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Ping checks the database answers (readiness).
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// SQLDB is the connection pool under GORM, for its statistics (metrics); queries go through Tx.
func (s *Store) SQLDB() (*sql.DB, error) { return s.db.DB() }

// migrateUpTo, when set (by tests only), stops Migrate at that version.
var migrateUpTo int64

// Migrate applies every pending versioned migration for the dialect, then upserts the embedded
// catalogue (MigrateWith).
func (s *Store) Migrate(ctx context.Context, log *slog.Logger) error {
	cat, err := catalog.Embedded()
	if err != nil {
		return err
	}
	return s.MigrateWith(ctx, log, cat)
}

// MigrateWith applies every pending versioned migration, then brings the stored catalogue in line
// with cat (SyncCatalog): the schema first, so the upsert writes every column the file has.
func (s *Store) MigrateWith(ctx context.Context, log *slog.Logger, cat catalog.File) error {
	return s.migrate(ctx, log, cat, false)
}

// MigrateKeepingCatalog is MigrateWith for one-shot operator commands: it writes the catalogue
// only into a new database (no migration applied before this one). Otherwise the stored catalogue stays as the serve
// processes wrote it: a command run from a shell without the deployment's PAYMENTS_CATALOG_FILE
// must not take the operator's chains out of service (and stop their watching) behind its back.
func (s *Store) MigrateKeepingCatalog(ctx context.Context, log *slog.Logger, cat catalog.File) error {
	return s.migrate(ctx, log, cat, true)
}

func (s *Store) migrate(ctx context.Context, log *slog.Logger, cat catalog.File, keepCatalog bool) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	sub, err := fs.Sub(migrationsFS, "migrations/"+string(s.dialect))
	if err != nil {
		return err
	}
	gooseDialect := goose.DialectPostgres
	if s.dialect == SQLite {
		gooseDialect = goose.DialectSQLite3
	}
	provider, err := goose.NewProvider(gooseDialect, sqlDB, sub,
		goose.WithGoMigrations(seedMigration()))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	up := provider.Up
	if migrateUpTo > 0 { // tests of a migration on the data of the version before it
		up = func(ctx context.Context) ([]*goose.MigrationResult, error) { return provider.UpTo(ctx, migrateUpTo) }
	}
	before, err := provider.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("store: migration version: %w", err)
	}
	results, err := up(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for _, r := range results {
		log.Info("migration applied", "version", r.Source.Version, "path", r.Source.Path, "duration", r.Duration)
	}
	if migrateUpTo > 0 {
		return nil // an older schema: the upsert needs the latest
	}
	if keepCatalog && before > 0 {
		return nil // not a new database: its catalogue is what serve or migrate last wrote
	}
	if err := s.syncCatalog(ctx, cat, log); err != nil {
		return fmt.Errorf("store: catalogue: %w", err)
	}
	return nil
}

// forUpdate reads rows under a lock held until the transaction ends, on PostgreSQL; SQLite's
// single connection already serialises transactions. The lock is FOR NO KEY UPDATE, not FOR
// UPDATE: a transaction has often inserted rows referencing the locked one already (its
// idempotency key, events), and each such foreign-key check holds FOR KEY SHARE on it, which
// FOR UPDATE would wait on — two withdrawals deadlocked that way. NO KEY UPDATE still
// serialises the lockers among themselves.
func (t *Tx) forUpdate() *gorm.DB {
	if t.readOnly {
		db := t.db.Session(&gorm.Session{})
		_ = db.AddError(ErrLockOutsideTx)
		return db
	}
	if t.dialect == Postgres {
		return t.db.Clauses(clause.Locking{Strength: "NO KEY UPDATE"})
	}
	return t.db
}

// Read returns a Tx for reads outside a transaction.
func (s *Store) Read(ctx context.Context) *Tx {
	return &Tx{db: s.db.WithContext(ctx), dialect: s.dialect, readOnly: true}
}

// InTx runs fn in one transaction, committed when fn returns nil; then what fn left to OnEnd.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	var ended []func()
	err := translate(s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error {
		return fn(&Tx{db: db, dialect: s.dialect, ended: &ended})
	}, &sql.TxOptions{}))
	for _, f := range ended {
		f()
	}
	return err
}

// OnEnd runs f once the transaction is over, committed or rolled back, outside it: for a record
// that must outlive the transaction's outcome — a payout refused for a sanctioned recipient is
// audited though the refusal rolls its transaction back. (On SQLite's single connection a
// second transaction opened inside the first would wait for it forever.) Outside InTx, f runs
// at once.
func (t *Tx) OnEnd(f func()) {
	if t.ended == nil {
		f()
		return
	}
	*t.ended = append(*t.ended, f)
}

// translate maps driver and GORM errors to the store vocabulary, keeping the cause for logs.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict):
		return err
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	case isSQLiteUniqueViolation(err):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}

// isSQLiteUniqueViolation covers the glebarez driver, whose error translation GORM does not
// always reach (raw Exec paths).
func isSQLiteUniqueViolation(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		// SQLITE_CONSTRAINT_UNIQUE (2067) and SQLITE_CONSTRAINT_PRIMARYKEY (1555).
		return coded.Code() == 2067 || coded.Code() == 1555
	}
	return false
}
