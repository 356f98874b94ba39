package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Band shares let a query of a stored text skip the band keys no other
// content holds. Nearly every band key is held by one content alone (at
// 1,000,000 documents, 31.6 million postings under 30.1 million keys), so
// looking up a stored document's 32 keys found itself 32 times: 32 B-tree
// seeks into a table of hundreds of megabytes, four tenths of an "all
// versions" query.
//
// band_shares holds, for each content with a band key some other content
// also holds, a mask of those bands (bit i for the i-th key of
// contents.bands; keys past maskBands are always looked up). The writer
// keeps the invariant: whenever a band key is held by two or more contents,
// each of them has the key's bit. It learns a new content's mask before
// inserting it, from at most two holders of each of its keys (the table's
// and those of its own transaction), and sets the bit of the one earlier
// holder when there was exactly one: with two or more, each already has it.
// Bits are never cleared (a removal can leave a bit whose key is no longer
// shared: one seek too many, no miss), and the rows go with their content.
//
// The mask lives in the database, in the transaction that adds the
// postings, so another process's writes keep it right too, and a reader
// sees it in the same snapshot as the postings.

// maskBands is how many band positions a mask covers.
const maskBands = 63

// bandShares tracks the band keys of the contents one transaction stores.
type bandShares struct {
	// holder is, for each key this transaction posted, the content that
	// holds it, or -1 if several of its contents do.
	holder map[int64]int64
}

// maskOf returns the band mask of a content about to be stored with band
// posting keys keys, and gives the content that alone held one of them
// the key's bit.
func (b *bandShares) maskOf(ctx context.Context, stmts *txStmts, keys []int64) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	held, err := bandHolders(ctx, stmts, keys)
	if err != nil {
		return 0, fmt.Errorf("look up band holders: %w", err)
	}
	var mask int64
	lone := make(map[int64][]int64) // earlier sole holder -> its keys now shared
	for i, k := range keys {
		others := held[i]
		several := false
		switch p := b.holder[k]; {
		case p < 0:
			several = true
		case p > 0 && !containsID(others, p):
			others = append(others, p)
		}
		if len(others) == 0 && !several {
			continue
		}
		if i < maskBands {
			mask |= 1 << i
		}
		if !several && len(others) == 1 {
			lone[others[0]] = append(lone[others[0]], k)
		}
	}
	for c, ks := range lone {
		if err := shareBands(ctx, stmts, c, ks); err != nil {
			return 0, err
		}
	}
	return mask, nil
}

// stored records a new content's keys and mask.
func (b *bandShares) stored(ctx context.Context, stmts *txStmts, c int64, keys []int64, mask int64) error {
	if b.holder == nil {
		b.holder = make(map[int64]int64)
	}
	for _, k := range keys {
		switch p, ok := b.holder[k]; {
		case !ok:
			b.holder[k] = c
		case p != c: // not a key c holds at two positions
			b.holder[k] = -1
		}
	}
	if mask == 0 {
		return nil
	}
	return orMask(ctx, stmts, c, mask)
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// bandHolders returns, for each key, up to two contents posted under it,
// in one statement.
func bandHolders(ctx context.Context, stmts *txStmts, keys []int64) ([][]int64, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	st, err := stmts.prepare(ctx, `SELECT j.key, (SELECT group_concat(c) FROM (SELECT c FROM band_postings WHERE h = j.value LIMIT 2))
		FROM json_each(?) j`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([][]int64, len(keys))
	for rows.Next() {
		var i int
		var cs sql.NullString
		if err := rows.Scan(&i, &cs); err != nil {
			return nil, err
		}
		if !cs.Valid || cs.String == "" || i < 0 || i >= len(keys) {
			continue
		}
		for f := range strings.SplitSeq(cs.String, ",") {
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("holders of band key %d: %w", keys[i], err)
			}
			out[i] = append(out[i], id)
		}
	}
	return out, rows.Err()
}

// shareBands gives content c the bits of its bands whose key is in keys.
// A content already gone (released in this transaction) needs none.
func shareBands(ctx context.Context, stmts *txStmts, c int64, keys []int64) error {
	st, err := stmts.prepare(ctx, "SELECT bands FROM contents WHERE id = ?")
	if err != nil {
		return err
	}
	var bands []byte
	if err := st.QueryRowContext(ctx, c).Scan(&bands); errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read bands of content %d: %w", c, err)
	}
	mask := bandMask(bands, func(k int64) bool { return containsID(keys, k) })
	if mask == 0 {
		return nil
	}
	return orMask(ctx, stmts, c, mask)
}

