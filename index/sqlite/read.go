package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/simdex/simdex/index"
)

// querier runs statements: a pool, a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// scanIDs reads rows of one id each and closes rows.
func scanIDs(rows *sql.Rows) (ids []int64, err error) {
	err = eachRow(rows, nil, func(rows *sql.Rows) error {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// eachRow calls fn with each of rows, the result of a query that failed
// with err if not nil, until fn fails, and closes rows.
func eachRow(rows *sql.Rows, err error, fn func(*sql.Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

const docColumns = `d.id, d.key, d.version_id, d.idem, d.name, d.source, d.parent_id, d.path, d.media_type, d.meta,
	d.mod_time, d.indexed_at, d.error, d.keep_versions, d.raw_sha256, d.raw_size, d.content_id, c.text_sha256, c.text_size, d.origin`

const docFrom = ` FROM document_view d LEFT JOIN contents c ON c.id = d.content_id `

func scanRecord(rows interface{ Scan(...any) error }) (*index.Record, error) {
	var r index.Record
	var parent, content, textSize sql.NullInt64
	var path, meta sql.NullString
	var modTime, indexedAt int64
	var rawSHA, textSHA []byte
	var origin any
	err := rows.Scan(&r.ID, &r.Key, &r.VersionID, &r.Idempotency, &r.Name, &r.Source, &parent, &path, &r.MediaType, &meta,
		&modTime, &indexedAt, &r.Error, &r.KeepVersions, &rawSHA, &r.RawSize, &content, &textSHA, &textSize, &origin)
	if err != nil {
		return nil, err
	}
	r.Parent = index.DocID(parent.Int64)
	r.Content = index.ContentID(content.Int64)
	r.TextSize = textSize.Int64
	copy(r.RawSHA256[:], rawSHA)
	copy(r.TextSHA[:], textSHA)
	if modTime != 0 {
		r.ModTime = time.Unix(0, modTime).UTC()
	}
	r.IndexedAt = time.Unix(0, indexedAt).UTC()
	if !path.Valid { // derived: see encodeDoc
		path.String = pathOf(r.Name)
	}
	if err := json.Unmarshal([]byte(path.String), &r.Path); err != nil {
		return nil, fmt.Errorf("decode path of document %d: %w", r.ID, err)
	}
	if !meta.Valid {
		meta.String = "{}"
	}
	if err := json.Unmarshal([]byte(meta.String), &r.Meta); err != nil {
		return nil, fmt.Errorf("decode metadata of document %d: %w", r.ID, err)
	}
	if r.Origin, err = decodeOrigin(origin); err != nil {
		return nil, fmt.Errorf("decode origin metadata of document %d: %w", r.ID, err)
	}
	return &r, nil
}

// decodeOrigin decodes the origin column (see encodeOrigin): nil for a
// row written before migration 13, which holds 0 there.
func decodeOrigin(v any) (map[string]string, error) {
	var text []byte
	switch v := v.(type) {
	case nil:
		return map[string]string{}, nil
	case int64:
		return nil, nil
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		return nil, fmt.Errorf("unexpected %T", v)
	}
	out := map[string]string{}
	if err := json.Unmarshal(text, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// records reads the documents selected by where, a constant clause.
func (s *Store) records(ctx context.Context, what, where string, args ...any) ([]*index.Record, error) {
	st, err := s.readStmt(ctx, "SELECT "+docColumns+docFrom+where)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, s.mapErr(err))
	}
	var out []*index.Record
	rows, err := st.QueryContext(ctx, args...)
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		r, err := scanRecord(rows)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, s.mapErr(err))
	}
	return out, nil
}

// Get returns the document with id.
func (s *Store) Get(ctx context.Context, id index.DocID) (*index.Record, error) {
	rs, err := s.records(ctx, fmt.Sprintf("get document %d", id), "WHERE d.id = ?", int64(id))
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("get document %d: %w", id, index.ErrNotFound)
	}
	return rs[0], nil
}

// Lookup returns the versions of key, newest first, or the document whose
// idempotency key is key.
func (s *Store) Lookup(ctx context.Context, key string) ([]*index.Record, error) {
	rs, err := s.records(ctx, fmt.Sprintf("look up %q", key), "WHERE d.key_hash = ? AND d.key = ? ORDER BY d.id DESC", strHash(key), key)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		rs, err = s.records(ctx, fmt.Sprintf("look up %q", key), "WHERE d.idem_hash = ? AND d.idem = ?", strHash(key), key)
		if err != nil {
			return nil, err
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("look up %q: %w", key, index.ErrNotFound)
	}
	return rs, nil
}

// ByContent returns every document version whose text is one of
// contents, by id. The contents travel as one JSON list, so that the
// statement's text stays the same (and prepared) whatever their number.
func (s *Store) ByContent(ctx context.Context, contents ...index.ContentID) ([]*index.Record, error) {
	if len(contents) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(contents)
	if err != nil {
		return nil, fmt.Errorf("documents of %d contents: %w", len(contents), err)
	}
	return s.records(ctx, fmt.Sprintf("documents of %d contents", len(contents)), "WHERE d.content_id IN (SELECT value FROM json_each(?)) ORDER BY d.id", string(list))
}

// Seen reports whether a document with this idempotency key is stored.
func (s *Store) Seen(ctx context.Context, idem string) (bool, error) {
	var one int
	st, err := s.readStmt(ctx, "SELECT 1 FROM document_view WHERE idem_hash = ? AND idem = ?")
	if err == nil {
		err = st.QueryRowContext(ctx, strHash(idem), idem).Scan(&one)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check %q: %w", idem, s.mapErr(err))
	}
	return true, nil
}

// Documents calls fn with every document version, by id.
func (s *Store) Documents(ctx context.Context, fn func(*index.Record) error) error {
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT "+docColumns+docFrom+"ORDER BY d.id")
	if err != nil {
		return fmt.Errorf("list documents: %w", s.mapErr(err))
	}
	return eachRow(rows, nil, func(rows *sql.Rows) error {
		r, err := scanRecord(rows)
		if err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		return fn(r)
	})
}

// metaWhere selects documents by one metadata value. The paths are
// literal so that the expression indexes of migration 9 serve them.
var metaWhere = map[string]string{
	index.MetaThreadID:  "WHERE json_extract(d.meta, '$.thread_id') = ? ORDER BY d.id",
	index.MetaMessageID: "WHERE json_extract(d.meta, '$.message_id') = ? ORDER BY d.id",
}

// ByMeta returns the documents whose metadata key, index.MetaThreadID or
// index.MetaMessageID, equals value, by id.
func (s *Store) ByMeta(ctx context.Context, key, value string) ([]*index.Record, error) {
	where, ok := metaWhere[key]
	if !ok {
		return nil, fmt.Errorf("documents by metadata %q: not an indexed key", key)
	}
	return s.records(ctx, "documents with "+key, where, value)
}

var _ index.MetaFinder = (*Store)(nil)

var _ index.Snapshotter = (*Store)(nil)

// snapshotKey holds a store's snapshot, the read transaction a series of
// reads share, in a context: each store its own, so that one's snapshot
// does not hide another's.
type snapshotKey struct{ s *Store }

// Snapshot implements index.Snapshotter: the reads of this store given the
// returned context run in one read transaction, on one of the readers'
// connections, held until done is called. A near-copy search reads a
// document, its fingerprint, its candidates' and then their documents:
// each on a connection of its own missed the pages the one before had
// read into its connection's cache.
//
// Every read method honours the snapshot: one that took another connection
// while the snapshot holds one could wait for ever once every connection
// is held by a snapshot.
func (s *Store) Snapshot(ctx context.Context) (context.Context, func(), error) {
	if s.snapshotIn(ctx) != nil {
		return ctx, func() {}, nil
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return ctx, nil, fmt.Errorf("begin read snapshot: %w", s.mapErr(err))
	}
	return context.WithValue(ctx, snapshotKey{s}, tx), func() { _ = tx.Rollback() }, nil
}

// snapshotIn returns this store's snapshot in ctx, or nil.
func (s *Store) snapshotIn(ctx context.Context) *sql.Tx {
	sn, _ := ctx.Value(snapshotKey{s}).(*sql.Tx)
	return sn
}

// readTx returns the read transaction of ctx's snapshot, or a new one; end
// ends it (and does nothing for a snapshot's, which its owner ends).
func (s *Store) readTx(ctx context.Context) (tx *sql.Tx, end func(), err error) {
	if sn := s.snapshotIn(ctx); sn != nil {
		return sn, func() {}, nil
	}
	if tx, err = s.r.BeginTx(ctx, nil); err != nil {
		return nil, nil, s.mapErr(err)
	}
	return tx, func() { _ = tx.Rollback() }, nil
}

// readStmt returns the readers' statement for query, bound to ctx's
// snapshot if it has one.
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if sn := s.snapshotIn(ctx); sn != nil {
		return s.rs.in(ctx, sn, query)
	}
	return s.rs.get(ctx, query)
}

// reads returns what ctx's reads of unprepared statements run on: the
// readers' pool, or ctx's snapshot.
func (s *Store) reads(ctx context.Context) querier {
	if sn := s.snapshotIn(ctx); sn != nil {
		return sn
	}
	return s.r
}
