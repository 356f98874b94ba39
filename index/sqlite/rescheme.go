package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/sqlitedb"
)

// A store whose fingerprints are of another scheme than Options.Scheme
// (made by a simdex with another normal form, or other chunk or sketch
// parameters) opens stale: every method that reads or writes fingerprints
// or postings returns index.ErrSchemeMismatch until Refingerprint has made
// them again from the kept texts (index.New calls it). See docs/store.md.

// RecordedScheme returns the fingerprint scheme the index file at path
// records, without changing it, or 0 when the file does not exist or
// records none yet (a new index). Callers pass it to
// index.Options.ForScheme before opening the store, so that an index keeps
// the scheme it was built with when the defaults change.
func RecordedScheme(ctx context.Context, path string) (uint32, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	db, err := sql.Open("sqlite", sqlitedb.URI(path, "mode=ro&_pragma=busy_timeout(10000)"))
	if err != nil {
		return 0, fmt.Errorf("read fingerprint scheme of %s: %w", path, err)
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'scheme'").Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err != nil && strings.Contains(err.Error(), "no such table"):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read fingerprint scheme of %s: %w", path, err)
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("read fingerprint scheme of %s: %q: %w", path, v, err)
	}
	return uint32(n), nil
}

// errStale is returned by the methods of a stale store.
func (s *Store) errStale() error {
	if old := s.stale.Load(); old != nil {
		return fmt.Errorf("%w: store holds scheme %s, index uses %d: open it with index.New, which fingerprints its texts again",
			index.ErrSchemeMismatch, *old, s.scheme)
	}
	return nil
}

// refingerprintBatch is how many contents Refingerprint reads at a time.
const refingerprintBatch = 256

var _ index.Refingerprinter = (*Store)(nil)