// orMask adds mask's bits to content c's.
func orMask(ctx context.Context, stmts *txStmts, c, mask int64) error {
	st, err := stmts.prepare(ctx, "INSERT INTO band_shares (c, mask) VALUES (?, ?) ON CONFLICT (c) DO UPDATE SET mask = mask | excluded.mask")
	if err != nil {
		return err
	}
	if _, err := st.ExecContext(ctx, c, mask); err != nil {
		return fmt.Errorf("record shared bands of content %d: %w", c, err)
	}
	return nil
}

// storedBands returns the content stored with text and its band mask, or
// zero when the text is not stored.
func (s *Store) storedBands(ctx context.Context, tx *sql.Tx, text [32]byte) (content, mask int64, err error) {
	if text == ([32]byte{}) {
		return 0, 0, nil
	}
	st, err := s.rs.in(ctx, tx, "SELECT c.id, coalesce(b.mask, 0) FROM contents c LEFT JOIN band_shares b ON b.c = c.id WHERE c.text_sha256 = ?")
	if err != nil {
		return 0, 0, err
	}
	err = st.QueryRowContext(ctx, text[:]).Scan(&content, &mask)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	return content, mask, err
}

// bandKeys decodes contents.bands: each band's posting key, in band order.
func bandKeys(bands []byte) []int64 {
	keys := make([]int64, 0, len(bands)/4)
	for ; len(bands) >= 4; bands = bands[4:] {
		keys = append(keys, int64(binary.LittleEndian.Uint32(bands)))
	}
	return keys
}

// bandMask returns the bits of the positions of bands (contents.bands)
// whose key shared reports.
func bandMask(bands []byte, shared func(int64) bool) int64 {
	var mask int64
	for i, k := range bandKeys(bands) {
		if i >= maskBands {
			break
		}
		if shared(k) {
			mask |= 1 << i
		}
	}
	return mask
}

// sharedBandMasks computes from the postings the mask each content with a
// shared band key must at least have.
func sharedBandMasks(ctx context.Context, q querier) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT p.c, c.bands, group_concat(p.h)
		FROM band_postings p JOIN contents c ON c.id = p.c
		WHERE p.h IN (SELECT h FROM band_postings GROUP BY h HAVING count(*) > 1)
		GROUP BY p.c`)
	if err != nil {
		return nil, fmt.Errorf("find shared band keys: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]int64)
	for rows.Next() {
		var c int64
		var bands []byte
		var list string
		if err := rows.Scan(&c, &bands, &list); err != nil {
			return nil, fmt.Errorf("find shared band keys: %w", err)
		}
		shared := make(map[int64]bool)
		for f := range strings.SplitSeq(list, ",") {
			k, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("shared band keys of content %d: %w", c, err)
			}
			shared[k] = true
		}
		if m := bandMask(bands, func(k int64) bool { return shared[k] }); m != 0 {
			out[c] = m
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find shared band keys: %w", err)
	}
	return out, nil
}

// backfillBandShares records the masks of contents stored before version
// 6.
func backfillBandShares(ctx context.Context, tx *sql.Tx) error {
	masks, err := sharedBandMasks(ctx, tx)
	if err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO band_shares (c, mask) VALUES (?, ?)")
	if err != nil {
		return fmt.Errorf("record shared bands: %w", err)
	}
	defer st.Close()
	for c, m := range masks {
		if _, err := st.ExecContext(ctx, c, m); err != nil {
			return fmt.Errorf("record shared bands of content %d: %w", c, err)
		}
	}
	return nil
}

// checkBandShares verifies that every content holding a shared band key
// has its bit.
func checkBandShares(ctx context.Context, q querier) error {
	want, err := sharedBandMasks(ctx, q)
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	rows, err := q.QueryContext(ctx, "SELECT c, mask FROM band_shares")
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer rows.Close()
	have := make(map[int64]int64)
	for rows.Next() {
		var c, m int64
		if err := rows.Scan(&c, &m); err != nil {
			return fmt.Errorf("check index: %w", err)
		}
		have[c] = m
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	for c, m := range want {
		if have[c]&m != m {
			return fmt.Errorf("check index: %w: content %d lacks shared band bits %#x", ErrInconsistent, c, m&^have[c])
		}
	}
	return nil
}
