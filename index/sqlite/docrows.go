package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A document row stores once what a document's fields repeat, and only
// what cannot be derived from the rest (docs/store.md, "Document
// records"):
//
//   - the key is split after its last '/': the prefix (bucket, folder) is
//     stored once in doc_dirs and the row holds its id and the rest;
//   - version_id is NULL when it is mod_time || '-' || raw_size (the
//     folder connector's and scan's versions);
//   - idem is NULL when it is the default key || x'00' || version_id;
//   - name is an INTEGER n when it is the last n characters of the key;
//   - path is NULL when it is [name], meta NULL when it is {};
//   - origin (migration 13) is NULL when it is {}, and 0 in the rows
//     written before it, which have no origin metadata of their own
//     (index.Doc.OriginMeta);
//   - keys and idempotency keys are found by a 32-bit hash of each
//     (key_hash, idem_hash), indexed, and the text compared, rather than
//     by an index holding the text itself.
//
// document_view gives every field back as it was given.

// docView11 is the view that decodes document rows as migration 11 made
// it; migration 13 replaces it with docView.
const docView11 = `
CREATE VIEW document_view AS SELECT d.id AS id, p.prefix || d.base AS key,
	coalesce(d.version_id, d.mod_time || '-' || d.raw_size) AS version_id,
	coalesce(d.idem, p.prefix || d.base || char(0) || coalesce(d.version_id, d.mod_time || '-' || d.raw_size)) AS idem,
	CASE typeof(d.name) WHEN 'integer' THEN substr(p.prefix || d.base, -d.name) ELSE d.name END AS name,
	d.source AS source, d.parent_id AS parent_id, d.path AS path, d.media_type AS media_type, d.meta AS meta,
	d.mod_time AS mod_time, d.indexed_at AS indexed_at, d.error AS error, d.keep_versions AS keep_versions,
	d.raw_sha256 AS raw_sha256, d.raw_size AS raw_size, d.content_id AS content_id,
	d.key_hash AS key_hash, d.idem_hash AS idem_hash, d.dir AS dir, d.base AS base, d.name AS stored_name
FROM documents d JOIN doc_dirs p ON p.id = d.dir`

// docView is the view that decodes document rows (migration 13: with
// origin, which is 0 in rows written before it, NULL when empty, else
// JSON).
const docView = `
CREATE VIEW document_view AS SELECT d.id AS id, p.prefix || d.base AS key,
	coalesce(d.version_id, d.mod_time || '-' || d.raw_size) AS version_id,
	coalesce(d.idem, p.prefix || d.base || char(0) || coalesce(d.version_id, d.mod_time || '-' || d.raw_size)) AS idem,
	CASE typeof(d.name) WHEN 'integer' THEN substr(p.prefix || d.base, -d.name) ELSE d.name END AS name,
	d.source AS source, d.parent_id AS parent_id, d.path AS path, d.media_type AS media_type, d.meta AS meta,
	d.mod_time AS mod_time, d.indexed_at AS indexed_at, d.error AS error, d.keep_versions AS keep_versions,
	d.raw_sha256 AS raw_sha256, d.raw_size AS raw_size, d.content_id AS content_id, d.origin AS origin,
	d.key_hash AS key_hash, d.idem_hash AS idem_hash, d.dir AS dir, d.base AS base, d.name AS stored_name
FROM documents d JOIN doc_dirs p ON p.id = d.dir`

// strHash is the 32-bit FNV-1a hash of s, signed so that SQLite stores
// it in 4 bytes.
func strHash(s string) int64 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return int64(int32(h))
}

// docRow is a document's fields as its row stores them.
type docRow struct {
	prefix, base      string
	keyHash, idemHash int64
	version, idem     any // string, or nil when derived
	name              any // string, or the int length of the key's suffix it is
	path, meta        any // JSON text, or nil when derived
	origin            any // JSON text, or nil when empty
	// The fields stored as they are.
	source, mediaType, err string
	parent, content        sql.NullInt64
	modTime, indexedAt     int64
	keep                   bool
	rawSHA                 []byte
	rawSize                int64
}

// encodeDoc encodes the fields of r derived from key, version, idem,
// name, path and meta (path and meta JSON), from r.modTime and r.rawSize.
func encodeDoc(r docRow, key, version, idem, name, path, meta string) docRow {
	modTime, rawSize := r.modTime, r.rawSize
	r.keyHash, r.idemHash, r.version, r.idem, r.name, r.path, r.meta = strHash(key), strHash(idem), version, idem, name, path, meta
	cut := strings.LastIndexByte(key, '/') + 1
	r.prefix, r.base = key[:cut], key[cut:]
	if version == strconv.FormatInt(modTime, 10)+"-"+strconv.FormatInt(rawSize, 10) {
		r.version = nil
	}
	if !strings.Contains(version, "\x00") && idem == key+"\x00"+version {
		r.idem = nil
	}
	// SQLite's substr counts characters up to a NUL byte.
	if name != "" && strings.HasSuffix(key, name) && utf8.ValidString(key) && !strings.Contains(key, "\x00") {
		r.name = utf8.RuneCountInString(name)
	}
	if path == pathOf(name) {
		r.path = nil
	}
	if meta == "{}" {
		r.meta = nil
	}
	return r
}

