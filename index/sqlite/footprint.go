package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sort"

	"github.com/simdex/simdex/internal/sqlitedb"
)

// TableBytes is the space of one table: its own pages and those of its
// indexes.
type TableBytes struct {
	Table      string `json:"table"`
	Bytes      int64  `json:"bytes"`
	IndexBytes int64  `json:"index_bytes"`
}

// Footprint says where an index's space goes.
type Footprint struct {
	Path string `json:"path"`
	// FileBytes is the database file and its write-ahead log on disk.
	FileBytes int64 `json:"file_bytes"`
	// PageBytes is the pages in use; the rest of the file is free pages.
	PageBytes int64        `json:"page_bytes"`
	Tables    []TableBytes `json:"tables"` // largest first
	// Documents counts stored document versions (attachments included),
	// Objects the top-level ones, Contents the distinct texts.
	Documents int64 `json:"documents"`
	Objects   int64 `json:"objects"`
	Contents  int64 `json:"contents"`
	// InputBytes is the raw size of the top-level objects: the input the
	// index describes.
	InputBytes int64 `json:"input_bytes"`
}

// ReadFootprint measures the index at path without changing it: opened
// read-only, after checking it is a simdex index.
func ReadFootprint(ctx context.Context, path string) (Footprint, error) {
	fp := Footprint{Path: path}
	if err := sqlitedb.Claim(ctx, path, indexKind); err != nil {
		return fp, fmt.Errorf("measure index %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqlitedb.URI(path, "mode=ro"))
	if err != nil {
		return fp, fmt.Errorf("measure index %s: %w", path, err)
	}
	defer db.Close()
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			fp.FileBytes += fi.Size()
		}
	}
	if err := fp.readTables(ctx, db); err != nil {
		return fp, fmt.Errorf("measure index %s: %w", path, err)
	}
	err = db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM documents), (SELECT COUNT(*) FROM documents WHERE parent_id IS NULL),
		(SELECT COUNT(*) FROM contents), (SELECT COALESCE(SUM(raw_size), 0) FROM documents WHERE parent_id IS NULL)`).
		Scan(&fp.Documents, &fp.Objects, &fp.Contents, &fp.InputBytes)
	if err != nil {
		return fp, fmt.Errorf("measure index %s: count documents: %w", path, err)
	}
	return fp, nil
}

// readTables sums dbstat's pages by table, an index counted with its table.
func (fp *Footprint) readTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT COALESCE(s.tbl_name, d.name), d.name != COALESCE(s.tbl_name, d.name), SUM(d.pgsize)
		FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name GROUP BY 1, 2`)
	byTable := map[string]*TableBytes{}
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var table string
		var isIndex bool
		var n int64
		if err := rows.Scan(&table, &isIndex, &n); err != nil {
			return err
		}
		t := byTable[table]
		if t == nil {
			t = &TableBytes{Table: table}
			byTable[table] = t
		}
		if isIndex {
			t.IndexBytes += n
		} else {
			t.Bytes += n
		}
		fp.PageBytes += n
		return nil
	})
	if err != nil {
		return fmt.Errorf("read page use: %w", err)
	}
	for _, t := range byTable {
		fp.Tables = append(fp.Tables, *t)
	}
	sort.Slice(fp.Tables, func(i, j int) bool {
		a, b := fp.Tables[i], fp.Tables[j]
		if a.Bytes+a.IndexBytes != b.Bytes+b.IndexBytes {
			return a.Bytes+a.IndexBytes > b.Bytes+b.IndexBytes
		}
		return a.Table < b.Table
	})
	return nil
}
