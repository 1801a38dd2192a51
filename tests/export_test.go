package tests

import (
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/glebarez/sqlite"
	"github.com/stretchr/testify/require"
)

// rawDB opens a second handle on the test database for assertions about what is stored.
func (e *env) rawDB() *gorm.DB {
	e.t.Helper()
	url := e.app.Cfg.DatabaseURL
	var d gorm.Dialector = sqlite.Open(url)
	if !e.app.Cfg.IsEmbedded() {
		d = postgres.Open(url)
	}
	db, err := gorm.Open(d, &gorm.Config{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	return db
}