// pathOf is the JSON of the path [name].
func pathOf(name string) string {
	b, _ := json.Marshal([]string{name})
	return string(b)
}

// encodeOrigin returns the origin column of origin metadata m: NULL
// when empty, else its JSON.
func encodeOrigin(m map[string]string) any {
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m) // strings always marshal
	return string(b)
}

// insertDocRow inserts document row r with id (0: a new id) into table,
// documents or, while migrating to version 11, documents_new (which has
// no origin: migration 13 adds it), and returns its id. q runs
// statements in the write transaction, dirs knows key prefixes.
func insertDocRow(ctx context.Context, q rowFunc, dirs *dirCache, table string, id int64, r docRow) (int64, error) {
	dir, err := dirs.id(ctx, q, r.prefix)
	if err != nil {
		return 0, err
	}
	newID := sql.NullInt64{Int64: id, Valid: id != 0}
	args := []any{newID, dir, r.base, r.keyHash, r.idemHash, r.version, r.idem, r.name, r.source, r.parent, r.path,
		r.mediaType, r.meta, r.modTime, r.indexedAt, r.err, r.keep, r.rawSHA, r.rawSize, r.content}
	query := `INSERT INTO documents_new (id, dir, base, key_hash, idem_hash, version_id, idem, name, source, parent_id, path,
		media_type, meta, mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
	if table == "documents" {
		query = `INSERT INTO documents (id, dir, base, key_hash, idem_hash, version_id, idem, name, source, parent_id, path,
		media_type, meta, mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id, origin)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
		args = append(args, r.origin)
	}
	err = q(ctx, query, args...).Scan(&id)
	return id, err
}

// rowFunc runs a statement that returns a row.
type rowFunc func(ctx context.Context, query string, args ...any) interface{ Scan(...any) error }

// dirID returns the id of key prefix in doc_dirs, adding it if new.
// Prefixes are never deleted: few, and an id taken stays valid.
func dirID(ctx context.Context, q rowFunc, prefix string) (int64, error) {
	var id int64
	err := q(ctx, "SELECT id FROM doc_dirs WHERE prefix = ?", prefix).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = q(ctx, "INSERT INTO doc_dirs (prefix) VALUES (?) RETURNING id", prefix).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("key prefix %q: %w", prefix, err)
	}
	return id, nil
}

// maxDirCache bounds the key prefixes a dirCache remembers.
const maxDirCache = 1 << 16

// dirCache remembers the ids of key prefixes in doc_dirs, so that a put
// need not look each document's up (0.4 CPU-s of the writer's in a scan of
// 50,000 files). Prefixes are never deleted, so an id committed stays
// right, whichever process wrote it; those of a transaction are kept
// apart until it commits. Guarded by the writer's lock (Store.mu).
type dirCache struct {
	ids map[string]int64 // committed
	tx  map[string]int64 // found or added by the transaction under way
}

// id returns the id of prefix, adding it to doc_dirs if new.
func (c *dirCache) id(ctx context.Context, q rowFunc, prefix string) (int64, error) {
	if id, ok := c.ids[prefix]; ok {
		return id, nil
	}
	if id, ok := c.tx[prefix]; ok {
		return id, nil
	}
	id, err := dirID(ctx, q, prefix)
	if err != nil {
		return 0, err
	}
	if c.tx == nil {
		c.tx = map[string]int64{}
	}
	c.tx[prefix] = id
	return id, nil
}

// end ends the transaction under way, keeping what it found if it
// committed; a cache grown past maxDirCache starts over.
func (c *dirCache) end(committed bool) {
	if committed && len(c.tx) > 0 {
		if c.ids == nil || len(c.ids)+len(c.tx) > maxDirCache {
			c.ids = make(map[string]int64, len(c.tx))
		}
		for p, id := range c.tx {
			c.ids[p] = id
		}
	}
	clear(c.tx)
}

// txRows adapts tx to a rowFunc.
func txRows(tx *sql.Tx) rowFunc {
	return func(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
		return tx.QueryRowContext(ctx, query, args...)
	}
}

