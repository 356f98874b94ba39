package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Anchor postings are stored in blocks: one row holds up to anchorBlockIDs
// content ids of one anchor, ascending, delta-encoded, each with the
// content's anchor count (which the share rule of AnchorCandidates divides
// by). A query reads the lists of about thirty anchors, each tens to a
// thousand contents long; as a row per posting, followed by a lookup of
// each candidate's anchor count in contents, that was thousands of B-tree
// steps per query, 60 % of an "all versions" query's CPU at 1,000,000
// documents. In blocks it is a few rows per anchor.
//
// Content ids only grow, so a new posting nearly always goes at the end of
// its anchor's last block; removal rewrites the one block holding the id.
//
//	CREATE TABLE anchor_blocks (
//		h     INTEGER NOT NULL, -- posting key of the anchor
//		first INTEGER NOT NULL, -- the block's smallest content id
//		n     INTEGER NOT NULL, -- ids in the block
//		ids   BLOB NOT NULL,    -- uvarints: first's anchor count, then
//		                        -- the gap to each next id and its count
//		PRIMARY KEY (h, first)) WITHOUT ROWID
const anchorBlockIDs = 64

// anchorTable names the anchor postings for the overfull cache and errors.
const anchorTable = "anchor_blocks"

// errBadBlock reports an anchor block that does not decode.
var errBadBlock = errors.New("malformed anchor block")

// anchorPosting is one content posted under an anchor, with its anchor
// count.
type anchorPosting struct {
	c int64
	n int32
}

// encodeBlock returns the ids column of a block holding ps (ascending by
// content, not empty).
func encodeBlock(ps []anchorPosting) []byte {
	b := make([]byte, 0, 3*len(ps))
	b = binary.AppendUvarint(b, uint64(ps[0].n))
	for i := 1; i < len(ps); i++ {
		b = binary.AppendUvarint(b, uint64(ps[i].c-ps[i-1].c))
		b = binary.AppendUvarint(b, uint64(ps[i].n))
	}
	return b
}

// decodeBlock appends the n postings of the block (first, data) to dst.
func decodeBlock(dst []anchorPosting, first int64, n int, data []byte) ([]anchorPosting, error) {
	if n < 1 || n > anchorBlockIDs {
		return dst, fmt.Errorf("%w: %d ids", errBadBlock, n)
	}
	c := first
	for i := range n {
		if i > 0 {
			g, k := uvarint(data)
			if k <= 0 || g == 0 || g > uint64(math.MaxInt64-c) {
				return dst, fmt.Errorf("%w: gap %d of %d", errBadBlock, i, n)
			}
			data = data[k:]
			c += int64(g)
		}
		a, k := uvarint(data)
		if k <= 0 || a > math.MaxInt32 {
			return dst, fmt.Errorf("%w: anchor count %d of %d", errBadBlock, i, n)
		}
		data = data[k:]
		dst = append(dst, anchorPosting{c, int32(a)})
	}
	if len(data) != 0 {
		return dst, fmt.Errorf("%w: %d bytes after %d ids", errBadBlock, len(data), n)
	}
	return dst, nil
}

// uvarint is binary.Uvarint refusing over-long encodings (a last byte of
// 0), which encodeBlock never writes.
func uvarint(b []byte) (uint64, int) {
	v, k := binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, -k
	}
	return v, k
}

// block is one decoded anchor block.
type block struct {
	h     int64
	first int64 // key of the stored row
	ps    []anchorPosting
}

// newBlockWriter writes anchor block rows, replacing a stored block with
// the same key and first id.
func newBlockWriter(ctx context.Context, stmts *txStmts) *rowWriter {
	return &rowWriter{ctx: ctx, stmts: stmts, insert: "INSERT OR REPLACE INTO anchor_blocks (h, first, n, ids)", cols: 4}
}

func putBlock(w *rowWriter, h int64, ps []anchorPosting) error {
	return w.put(h, ps[0].c, len(ps), encodeBlock(ps))
}

