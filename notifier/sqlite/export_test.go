package sqlite

import (
	"database/sql"
	"strconv"
)

// SetVersion is for tests: it pretends a newer simdex wrote the outbox.
func SetVersion(path string, v int) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("PRAGMA user_version = " + strconv.Itoa(v))
	return err
}
