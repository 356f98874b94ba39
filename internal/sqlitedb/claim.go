package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrForeign reports a file that is not the simdex database it was opened
// as: another application's database, another of simdex's databases, or
// no database at all. Nothing in it was changed.
var ErrForeign = errors.New("not a simdex database")

// Kind names one of simdex's databases and the mark that identifies its
// files, so that a path pointing at the wrong file is refused before the
// migrations write into it.
type Kind struct {
	// Name says what the database is, in messages: "index", "policy store".
	Name string
	// ID is the database's PRAGMA application_id, written at creation.
	ID int32
	// Tables are tables that every schema version of this database has,
	// to recognise a file written before simdex set the mark.
	Tables []string
	// Err is the sentinel that a refusal wraps; ErrForeign when nil.
	Err error
}

// The marks of simdex's databases: "SDX" and a letter for each kind.
var (
	// Index is the chunk index (index/sqlite).
	Index = Kind{Name: "index", ID: 0x53445849, Tables: []string{"documents", "contents", "meta"}}
	// Policy is the policy store: rules, holds, flags, audit log.
	Policy = Kind{Name: "policy store", ID: 0x53445850, Tables: []string{"rule", "hold", "flag"}}
	// Outbox is the notifier's outbox.
	Outbox = Kind{Name: "outbox", ID: 0x5344584f, Tables: []string{"alert", "delivery"}}
	// Tokens is the API token store.
	Tokens = Kind{Name: "token store", ID: 0x53445841, Tables: []string{"token"}}
)

var kinds = []Kind{Index, Policy, Outbox, Tokens}

// Claim checks, without changing it, that the file at path is a database
// of this kind, or a new one: missing, empty, or holding no tables. A file
// written by a simdex that did not mark its databases is recognised by
// kind.Tables. Anything else is refused with kind.Err (ErrForeign when
// nil) and a message saying what the file holds.
func Claim(ctx context.Context, path string, kind Kind) error {
	sentinel := kind.Err
	if sentinel == nil {
		sentinel = ErrForeign
	}
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: %s is a directory", sentinel, path)
	}
	if fi.Size() == 0 {
		return nil
	}
	// No pragmas that write: reading the header changes nothing, whatever
	// journal mode the file uses.
	db, err := sql.Open("sqlite", URI(path, "_pragma=busy_timeout(10000)&_pragma=query_only(1)"))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var id int32
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return notDatabase(sentinel, err)
	}
	if id == kind.ID {
		return nil
	}
	for _, k := range kinds {
		if id == k.ID {
			return fmt.Errorf("%w: the file is simdex's %s, not its %s", sentinel, k.Name, kind.Name)
		}
	}
	if id != 0 {
		return fmt.Errorf("%w: the file belongs to another application (application_id %#x)", sentinel, uint32(id))
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return notDatabase(sentinel, err)
	}
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return notDatabase(sentinel, err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return notDatabase(sentinel, err)
	}
	if len(tables) == 0 {
		return nil
	}
	if version > 0 && containsAll(tables, kind.Tables) {
		return nil // written before the mark: Mark sets it
	}
	for _, k := range kinds {
		if version > 0 && containsAll(tables, k.Tables) {
			return fmt.Errorf("%w: the file is simdex's %s, not its %s", sentinel, k.Name, kind.Name)
		}
	}
	const shown = 8
	list := strings.Join(tables[:min(len(tables), shown)], ", ")
	if len(tables) > shown {
		list += fmt.Sprintf(" and %d more", len(tables)-shown)
	}
	return fmt.Errorf("%w: the file is another application's database (tables %s)", sentinel, list)
}

// notDatabase words a read error of a file that SQLite could not read as
// a database (SQLITE_NOTADB); other errors are returned as they are.
func notDatabase(sentinel, err error) error {
	if se := (*sqlite.Error)(nil); errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return fmt.Errorf("%w: the file is not an SQLite database", sentinel)
	}
	return err
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Mark sets the kind's application_id on a database that has none yet:
// new ones, and those written before simdex set the mark.
func Mark(ctx context.Context, db *sql.DB, kind Kind) error {
	var id int32
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return fmt.Errorf("read application id: %w", err)
	}
	if id == kind.ID {
		return nil
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", kind.ID)); err != nil {
		return fmt.Errorf("mark the file as simdex's %s: %w", kind.Name, err)
	}
	return nil
}
