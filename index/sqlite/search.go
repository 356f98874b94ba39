package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/simdex/simdex/index"
)

// Candidates returns contents that share a band key or a chunk.
func (s *Store) Candidates(ctx context.Context, q index.CandidateQuery) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	gen := s.over.start(s.now())
	tx, end, err := s.readTx(ctx) // one read lock for every lookup
	if err != nil {
		return nil, fmt.Errorf("find candidates: %w", err)
	}
	defer end()
	seen := make(map[index.ContentID]struct{})
	var out []index.ContentID
	add := func(cs []int64) {
		for _, c := range cs {
			if _, ok := seen[index.ContentID(c)]; !ok {
				seen[index.ContentID(c)] = struct{}{}
				out = append(out, index.ContentID(c))
			}
		}
	}
	if err := s.bandCandidates(ctx, tx, &q, add); err != nil {
		return nil, err
	}
	keys := make([]int64, 0, len(q.Chunks))
	for _, h := range q.Chunks {
		keys = append(keys, postingKey(h))
	}
	// One more than allowed is fetched: a chunk held by more contents than
	// MaxChunkDocs is boilerplate and contributes no candidates.
	lists, err := s.boundedLists(ctx, tx, gen, "chunk_postings", keys, q.MaxChunkDocs)
	if err != nil {
		return nil, fmt.Errorf("find candidates by chunk: %w", s.mapErr(err))
	}
	for _, k := range keys {
		if cs := lists[k]; len(cs) <= q.MaxChunkDocs {
			add(cs)
		}
	}
	return out, nil
}

// bandCandidates adds the contents sharing q's band keys. A stored
// text's band keys that no other content holds need not be looked up
// (bandshares.go); its content is a candidate by itself. When the stored
// text's partners are listed, they are its band candidates: no band key
// is looked up at all.
func (s *Store) bandCandidates(ctx context.Context, tx *sql.Tx, q *index.CandidateQuery, add func([]int64)) error {
	self, mask, partners, known, err := s.storedBands(ctx, tx, q.TextSHA256, q.Content)
	if err != nil {
		return fmt.Errorf("find candidates: %w", s.mapErr(err))
	}
	if self != 0 {
		add([]int64{self})
	}
	if self != 0 && known {
		add(partners)
		return nil
	}
	keys := make([]int64, 0, len(q.Bands))
	for i, b := range q.Bands {
		if self == 0 || i >= maskBands || mask&(1<<i) != 0 {
			keys = append(keys, postingKey(b))
		}
	}
	lists, err := s.wholeLists(ctx, tx, "band_postings", keys)
	if err != nil {
		return fmt.Errorf("find candidates by band: %w", s.mapErr(err))
	}
	for _, k := range keys {
		add(lists[k])
	}
	return nil
}

// Fingerprints loads the fingerprints of ids.
func (s *Store) Fingerprints(ctx context.Context, ids []index.ContentID, fn func(index.ContentID, *index.Fingerprint) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// A list in one argument keeps the statement's text constant (and so
	// prepared once), whatever the number of ids.
	list, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", err)
	}
	st, err := s.readStmt(ctx, "SELECT id, text_sha256, text_size, simhash, body FROM contents WHERE id IN (SELECT value FROM json_each(?))")
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", s.mapErr(err))
	}
	rows, err := st.QueryContext(ctx, string(list))
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", s.mapErr(err))
	}
	if err := scanFingerprints(rows, fn); err != nil {
		return fmt.Errorf("load fingerprints: %w", err)
	}
	return nil
}

func scanFingerprints(rows *sql.Rows, fn func(index.ContentID, *index.Fingerprint) error) error {
	defer rows.Close()
	for rows.Next() {
		var id, simhash int64
		// Raw: the body is decoded and the hash copied before Next, and a
		// copy of each was a tenth of a search's garbage.
		var sha, body sql.RawBytes
		fp := new(index.Fingerprint)
		if err := rows.Scan(&id, &sha, &fp.TextSize, &simhash, &body); err != nil {
			return err
		}
		copy(fp.TextSHA256[:], sha)
		fp.SimHash = uint64(simhash)
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("content %d: %w", id, err)
		}
		if err := fn(index.ContentID(id), fp); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SimHashes calls fn with every content's SimHash, in SimHash order (that
// of the covering index it reads).
func (s *Store) SimHashes(ctx context.Context, fn func(index.ContentID, uint64) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	// From the covering index: a scan of contents would read every body.
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT id, simhash FROM contents INDEXED BY contents_simhash")
	if err != nil {
		return fmt.Errorf("read simhashes: %w", s.mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id, h int64
		if err := rows.Scan(&id, &h); err != nil {
			return fmt.Errorf("read simhashes: %w", err)
		}
		if err := fn(index.ContentID(id), uint64(h)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryByKeys runs query in tx with keys as its first parameter, a JSON
// list (read with json_each), and args after: one statement for any
// number of keys, whose text stays constant.
func (s *Store) queryByKeys(ctx context.Context, tx *sql.Tx, query string, keys []int64, args ...any) (*sql.Rows, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	st, err := s.rs.in(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, append([]any{string(list)}, args...)...)
}

// wholeLists returns, for each key, every content posted under it in
// table, from a plain join: a row per posting, cheaper than postingLists's
// lists built as text when nothing bounds them (band keys are held by a
// content and its near-copies).
func (s *Store) wholeLists(ctx context.Context, tx *sql.Tx, table string, keys []int64) (map[int64][]int64, error) {
	out := make(map[int64][]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.queryByKeys(ctx, tx, `SELECT p.h, p.c FROM (SELECT DISTINCT value FROM json_each(?)) j JOIN `+table+` p ON p.h = j.value`, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, c int64
		if err := rows.Scan(&k, &c); err != nil {
			return nil, err
		}
		out[k] = append(out[k], c)
	}
	return out, rows.Err()
}

// postingLists returns, for each key, the contents posted under it in
// table, at most limit+1 of them (so that a caller can tell a key held by
// more than limit contents), in one statement: a statement per key costs
// more in the driver than the lookups themselves.
func (s *Store) postingLists(ctx context.Context, tx *sql.Tx, table string, keys []int64, limit int) (map[int64][]int64, error) {
	out := make(map[int64][]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.queryByKeys(ctx, tx, `SELECT j.value, (SELECT group_concat(c) FROM (SELECT c FROM `+table+` WHERE h = j.value LIMIT ?2))
		FROM (SELECT DISTINCT value FROM json_each(?1)) j`, keys, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k int64
		var cs sql.NullString
		if err := rows.Scan(&k, &cs); err != nil {
			return nil, err
		}
		if !cs.Valid || cs.String == "" {
			continue
		}
		ids, err := parseIDs(cs.String)
		if err != nil {
			return nil, fmt.Errorf("posting list of %d: %w", k, err)
		}
		out[k] = ids
	}
	return out, rows.Err()
}
