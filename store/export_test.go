package store

import "gorm.io/gorm"

// GormDB exposes the underlying handle to the store's external tests only: they capture the SQL
// the repositories issue and EXPLAIN it.
func (s *Store) GormDB() *gorm.DB { return s.db }
