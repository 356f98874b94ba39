// Package sqlitedb opens the small embedded SQLite databases of simdex's
// stores (policy, notifier outbox, API tokens): WAL journal, full fsync at
// every commit, one writer connection, and a schema brought up to date by
// forward-only migrations numbered by PRAGMA user_version. Every database
// file, the index's included, is created 0600 in a folder created 0700,
// whatever the umask (MakePrivate).
package sqlitedb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// synchronous is the databases' sync level: every commit waits for the
// disk.
const synchronous = "FULL"

// ErrSchemaVersion reports a database written by a newer simdex.
var ErrSchemaVersion = errors.New("unsupported schema version")

// Open opens or creates the database of this kind at path and applies the
// migrations it has not seen yet, each in its own transaction;
// migrations[i] brings the schema from version i to i+1. A file that is
// not a database of this kind is refused with ErrForeign (see Claim), one
// whose version is newer than len(migrations) with ErrSchemaVersion.
// The file, its folder and the files SQLite keeps beside it are private
// to their owner (see MakePrivate).
func Open(ctx context.Context, path string, kind Kind, migrations []string) (*sql.DB, error) {
	if err := Claim(ctx, path, kind); err != nil {
		return nil, err
	}
	if err := MakePrivate(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", URI(path, "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous("+synchronous+")&_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	// One writer: stores that chain or claim rows rely on it, and these
	// databases are small.
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db, migrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := Mark(ctx, db, kind); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migrate(ctx context.Context, db *sql.DB, migrations []string) error {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: %d is newer than this simdex (%d)", ErrSchemaVersion, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if err := step(ctx, db, v+1, migrations[v]); err != nil {
			return fmt.Errorf("migrate to schema %d: %w", v+1, err)
		}
	}
	return nil
}

func step(ctx context.Context, db *sql.DB, to int, ddl string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(to)); err != nil {
		return err
	}
	return tx.Commit()
}

// ExecUnsynced runs one statement committed without waiting for the disk
// (synchronous=NORMAL for its transaction alone), for writes whose loss
// costs only repeated, idempotent work, such as marking notifications
// sent. In WAL mode such a commit survives a crash of the process; a power
// loss may undo it (never reorder it), and the next synced commit makes it
// durable too. The connection is back to full sync when it returns, or
// is discarded.
func ExecUnsynced(ctx context.Context, db *sql.DB, query string, args ...any) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return err
	}
	defer func() {
		// Never leave a connection that skips fsync in the pool.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous = "+synchronous); rerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("restore synchronous = %s: %w", synchronous, rerr))
		}
	}()
	_, err = conn.ExecContext(ctx, query, args...)
	return err
}

// Millis stores a time as Unix milliseconds; the zero time is 0.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis reads a time stored by Millis, in UTC; 0 is the zero time.
func FromMillis(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
