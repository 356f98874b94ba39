package sqlite

import "database/sql"

// DBStats returns the connection pool's statistics, for tests.
func (s *Store) DBStats() sql.DBStats { return s.db.Stats() }