// compactDocuments (migration 11) moves the documents into rows encoded
// as encodeDoc does, keeping every id and field and the id sequence, and
// indexes keys and idempotency keys by their hashes.
func compactDocuments(ctx context.Context, tx *sql.Tx) error {
	var done bool
	err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('documents') WHERE name = 'dir'").Scan(&done)
	if err != nil || done {
		return err
	}
	if _, err := tx.ExecContext(ctx, docTable); err != nil {
		return fmt.Errorf("create the documents table: %w", err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, seqsQuery).Scan(&seq, new(int64)); err != nil {
		return fmt.Errorf("read the documents' sequence: %w", err)
	}
	if err := copyDocuments(ctx, tx); err != nil {
		return fmt.Errorf("copy documents: %w", err)
	}
	for _, q := range []string{
		"DROP TABLE documents",
		"ALTER TABLE documents_new RENAME TO documents",
		// The renamed table's sequence is where the copy left it, at the
		// largest id: ids removed above it must not come back.
		"DELETE FROM sqlite_sequence WHERE name = 'documents'",
		"INSERT INTO sqlite_sequence (name, seq) SELECT 'documents', " + strconv.FormatInt(seq, 10) + " WHERE " + strconv.FormatInt(seq, 10) + " > 0",
		docIndexes,
		docView11,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("compact documents: %w", err)
		}
	}
	return nil
}

// addOrigin (migration 13) adds the origin column, in which the rows
// written before read 0 (index.Doc.OriginMeta), and makes document_view
// give it back.
func addOrigin(ctx context.Context, tx *sql.Tx) error {
	var done bool
	err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('documents') WHERE name = 'origin'").Scan(&done)
	if err != nil {
		return fmt.Errorf("add the origin column: %w", err)
	}
	stmts := []string{"DROP VIEW IF EXISTS document_view", docView}
	if !done {
		stmts = append([]string{"ALTER TABLE documents ADD COLUMN origin DEFAULT 0"}, stmts...)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("add the origin column: %w", err)
		}
	}
	return nil
}

// docTable is the documents table since migration 11, made under
// another name beside the old one. name has no type: it holds a text or
// the length of the key's suffix it is.
const docTable = `
CREATE TABLE documents_new (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	dir         INTEGER NOT NULL, -- doc_dirs.id; no foreign key: checked at every insert, and prefixes are never deleted
	base        TEXT NOT NULL,
	key_hash    INTEGER NOT NULL,
	idem_hash   INTEGER NOT NULL,
	version_id  TEXT,
	idem        TEXT,
	name,
	source      TEXT NOT NULL DEFAULT '',
	parent_id   INTEGER REFERENCES documents_new(id) ON DELETE CASCADE,
	path        TEXT,
	media_type  TEXT NOT NULL DEFAULT '',
	meta        TEXT,
	mod_time    INTEGER NOT NULL DEFAULT 0,
	indexed_at  INTEGER NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	keep_versions INTEGER NOT NULL DEFAULT 0,
	raw_sha256  BLOB,
	raw_size    INTEGER NOT NULL DEFAULT 0,
	content_id  INTEGER REFERENCES contents(id)
);
`

// docIndexes are the indexes of the documents table since migration 11.
const docIndexes = `
CREATE INDEX documents_key ON documents(key_hash);
CREATE INDEX documents_idem ON documents(idem_hash);
CREATE INDEX documents_content ON documents(content_id) WHERE content_id IS NOT NULL;
CREATE INDEX documents_parent ON documents(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX documents_thread ON documents(json_extract(meta, '$.thread_id'))
	WHERE json_extract(meta, '$.thread_id') IS NOT NULL;
CREATE INDEX documents_message_id ON documents(json_extract(meta, '$.message_id'))
	WHERE json_extract(meta, '$.message_id') IS NOT NULL;`

// copyBatch is how many documents copyDocuments reads at a time.
const copyBatch = 1024

// oldDoc is a document row in the schema before migration 11.
type oldDoc struct {
	id                                   int64
	key, version, idem, name, path, meta string
	row                                  docRow // the fields stored as they are
}

// copyDocuments copies the rows of documents, in the schema before
// migration 11, into documents_new, copyBatch at a time by id (parents
// come first: ids grow).
func copyDocuments(ctx context.Context, tx *sql.Tx) error {
	var dirs dirCache
	for last := int64(0); ; {
		batch, err := readOldDocs(ctx, tx, last)
		if err != nil || len(batch) == 0 {
			return err
		}
		for _, o := range batch {
			r := encodeDoc(o.row, o.key, o.version, o.idem, o.name, o.path, o.meta)
			_, err := insertDocRow(ctx, txRows(tx), &dirs, "documents_new", o.id, r)
			if err != nil {
				return fmt.Errorf("document %d: %w", o.id, err)
			}
		}
		last = batch[len(batch)-1].id
	}
}

// readOldDocs reads up to copyBatch old document rows after id last.
func readOldDocs(ctx context.Context, tx *sql.Tx, last int64) ([]oldDoc, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, key, version_id, idem, name, source, parent_id, path, media_type, meta,
		mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id FROM documents WHERE id > ? ORDER BY id LIMIT ?`, last, copyBatch)
	var out []oldDoc
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var o oldDoc
		r := &o.row
		err := rows.Scan(&o.id, &o.key, &o.version, &o.idem, &o.name, &r.source, &r.parent, &o.path, &r.mediaType, &o.meta,
			&r.modTime, &r.indexedAt, &r.err, &r.keep, &r.rawSHA, &r.rawSize, &r.content)
		out = append(out, o)
		return err
	})
	return out, err
}
