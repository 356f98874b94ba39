package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/simdex/simdex/index"
)

// codecZstd names texts compressed with Zstandard; the codec is stored
// with each text so another can be added without a migration.
const codecZstd = "zstd"

// maxText bounds what a stored text may inflate to, so a corrupt row cannot
// exhaust memory.
const maxText = 1 << 30

var (
	textEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest)) // one encoder per core: Prepare runs on every goroutine that adds
	textDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxText), zstd.WithDecoderConcurrency(0))
)

// preparedText is a text compressed by Prepare.
type preparedText []byte

// Prepare compresses the texts of entries whose content is not stored yet,
// on the caller's goroutine: compressing them in the transaction made the
// single writer spend a twentieth of a bulk scan on it while the other
// cores idled. Texts of stored contents are not needed; Put compresses any
// text left unprepared that turns out to be needed (a content removed
// meanwhile).
func (s *Store) Prepare(ctx context.Context, entries []index.Entry) {
	for i := range entries {
		e := &entries[i]
		if e.Text == nil || e.Fingerprint == nil {
			continue
		}
		var one int
		known, err := s.readStmt(ctx, "SELECT 1 FROM contents WHERE text_sha256 = ?")
		if err == nil {
			err = known.QueryRowContext(ctx, e.Fingerprint.TextSHA256[:]).Scan(&one)
		}
		if err == nil {
			continue // stored, and its text with it
		}
		e.Prepared = preparedText(compressText(e.Text))
	}
}

func compressText(text []byte) []byte {
	return textEncoder.EncodeAll(text, make([]byte, 0, len(text)/3))
}

// putText keeps the extracted text of content c, once; prepared is the
// entry's Prepared.
func putText(ctx context.Context, stmts *txStmts, c index.ContentID, text []byte, prepared any) error {
	var one int
	known, err := stmts.prepare(ctx, "SELECT 1 FROM texts WHERE content_id = ?")
	if err != nil {
		return err
	}
	err = known.QueryRowContext(ctx, int64(c)).Scan(&one)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var data []byte
	if p, ok := prepared.(preparedText); ok {
		data = p
	} else {
		data = compressText(text)
	}
	insert, err := stmts.prepare(ctx, "INSERT INTO texts (content_id, codec, data) VALUES (?, ?, ?)")
	if err != nil {
		return err
	}
	_, err = insert.ExecContext(ctx, int64(c), codecZstd, data)
	return err
}

// Text returns the extracted text kept for content.
func (s *Store) Text(ctx context.Context, content index.ContentID) ([]byte, error) {
	var codec string
	var data []byte
	st, err := s.readStmt(ctx, "SELECT codec, data FROM texts WHERE content_id = ?")
	if err == nil {
		err = st.QueryRowContext(ctx, int64(content)).Scan(&codec, &data)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("text of content %d: %w", content, index.ErrNoText)
	}
	if err != nil {
		return nil, fmt.Errorf("text of content %d: %w", content, s.mapErr(err))
	}
	if codec != codecZstd {
		return nil, fmt.Errorf("text of content %d: unknown codec %q", content, codec)
	}
	text, err := textDecoder.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("text of content %d: decompress: %w", content, err)
	}
	return text, nil
}

// likeEscaper escapes LIKE's wildcards, with \ as the escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Find returns up to limit documents, newest first, whose name or key
// contains query (ASCII case ignored), or whose id is query.
func (s *Store) Find(ctx context.Context, query string, limit int) ([]*index.Record, error) {
	query = strings.TrimSpace(query)
	if query == "" || limit <= 0 {
		return nil, nil
	}
	what := fmt.Sprintf("find %q", query)
	var out []*index.Record
	if id, err := strconv.ParseInt(query, 10, 64); err == nil && id > 0 {
		rs, err := s.records(ctx, what, "WHERE d.id = ?", id)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	pattern := "%" + likeEscaper.Replace(query) + "%"
	rs, err := s.records(ctx, what, `WHERE (d.name LIKE ? ESCAPE '\' OR d.key LIKE ? ESCAPE '\') ORDER BY d.id DESC LIMIT ?`,
		pattern, pattern, limit)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if len(out) == limit {
			break
		}
		if len(out) > 0 && out[0].ID == r.ID {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Children returns the documents directly inside id, by id.
func (s *Store) Children(ctx context.Context, id index.DocID) ([]*index.Record, error) {
	return s.records(ctx, fmt.Sprintf("children of document %d", id), "WHERE d.parent_id = ? ORDER BY d.id", int64(id))
}