// addAnchorPostings stores rows (sorted by key, then content) in the anchor
// blocks. Each key's new postings are appended to its last block, read for
// all keys in one statement, and to new blocks after it; a content not
// above the last block's (never the case for new contents, whose ids grow)
// goes through insertAnchor.
func addAnchorPostings(ctx context.Context, stmts *txStmts, rows []posting) error {
	if len(rows) == 0 {
		return nil
	}
	keys := make([]int64, 0, len(rows))
	for i, r := range rows {
		if i == 0 || r.h != rows[i-1].h {
			keys = append(keys, r.h)
		}
	}
	lookup, err := stmts.heldAnchorKeys(ctx, keys)
	if err != nil {
		return err
	}
	last, err := lastBlocks(ctx, stmts, lookup)
	if err != nil {
		return err
	}
	if stmts.mem != nil {
		if stmts.anchorKeys == nil {
			stmts.anchorKeys = make(map[int64]struct{}, len(keys))
		}
		for _, h := range keys {
			stmts.anchorKeys[h] = struct{}{}
		}
	}
	w := newBlockWriter(ctx, stmts)
	for len(rows) > 0 {
		h := rows[0].h
		k := 1
		for k < len(rows) && rows[k].h == h {
			k++
		}
		ps := make([]anchorPosting, 0, k)
		for _, r := range rows[:k] {
			if len(ps) == 0 || r.c != ps[len(ps)-1].c {
				ps = append(ps, anchorPosting{r.c, r.n})
			}
		}
		rows = rows[k:]
		for _, p := range ps {
			stmts.anchors.add(h, p.c, p.n)
		}
		b := last[h]
		var tail []anchorPosting // the last block's postings, then the new ones
		if b != nil {
			if ps[0].c <= b.ps[len(b.ps)-1].c {
				// Out of order: rare, so one at a time.
				if err := w.flush(); err != nil {
					return err
				}
				for _, p := range ps {
					if err := insertAnchor(ctx, stmts.tx, h, p); err != nil {
						return err
					}
				}
				continue
			}
			if len(b.ps) < anchorBlockIDs {
				tail = b.ps // a full block stays as it is
			}
		}
		tail = append(tail, ps...)
		for len(tail) > 0 {
			n := min(len(tail), anchorBlockIDs)
			if err := putBlock(w, h, tail[:n]); err != nil {
				return err
			}
			tail = tail[n:]
		}
	}
	return w.flush()
}

// lastBlocks reads the last block of each key that has one.
// heldAnchorKeys returns the keys of keys that may have a block: all of
// them, unless the in-memory lists are at the transaction's generation,
// when those the lists hold (by their low 32 bits, so a superset) or the
// transaction wrote. In a live index most anchors of a new text are new
// keys, and looking each one's last block up was a fifth of a Put's CPU.
func (t *txStmts) heldAnchorKeys(ctx context.Context, keys []int64) ([]int64, error) {
	d := t.anchors
	if t.mem == nil || d == nil {
		return keys, nil
	}
	if err := d.bump(ctx, t); err != nil {
		return nil, err
	}
	held, ok := t.mem.held(keys, d.before)
	if !ok {
		return keys, nil
	}
	for _, h := range keys {
		if _, wrote := t.anchorKeys[h]; wrote {
			held = append(held, h)
		}
	}
	return held, nil
}

func lastBlocks(ctx context.Context, stmts *txStmts, keys []int64) (map[int64]*block, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := stmts.query(ctx, `SELECT b.h, b.first, b.n, b.ids FROM (SELECT DISTINCT value AS h FROM json_each(?)) j
		JOIN anchor_blocks b ON b.h = j.h AND b.first = (SELECT max(first) FROM anchor_blocks WHERE h = j.h)`, string(list))
	out := make(map[int64]*block)
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		b, err := scanBlock(rows)
		if err == nil {
			out[b.h] = b
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", anchorTable, err)
	}
	return out, nil
}

func scanBlock(rows interface{ Scan(...any) error }) (*block, error) {
	var b block
	var n int
	var gaps []byte
	if err := rows.Scan(&b.h, &b.first, &n, &gaps); err != nil {
		return nil, fmt.Errorf("read %s: %w", anchorTable, err)
	}
	var err error
	if b.ps, err = decodeBlock(nil, b.first, n, gaps); err != nil {
		return nil, fmt.Errorf("read %s of key %d: %w", anchorTable, b.h, err)
	}
	return &b, nil
}

