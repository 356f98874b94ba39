package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

const docColumns = `d.id, d.key, d.version_id, d.idem, d.name, d.source, coalesce(d.parent_id, 0), d.path, d.media_type, d.meta,
	d.mod_time, d.indexed_at, d.error, d.keep_versions, d.raw_sha256, d.raw_size, coalesce(d.content_id, 0), c.text_sha256, coalesce(c.text_size, 0), d.origin`

const docFrom = ` FROM index_documents d LEFT JOIN index_contents c ON c.id = d.content_id `

// scanRecord reads one row of docColumns.
func scanRecord(row pgx.Row) (*index.Record, error) {
	var r index.Record
	var path, meta, origin []byte
	var modTime, indexedAt int64
	var rawSHA, textSHA, idem []byte
	err := row.Scan(&r.ID, &r.Key, &r.VersionID, &idem, &r.Name, &r.Source, &r.Parent, &path, &r.MediaType, &meta,
		&modTime, &indexedAt, &r.Error, &r.KeepVersions, &rawSHA, &r.RawSize, &r.Content, &textSHA, &r.TextSize, &origin)
	if err != nil {
		return nil, err
	}
	r.Idempotency = string(idem)
	copy(r.RawSHA256[:], rawSHA)
	copy(r.TextSHA[:], textSHA)
	if modTime != 0 {
		r.ModTime = time.Unix(0, modTime).UTC()
	}
	r.IndexedAt = time.Unix(0, indexedAt).UTC()
	if err := json.Unmarshal(path, &r.Path); err != nil {
		return nil, fmt.Errorf("decode path of document %d: %w", r.ID, err)
	}
	if err := json.Unmarshal(meta, &r.Meta); err != nil {
		return nil, fmt.Errorf("decode metadata of document %d: %w", r.ID, err)
	}
	if origin != nil { // NULL: written without it (index.Doc.OriginMeta)
		if err := json.Unmarshal(origin, &r.Origin); err != nil {
			return nil, fmt.Errorf("decode origin metadata of document %d: %w", r.ID, err)
		}
	}
	return &r, nil
}

// records reads the documents selected by where, a constant clause.
func (s *Store) records(ctx context.Context, what, where string, args ...any) ([]*index.Record, error) {
	if err := s.errClosed(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	rows, err := s.pool.Query(ctx, "SELECT "+docColumns+docFrom+where, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*index.Record, error) { return scanRecord(row) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Get returns the document with id.
func (s *Store) Get(ctx context.Context, id index.DocID) (*index.Record, error) {
	rs, err := s.records(ctx, fmt.Sprintf("get document %d", id), "WHERE d.id = $1", int64(id))
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
	what := fmt.Sprintf("look up %q", key)
	var rs []*index.Record
	var err error
	// A key column holds text, which cannot hold NUL or invalid UTF-8: such
	// a key can only be an idempotency key (which joins its parts with NUL).
	if utf8.ValidString(key) && !strings.ContainsRune(key, 0) {
		rs, err = s.records(ctx, what, "WHERE d.key = $1 ORDER BY d.id DESC", key)
	}
	if err == nil && len(rs) == 0 {
		rs, err = s.records(ctx, what, "WHERE d.idem = $1", []byte(key))
	}
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s: %w", what, index.ErrNotFound)
	}
	return rs, nil
}

// ByContent returns every document version whose text is one of
// contents, by id.
func (s *Store) ByContent(ctx context.Context, contents ...index.ContentID) ([]*index.Record, error) {
	if len(contents) == 0 {
		return nil, s.errClosed()
	}
	return s.records(ctx, fmt.Sprintf("documents of %d contents", len(contents)),
		"WHERE d.content_id = ANY($1) ORDER BY d.id", int64s(contents))
}

// Seen reports whether a document with this idempotency key is stored.
func (s *Store) Seen(ctx context.Context, idem string) (bool, error) {
	if err := s.errClosed(); err != nil {
		return false, err
	}
	var seen bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM index_documents WHERE idem = $1)", []byte(idem)).Scan(&seen); err != nil {
		return false, fmt.Errorf("check %q: %w", idem, err)
	}
	return seen, nil
}

// Documents calls fn with every document version, by id, reading them in
// pages so that fn may call the store.
func (s *Store) Documents(ctx context.Context, fn func(*index.Record) error) error {
	const page = 1000
	var after int64
	for {
		rs, err := s.records(ctx, "list documents", "WHERE d.id > $1 ORDER BY d.id LIMIT "+strconv.Itoa(page), after)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rs) < page {
			return nil
		}
		after = int64(rs[len(rs)-1].ID)
	}
}

// Find returns up to limit documents, newest first, whose name or key
// contains query ignoring ASCII case, or whose id is query.
func (s *Store) Find(ctx context.Context, query string, limit int) ([]*index.Record, error) {
	if query == "" || limit <= 0 {
		return nil, s.errClosed()
	}
	id, err := strconv.ParseInt(query, 10, 64)
	if err != nil {
		id = -1
	}
	q := asciiLower(query)
	return s.records(ctx, fmt.Sprintf("find %q", query), `WHERE d.id = $1
		OR strpos(translate(d.name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), $2) > 0
		OR strpos(translate(d.key, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), $2) > 0
		ORDER BY d.id DESC LIMIT $3`, id, q, limit)
}

// asciiLower lowers the ASCII letters of s only.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// Children returns the documents directly inside id, by id.
func (s *Store) Children(ctx context.Context, id index.DocID) ([]*index.Record, error) {
	return s.records(ctx, fmt.Sprintf("children of document %d", id), "WHERE d.parent_id = $1 ORDER BY d.id", int64(id))
}

// Text returns the extracted text kept for content, or index.ErrNoText.
func (s *Store) Text(ctx context.Context, content index.ContentID) ([]byte, error) {
	if err := s.errClosed(); err != nil {
		return nil, err
	}
	var data []byte
	err := s.pool.QueryRow(ctx, "SELECT data FROM index_texts WHERE content_id = $1", int64(content)).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("text of content %d: %w", content, index.ErrNoText)
	}
	if err != nil {
		return nil, fmt.Errorf("text of content %d: %w", content, err)
	}
	return data, nil
}

// metaWhere selects documents by one metadata value; the expression
// indexes of the migration serve them.
var metaWhere = map[string]string{
	index.MetaThreadID:  "WHERE d.meta ? 'thread_id' AND d.meta ->> 'thread_id' = $1 ORDER BY d.id",
	index.MetaMessageID: "WHERE d.meta ? 'message_id' AND d.meta ->> 'message_id' = $1 ORDER BY d.id",
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

// int64s converts ids or hashes to the int64s pgx sends (hashes keep
// their bits).
func int64s[T ~int64 | ~uint64](ids []T) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}