// Refingerprint implements index.Refingerprinter: in one transaction, it
// drops every posting and band share, fingerprints each content again
// from its kept text with fn, merges the contents whose texts become
// identical, posts the new fingerprints, computes the band shares and
// records the scheme. A crash leaves the store as it was, stale, and the
// next open starts over.
func (s *Store) Refingerprint(ctx context.Context, fn func(text []byte) (*index.Fingerprint, []uint64, error)) (int, error) {
	old := s.stale.Load()
	if old == nil {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	log := s.logger
	log.Info("fingerprinting the index's texts again", "path", s.path, "from_scheme", *old, "to_scheme", s.scheme)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("refingerprint: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	stmts := &txStmts{tx: tx, pool: s.ws}
	n, err := s.refingerprintTx(ctx, stmts, *old, fn)
	if err != nil {
		return 0, fmt.Errorf("refingerprint: %w", s.mapErr(err))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("refingerprint: commit: %w", s.mapErr(err))
	}
	s.stale.Store(nil)
	s.over.forget()
	s.committed()
	if s.memWanted {
		s.startAnchors()
	}
	log.Info("fingerprinted the index's texts again", "path", s.path, "contents", n, "seconds", time.Since(start).Seconds())
	return n, nil
}

// refingerprintTx does Refingerprint's work in stmts's transaction.
func (s *Store) refingerprintTx(ctx context.Context, stmts *txStmts, old string, fn func([]byte) (*index.Fingerprint, []uint64, error)) (int, error) {
	tx := stmts.tx
	var all, missing int
	err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM texts t WHERE t.content_id = c.id)) FROM contents c`).Scan(&all, &missing)
	if err != nil {
		return 0, fmt.Errorf("count the texts kept: %w", err)
	}
	if missing > 0 {
		return 0, fmt.Errorf("%w: %w: %d of the index's %d contents were fingerprinted with scheme %s and their texts were not kept (index.keep_text: false), so they cannot be fingerprinted with scheme %d; index the sources again into a new index (simdex scan --index NEW DIR..., or a new index.path for the daemon), or go on with the simdex that made this one",
			index.ErrSchemeMismatch, index.ErrNoText, missing, all, old, s.scheme)
	}
	for _, q := range []string{
		"DELETE FROM chunk_postings", "DELETE FROM band_postings", "DELETE FROM anchor_blocks",
		"DELETE FROM band_shares", "DELETE FROM pending_postings",
		"DELETE FROM meta WHERE key = '" + bandSharesStaleKey + "'",
		// Out of the way of the new hashes, which are 32 bytes long.
		"UPDATE contents SET text_sha256 = X'00' || text_sha256",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	var posts postings
	var buf []byte
	n := 0
	for last := int64(0); ; {
		ids, err := queryIDs(ctx, tx, "SELECT id FROM contents WHERE id > ? ORDER BY id LIMIT ?", last, refingerprintBatch)
		if err != nil {
			return 0, fmt.Errorf("list contents: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			if err := refingerprintContent(ctx, stmts, id, fn, &posts, &buf); err != nil {
				return 0, fmt.Errorf("content %d: %w", id, err)
			}
			n++
		}
		if err := posts.flush(ctx, stmts); err != nil {
			return 0, err
		}
		last = ids[len(ids)-1]
	}
	if _, err := bumpAnchorsGen(ctx, stmts); err != nil {
		return 0, err
	}
	if err := backfillBandShares(ctx, tx); err != nil {
		return 0, fmt.Errorf("band shares: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE meta SET value = ? WHERE key = 'scheme'", fmt.Sprint(s.scheme)); err != nil {
		return 0, fmt.Errorf("record fingerprint scheme: %w", err)
	}
	return n, nil
}

// refingerprintContent fingerprints content id again from its text: it
// takes the new fingerprint, or merges into the content already holding
// the same text, or, if fn refuses the text, leaves its documents with
// the error.
func refingerprintContent(ctx context.Context, stmts *txStmts, id int64, fn func([]byte) (*index.Fingerprint, []uint64, error), posts *postings, buf *[]byte) error {
	tx := stmts.tx
	text, err := textIn(ctx, tx, id)
	if err != nil {
		return err
	}
	fp, bands, err := fn(text)
	if err != nil {
		if !errors.Is(err, index.ErrEmpty) && !errors.Is(err, index.ErrInvalidText) {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE documents SET content_id = NULL, error = ? WHERE content_id = ?", err.Error(), id); err != nil {
			return fmt.Errorf("record the error of its documents: %w", err)
		}
		return dropContent(ctx, stmts, id)
	}
	var into int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM contents WHERE text_sha256 = ?", fp.TextSHA256[:]).Scan(&into)
	switch {
	case err == nil:
		return mergeContent(ctx, stmts, id, into)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("look its text up: %w", err)
	}
	*buf = fp.AppendBody((*buf)[:0])
	keys := make([]int64, len(bands))
	for i, b := range bands {
		keys[i] = postingKey(b)
	}
	bandBlob := encodeBands(fp, bands, keys)
	_, err = tx.ExecContext(ctx, "UPDATE contents SET text_sha256 = ?, text_size = ?, simhash = ?, body = ?, bands = ?, anchors = ? WHERE id = ?",
		fp.TextSHA256[:], fp.TextSize, int64(fp.SimHash), *buf, bandBlob, len(fp.Anchors()), id)
	if err != nil {
		return fmt.Errorf("store its fingerprint: %w", err)
	}
	posts.addContent(id, fp, keys)
	return nil
}

// mergeContent moves the documents of content id, and its references,
// to content into, which has the same text, and deletes id.
func mergeContent(ctx context.Context, stmts *txStmts, id, into int64) error {
	tx := stmts.tx
	if _, err := tx.ExecContext(ctx, "UPDATE documents SET content_id = ? WHERE content_id = ?", into, id); err != nil {
		return fmt.Errorf("move its documents to content %d: %w", into, err)
	}
	_, err := tx.ExecContext(ctx, "UPDATE contents SET refs = refs + (SELECT refs FROM contents WHERE id = ?) WHERE id = ?", id, into)
	if err != nil {
		return fmt.Errorf("merge into content %d: %w", into, err)
	}
	return dropContent(ctx, stmts, id)
}

// dropContent deletes content id, which no document uses any more, and
// its text. Its postings are gone already.
func dropContent(ctx context.Context, stmts *txStmts, id int64) error {
	if err := releaseText(ctx, stmts, id); err != nil {
		return err
	}
	if _, err := stmts.tx.ExecContext(ctx, "DELETE FROM contents WHERE id = ?", id); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

// textIn reads content id's kept text in tx.
func textIn(ctx context.Context, tx *sql.Tx, id int64) ([]byte, error) {
	var codec string
	var data []byte
	err := tx.QueryRowContext(ctx, "SELECT codec, data FROM texts WHERE content_id = ?", id).Scan(&codec, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, index.ErrNoText
	}
	if err != nil {
		return nil, fmt.Errorf("read its text: %w", err)
	}
	switch codec {
	case codecZstd:
		text, err := textDecoder.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("decompress its text: %w", err)
		}
		return text, nil
	case codecPieces:
		return readPieces(ctx, tx, data)
	}
	return nil, fmt.Errorf("%w: unknown text codec %q", ErrInconsistent, codec)
}