// blockOf reads the block of key h that holds c if any: the one with the
// greatest first not above c, or else the key's first block.
func blockOf(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, h, c int64) (*block, error) {
	b, err := scanBlock(q.QueryRowContext(ctx, "SELECT h, first, n, ids FROM anchor_blocks WHERE h = ? AND first <= ? ORDER BY first DESC LIMIT 1", h, c))
	if errors.Is(err, sql.ErrNoRows) {
		b, err = scanBlock(q.QueryRowContext(ctx, "SELECT h, first, n, ids FROM anchor_blocks WHERE h = ? ORDER BY first LIMIT 1", h))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// insertAnchor posts p under key h wherever it belongs, splitting a block
// that grows over anchorBlockIDs.
func insertAnchor(ctx context.Context, tx *sql.Tx, h int64, p anchorPosting) error {
	b, err := blockOf(ctx, tx, h, p.c)
	if err != nil {
		return err
	}
	if b == nil {
		b = &block{h: h}
	}
	i, found := slices.BinarySearchFunc(b.ps, p.c, byContent)
	if found {
		return nil
	}
	return rewriteBlock(ctx, tx, b, slices.Insert(b.ps, i, p))
}

func byContent(p anchorPosting, c int64) int { return cmp.Compare(p.c, c) }

// removeAnchor takes content c out of key h's postings, if it is there.
func removeAnchor(ctx context.Context, tx *sql.Tx, h, c int64) error {
	b, err := blockOf(ctx, tx, h, c)
	if err != nil || b == nil {
		return err
	}
	i, found := slices.BinarySearchFunc(b.ps, c, byContent)
	if !found {
		return nil
	}
	return rewriteBlock(ctx, tx, b, slices.Delete(b.ps, i, i+1))
}

// rewriteBlock replaces the stored block b (if stored) by ps, in as many
// blocks as they need; no postings removes it.
func rewriteBlock(ctx context.Context, tx *sql.Tx, b *block, ps []anchorPosting) error {
	if len(b.ps) > 0 && (len(ps) == 0 || ps[0].c != b.first) {
		if _, err := tx.ExecContext(ctx, "DELETE FROM anchor_blocks WHERE h = ? AND first = ?", b.h, b.first); err != nil {
			return fmt.Errorf("write %s: %w", anchorTable, err)
		}
	}
	w := newBlockWriter(ctx, &txStmts{tx: tx})
	for len(ps) > 0 {
		k := len(ps)
		if k > anchorBlockIDs {
			k = len(ps) / 2
		}
		if err := putBlock(w, b.h, ps[:k]); err != nil {
			return err
		}
		ps = ps[k:]
	}
	return w.flush()
}

// anchorLists returns, for each key, the postings under it in the blocks,
// or at least limit+1 of them when it has more (to tell such keys apart),
// ascending by content. Keys known to hold more than limit are left out,
// as postingLists does. (Lists in memory are counted where they are:
// memAnchors.shares.)
//
// One statement reads the first few blocks of every key: enough for
// limit+1 postings when blocks are full, as appending leaves them. A key
// whose blocks (thinned by removals or split by out-of-order inserts) were
// all used up short of that is read again alone, block after block. A
// statement per key cost more in the driver than the lookups themselves
// (a third of an "all versions" query's CPU).
func (s *Store) anchorLists(ctx context.Context, tx *sql.Tx, gen uint64, keys []int64, limit int) (map[int64][]anchorPosting, error) {
	keys = s.over.filter(anchorTable, keys, limit)
	if len(keys) == 0 {
		return map[int64][]anchorPosting{}, nil
	}
	out := make(map[int64][]anchorPosting, len(keys))
	blocks := min(limit, 1<<24)/anchorBlockIDs + 2
	rows, err := s.queryByKeys(ctx, tx, `SELECT j.value, b.first, b.n, b.ids FROM (SELECT DISTINCT value FROM json_each(?)) j
		JOIN anchor_blocks b ON b.h = j.value AND b.first IN (SELECT first FROM anchor_blocks WHERE h = j.value ORDER BY first LIMIT ?)`, keys, blocks)
	byKey := make(map[int64][]*block, len(keys))
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var b block
		var n int
		var data []byte
		if err := rows.Scan(&b.h, &b.first, &n, &data); err != nil {
			return err
		}
		var err error
		if b.ps, err = decodeBlock(nil, b.first, n, data); err != nil {
			return fmt.Errorf("read %s of key %d: %w", anchorTable, b.h, err)
		}
		byKey[b.h] = append(byKey[b.h], &b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, bs := range byKey {
		slices.SortFunc(bs, func(a, b *block) int { return cmp.Compare(a.first, b.first) })
		var ps []anchorPosting
		for _, b := range bs {
			ps = append(ps, b.ps...)
		}
		if len(ps) <= limit && len(bs) == blocks {
			// Sparse blocks: there may be more.
			if ps, err = s.anchorList(ctx, tx, k, limit, ps[:0]); err != nil {
				return nil, err
			}
		}
		out[k] = ps
	}
	recordOverfull(&s.over, gen, s.now(), anchorTable, out, limit)
	return out, nil
}

// anchorList appends to ps the postings of key k, block after block,
// until it has more than limit.
func (s *Store) anchorList(ctx context.Context, tx *sql.Tx, k int64, limit int, ps []anchorPosting) ([]anchorPosting, error) {
	stmt, err := s.rs.in(ctx, tx, "SELECT n, first, ids FROM anchor_blocks WHERE h = ? ORDER BY first")
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryContext(ctx, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for len(ps) <= limit && rows.Next() {
		var n int
		var first int64
		var data []byte
		if err := rows.Scan(&n, &first, &data); err != nil {
			return nil, err
		}
		if ps, err = decodeBlock(ps, first, n, data); err != nil {
			return nil, fmt.Errorf("read %s of key %d: %w", anchorTable, k, err)
		}
	}
	return ps, rows.Err()
}

// expectAnchor reports an inconsistency unless content c is posted under h
// with its anchor count n.
func expectAnchor(ctx context.Context, conn *sql.Conn, h, c int64, n int) error {
	b, err := blockOf(ctx, conn, h, c)
	if err != nil {
		return fmt.Errorf("check index: %w: %w", ErrInconsistent, err)
	}
	var i int
	found := false
	if b != nil {
		i, found = slices.BinarySearchFunc(b.ps, c, byContent)
	}
	if !found {
		return fmt.Errorf("check index: %w: content %d lacks a %s entry", ErrInconsistent, c, anchorTable)
	}
	if int(b.ps[i].n) != n {
		return fmt.Errorf("check index: %w: content %d posted in %s with %d anchors, has %d", ErrInconsistent, c, anchorTable, b.ps[i].n, n)
	}
	return nil
}

// checkAnchorBlocks decodes every block and checks that its ids ascend,
// stay within it and belong to stored contents. db and conn are two
// connections: the blocks are read while contents are looked up.
func checkAnchorBlocks(ctx context.Context, db *sql.DB, conn *sql.Conn) error {
	rows, err := db.QueryContext(ctx, `SELECT h, first, n, ids FROM anchor_blocks ORDER BY h, first`)
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer rows.Close()
	var prev *block
	batch := make(map[int64]struct{})
	for rows.Next() {
		b, err := scanBlock(rows)
		if err != nil {
			return fmt.Errorf("check index: %w: %w", ErrInconsistent, err)
		}
		if prev != nil && prev.h == b.h && prev.ps[len(prev.ps)-1].c >= b.first {
			return fmt.Errorf("check index: %w: %s of key %d overlap at %d", ErrInconsistent, anchorTable, b.h, b.first)
		}
		for _, p := range b.ps {
			batch[p.c] = struct{}{}
		}
		if len(batch) >= 10000 {
			if err := checkStored(ctx, conn, batch); err != nil {
				return err
			}
			clear(batch)
		}
		prev = b
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	return checkStored(ctx, conn, batch)
}

// checkStored reports an inconsistency unless every content in ids is
// stored.
func checkStored(ctx context.Context, conn *sql.Conn, ids map[int64]struct{}) error {
	if len(ids) == 0 {
		return nil
	}
	list := make([]int64, 0, len(ids))
	for c := range ids {
		list = append(list, c)
	}
	j, _ := json.Marshal(list)
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM contents WHERE id IN (SELECT value FROM json_each(?))", string(j)).Scan(&n); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	if n != len(list) {
		return fmt.Errorf("check index: %w: %d contents in %s are not stored", ErrInconsistent, len(list)-n, anchorTable)
	}
	return nil
}

// blockAnchors moves the postings of sample_postings (schema 3) into
// anchor_blocks (schema 4), in key order, and drops the old table.
func blockAnchors(ctx context.Context, tx *sql.Tx) error {
	counts := make(map[int64]int32)
	rows, err := tx.QueryContext(ctx, "SELECT id, anchors FROM contents")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var c int64
		var n int32
		if err := rows.Scan(&c, &n); err != nil {
			return err
		}
		counts[c] = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("block anchor postings: %w", err)
	}
	w := newBlockWriter(ctx, &txStmts{tx: tx})
	var ps []anchorPosting
	cur := int64(-1)
	rows, err = tx.QueryContext(ctx, "SELECT h, c FROM sample_postings ORDER BY h, c")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var h, c int64
		if err := rows.Scan(&h, &c); err != nil {
			return err
		}
		n, ok := counts[c]
		if !ok {
			return nil // a posting of no content: nothing finds it
		}
		if (h != cur || len(ps) == anchorBlockIDs) && len(ps) > 0 {
			if err := putBlock(w, cur, ps); err != nil {
				return err
			}
			ps = ps[:0]
		}
		cur = h
		ps = append(ps, anchorPosting{c, n})
		return nil
	})
	if err != nil {
		return fmt.Errorf("block anchor postings: %w", err)
	}
	if len(ps) > 0 {
		if err := putBlock(w, cur, ps); err != nil {
			return fmt.Errorf("block anchor postings: %w", err)
		}
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("block anchor postings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE sample_postings"); err != nil {
		return fmt.Errorf("block anchor postings: %w", err)
	}
	return nil
}
