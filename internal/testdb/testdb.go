// Package testdb gives tests a fresh, empty database per test on each backend: a SQLite file in
// a temp dir, and a new PostgreSQL database on the server named by DATABASE_URL (the throwaway
// cluster `make test` starts). Without DATABASE_URL the PostgreSQL half is skipped locally and
// fails under CI, so CI can never go green without having run it.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for creating and dropping test databases
)

// Backends lists the backends to run a suite against.
func Backends() []string { return []string{"sqlite", "postgres"} }

// URL returns a database URL for a fresh empty database of the backend, removed after the test.
func URL(t testing.TB, backend string) string {
	t.Helper()
	if backend == "sqlite" {
		return filepath.Join(t.TempDir(), "paymentsd.db")
	}
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("DATABASE_URL is not set under CI: PostgreSQL tests must run (use `make test`)")
		}
		t.Skip("DATABASE_URL not set: skipping PostgreSQL (run `make test` to start a throwaway cluster)")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
