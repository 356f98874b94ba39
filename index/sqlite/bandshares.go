package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/simdex/simdex/index"
)

// Band shares let a query of a stored text find its band candidates
// without looking up its band keys. Nearly every band key is held by one
// content alone (at 1,000,000 documents, 31.6 million postings under 30.1
// million keys), so looking up a stored document's 32 keys found itself 32
// times: 32 B-tree seeks into a table of hundreds of megabytes, four
// tenths of an "all versions" query.
//
// band_shares holds, for each content with a band key some other content
// also holds, a mask of those bands (bit i for the i-th key of
// contents.bands; keys past maskBands are always looked up) and its
// partners: the contents it shares band keys with, up to maxPartners
// (NULL beyond: its queries look up the masked keys). The writer keeps the
// invariants: whenever a band key is held by two or more contents, each of
// them has the key's bit and, unless past the limit, lists the others.
// Before inserting a content it reads up to maxPartners+1 holders of each
// of its keys (the table's and its own transaction's), which give its own
// row, then adds its bits and itself to each holder's row. A key with more
// holders than were read has every holder past the limit already (each
// saw or was given more than maxPartners others), so those not read need
// nothing. A content removed is taken out of the lists of the holders of
// its keys, and a holder left alone with a key loses its bit (unshare):
// left there, removed partners piled up in a daemon that deletes for
// years until lists passed the limit and their queries looked every key
// up. A holder past the limit keeps its NULL list. Rows go with their
// content.
//
// The rows live in the database, in the transaction that adds the
// postings, so another process's writes keep them right too, and a reader
// sees them in the same snapshot as the postings.

// maskBands is how many band positions a mask covers.
const maskBands = 63

// maxPartners is the most contents a band_shares row lists as sharing a
// band key with its content. A content sharing with more has no list
// (NULL): its queries look up its masked keys instead.
const maxPartners = 64

// bandShares tracks the band keys of the contents one transaction stores.
type bandShares struct {
	holders map[int64][]int64 // key -> this transaction's contents holding it
}

// shared is what a content about to be stored shares through its band
// keys: its mask, and each other content holding one of its keys, with
// the keys it held alone.
type shared struct {
	mask     int64
	others   map[int64][]int64
	overflow bool // more than maxPartners others, or more holders of a key than were read
}

// shareOf finds what a content about to be stored with band posting keys
// keys shares.
func (b *bandShares) shareOf(ctx context.Context, stmts *txStmts, keys []int64) (shared, error) {
	sh := shared{others: make(map[int64][]int64)}
	if len(keys) == 0 {
		return sh, nil
	}
	held, err := bandHolders(ctx, stmts, keys, maxPartners+2)
	if err != nil {
		return sh, fmt.Errorf("look up band holders: %w", err)
	}
	for i, k := range keys {
		hs := held[i]
		if len(hs) > maxPartners+1 {
			// Every holder of a key held by more than maxPartners+1
			// contents is past the limit and has the key's bit: only
			// the new content needs anything.
			sh.overflow = true
			if i < maskBands {
				sh.mask |= 1 << i
			}
			continue
		}
		sh.overflow = sh.overflow || len(hs) > maxPartners
		for _, p := range b.holders[k] {
			if !slices.Contains(hs, p) {
				hs = append(hs, p)
			}
		}
		if len(hs) == 0 {
			continue
		}
		if i < maskBands {
			sh.mask |= 1 << i
		}
		for _, h := range hs {
			ks := sh.others[h]
			// Only a sole holder lacks the key's bit: with two or more,
			// each has it already.
			if len(hs) == 1 && !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
			sh.others[h] = ks
		}
	}
	sh.overflow = sh.overflow || len(sh.others) > maxPartners
	return sh, nil
}

// stored records a new content c, its keys and what it shares: its own
// row, and c's bits and id in the rows of the contents it shares with.
func (b *bandShares) stored(ctx context.Context, stmts *txStmts, c int64, keys []int64, sh shared) error {
	if b.holders == nil {
		b.holders = make(map[int64][]int64)
	}
	for _, k := range keys {
		if hs := b.holders[k]; !slices.Contains(hs, c) { // c may hold a key at two positions
			b.holders[k] = append(hs, c)
		}
	}
	if sh.mask != 0 || len(sh.others) > 0 {
		var partners []int64
		if !sh.overflow {
			partners = slices.Collect(maps.Keys(sh.others))
		}
		if err := putShare(ctx, stmts, c, sh.mask, partners, sh.overflow); err != nil {
			return err
		}
	}
	return shareWith(ctx, stmts, sh.others, c)
}

// unshare takes content c, whose band keys are keys and whose postings
// are about to go, out of the band_shares rows of the other holders of
// those keys: out of their partner lists, and a holder left holding a
// key alone loses the key's bit.
func (b *bandShares) unshare(ctx context.Context, stmts *txStmts, c int64, keys []int64) error {
	for _, k := range keys {
		if hs, ok := b.holders[k]; ok {
			b.holders[k] = slices.DeleteFunc(hs, func(h int64) bool { return h == c })
		}
	}
	if len(keys) == 0 {
		return nil
	}
	const limit = maxPartners + 2
	held, err := bandHolders(ctx, stmts, keys, limit)
	if err != nil {
		return fmt.Errorf("look up band holders: %w", err)
	}
	alone := make(map[int64][]int64) // holder -> keys it is left holding alone
	var others []int64
	for i, k := range keys {
		hs := slices.DeleteFunc(held[i], func(h int64) bool { return h == c })
		for _, h := range hs {
			if !slices.Contains(others, h) {
				others = append(others, h)
			}
		}
		if len(hs) == 1 && len(held[i]) < limit { // all holders read
			alone[hs[0]] = append(alone[hs[0]], k)
		}
	}
	if len(others) == 0 {
		return nil
	}
	var ups []shareRow
	err = readShares(ctx, stmts, `SELECT b.c, b.mask, b.partners, c.body, c.bands
		FROM json_each(?) j JOIN band_shares b ON b.c = j.value JOIN contents c ON c.id = b.c`, others, func(rows *sql.Rows) error {
		var u shareRow
		var blob, body, bands []byte
		if err := rows.Scan(&u.o, &u.mask, &blob, &body, &bands); err != nil {
			return err
		}
		u.overflow = blob == nil
		u.partners = decodeIDs(blob)
		n := len(u.partners)
		u.partners = slices.DeleteFunc(u.partners, func(h int64) bool { return h == c })
		mask := u.mask
		if ks := alone[u.o]; len(ks) > 0 {
			keys, err := contentBandKeys(u.o, body, bands)
			if err != nil {
				return err
			}
			u.mask &^= bandMask(keys, func(k int64) bool { return slices.Contains(ks, k) })
		}
		if len(u.partners) != n || u.mask != mask {
			ups = append(ups, u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, u := range ups {
		if u.mask == 0 && !u.overflow && len(u.partners) == 0 {
			if err := stmts.exec(ctx, "DELETE FROM band_shares WHERE c = ?", u.o); err != nil {
				return fmt.Errorf("delete shared bands of content %d: %w", u.o, err)
			}
			continue
		}
		if err := putShare(ctx, stmts, u.o, u.mask, u.partners, u.overflow); err != nil {
			return err
		}
	}
	return nil
}

// bandHolders returns, for each key, up to limit contents posted under
// it, in one statement.
func bandHolders(ctx context.Context, stmts *txStmts, keys []int64, limit int) ([][]int64, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := stmts.query(ctx, `SELECT j.key, (SELECT group_concat(c) FROM (SELECT c FROM band_postings WHERE h = j.value LIMIT ?2))
		FROM json_each(?1) j`, string(list), limit)
	out := make([][]int64, len(keys))
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var i int
		var cs sql.NullString
		if err := rows.Scan(&i, &cs); err != nil {
			return err
		}
		if !cs.Valid || cs.String == "" || i < 0 || i >= len(keys) {
			return nil
		}
		if out[i], err = parseIDs(cs.String); err != nil {
			return fmt.Errorf("holders of band key %d: %w", keys[i], err)
		}
		return nil
	})
	return out, err
}

func parseIDs(list string) ([]int64, error) {
	var ids []int64
	for f := range strings.SplitSeq(list, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// shareWith gives each content of others the bits of its bands whose
// key is listed for it (the keys it held alone), and c as a partner. It
// reads their band_shares rows in one statement, and the bands of a
// content only when it has bits to gain (one statement per content,
// reading the wide contents row, was most of a bulk scan's time), and
// writes only the rows that change. A content already gone (released in
// this transaction) needs nothing.
func shareWith(ctx context.Context, stmts *txStmts, others map[int64][]int64, c int64) error {
	if len(others) == 0 {
		return nil
	}
	var ups []shareRow
	err := readShares(ctx, stmts, `SELECT c.id, coalesce(b.mask, 0), b.partners, b.c IS NOT NULL AND b.partners IS NULL
		FROM json_each(?) j JOIN contents c ON c.id = j.value LEFT JOIN band_shares b ON b.c = c.id`,
		slices.Collect(maps.Keys(others)), func(rows *sql.Rows) error {
			var u shareRow
			var blob []byte
			if err := rows.Scan(&u.o, &u.mask, &blob, &u.overflow); err != nil {
				return err
			}
			if !u.overflow {
				u.partners = decodeIDs(blob)
				if !slices.Contains(u.partners, c) {
					u.partners = append(u.partners, c)
				}
				u.overflow = len(u.partners) > maxPartners
			} else if len(others[u.o]) == 0 {
				return nil // past the limit, and no bit to gain
			}
			ups = append(ups, u)
			return nil
		})
	if err != nil {
		return err
	}
	for _, u := range ups {
		if keys := others[u.o]; len(keys) > 0 {
			var body, bands []byte
			if err := stmts.queryRow(ctx, "SELECT body, bands FROM contents WHERE id = ?", u.o).Scan(&body, &bands); err != nil {
				return fmt.Errorf("read bands of content %d: %w", u.o, err)
			}
			held, err := contentBandKeys(u.o, body, bands)
			if err != nil {
				return err
			}
			u.mask |= bandMask(held, func(k int64) bool { return slices.Contains(keys, k) })
		}
		if err := putShare(ctx, stmts, u.o, u.mask, u.partners, u.overflow); err != nil {
			return err
		}
	}
	return nil
}

// shareRow is a band_shares row being changed: content o's mask and
// partners, or no list (overflow).
type shareRow struct {
	o, mask  int64
	partners []int64
	overflow bool
}

// readShares runs query, the band_shares rows of the contents ids (its
// one argument, as a JSON array), and calls fn with each row.
func readShares(ctx context.Context, stmts *txStmts, query string, ids []int64, fn func(*sql.Rows) error) error {
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := stmts.query(ctx, query, string(list))
	if err := eachRow(rows, err, fn); err != nil {
		return fmt.Errorf("read band shares: %w", err)
	}
	return nil
}

// putShare writes content c's row.
func putShare(ctx context.Context, stmts *txStmts, c, mask int64, partners []int64, overflow bool) error {
	var blob []byte // NULL: too many partners to list
	if !overflow {
		blob = encodeIDs(partners)
	}
	if err := stmts.exec(ctx, "INSERT OR REPLACE INTO band_shares (c, mask, partners) VALUES (?, ?, ?)", c, mask, blob); err != nil {
		return fmt.Errorf("record shared bands of content %d: %w", c, err)
	}
	return nil
}

// encodeIDs encodes content ids, sorted, as 8 bytes each; never nil, so
// that an empty list is not stored as NULL.
func encodeIDs(ids []int64) []byte {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	out := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		out = binary.LittleEndian.AppendUint64(out, uint64(id))
	}
	return out
}

func decodeIDs(b []byte) []int64 {
	ids := make([]int64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		ids = append(ids, int64(binary.LittleEndian.Uint64(b)))
	}
	return ids
}

// storedBands returns the content stored with text, its band mask and
// the contents sharing a band key with it (known false: too many to list),
// or a zero content when the text is not stored. A known content id
// (self) is read by its key; its text must match still.
func (s *Store) storedBands(ctx context.Context, tx *sql.Tx, text [32]byte, self index.ContentID) (content, mask int64, partners []int64, known bool, err error) {
	if text == ([32]byte{}) {
		return 0, 0, nil, false, nil
	}
	const columns = `SELECT c.id, coalesce(b.mask, 0), b.partners, b.c IS NULL OR b.partners IS NOT NULL,
		EXISTS (SELECT 1 FROM meta WHERE key = '` + bandSharesStaleKey + `')
		FROM contents c LEFT JOIN band_shares b ON b.c = c.id `
	query, args := columns+`WHERE c.text_sha256 = ?`, []any{text[:]}
	if self != 0 {
		query, args = columns+`WHERE c.id = ? AND c.text_sha256 = ?`, []any{int64(self), text[:]}
	}
	st, err := s.rs.in(ctx, tx, query)
	if err != nil {
		return 0, 0, nil, false, err
	}
	var blob []byte
	var stale bool
	err = st.QueryRowContext(ctx, args...).Scan(&content, &mask, &blob, &known, &stale)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil, false, nil
	}
	if stale { // a bulk load defers them: every key is looked up
		return content, -1, nil, false, err
	}
	return content, mask, decodeIDs(blob), known, err
}

// bandSharesStaleKey is the meta key present while band_shares is left
// stale by a bulk load (Loader).
const bandSharesStaleKey = "band_shares_stale"

// sharesStale reports whether a bulk load left band_shares stale.
func sharesStale(ctx context.Context, q querier) (bool, error) {
	marks, err := queryIDs(ctx, q, "SELECT 1 FROM meta WHERE key = '"+bandSharesStaleKey+"'")
	if err != nil {
		return false, fmt.Errorf("read the band shares' stale mark: %w", err)
	}
	return len(marks) > 0, nil
}

// settleBandShares computes band_shares from the postings, in one
// transaction, if a bulk load left them stale.
func (s *Store) settleBandShares(ctx context.Context, level slog.Level) error {
	return s.settleBulk(ctx, "band shares", sharesStale, func(tx *sql.Tx, _ *anchorDelta) ([]any, error) {
		if _, err := tx.ExecContext(ctx, "DELETE FROM band_shares"); err != nil {
			return nil, err
		}
		// Computed when the postings were settled from memory, if
		// nothing was written since (taken once, whatever becomes of
		// this transaction).
		var m *memShares
		if l := s.load; l != nil {
			m, l.shares = l.shares, nil
		}
		if m != nil {
			v, err := dataVersion(ctx, tx)
			if err != nil {
				return nil, err
			}
			if v != m.version {
				m = nil
			}
		}
		from := "postings"
		if m != nil {
			from = "memory"
			if err := writeShares(ctx, tx, m.masks, m.partners); err != nil {
				return nil, err
			}
		} else if err := backfillBandShares(ctx, tx); err != nil {
			return nil, err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = '"+bandSharesStaleKey+"'")
		return []any{"from", from}, err
	}, level)
}

// bandKeys decodes contents.bands: each band's posting key, in band order.
func bandKeys(bands []byte) []int64 {
	keys := make([]int64, 0, len(bands)/4)
	for ; len(bands) >= 4; bands = bands[4:] {
		keys = append(keys, int64(binary.LittleEndian.Uint32(bands)))
	}
	return keys
}

// bandMask returns the bits of the positions of a content's band keys
// (bandKeysOf) whose key shared reports.
func bandMask(keys []int64, shared func(int64) bool) int64 {
	var mask int64
	for i, k := range keys {
		if i >= maskBands {
			break
		}
		if shared(k) {
			mask |= 1 << i
		}
	}
	return mask
}

// sharedBands computes from the postings what band_shares must hold: for
// each content holding a band key another content holds, the mask it must
// at least have, and the contents it shares keys with (nil for one that
// shares with more than maxPartners). One pass over the keys held twice or
// more, then the bands of the contents holding them, by id.
func sharedBands(ctx context.Context, q querier) (masks map[int64]int64, partners map[int64][]int64, err error) {
	rows, err := q.QueryContext(ctx, `SELECT h, group_concat(c) FROM band_postings
		WHERE h IN (SELECT h FROM band_postings GROUP BY h HAVING count(*) > 1) GROUP BY h`)
	partners = make(map[int64][]int64)
	keysOf := make(map[int64][]int64)
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var h int64
		var list string
		if err := rows.Scan(&h, &list); err != nil {
			return err
		}
		holders, err := parseIDs(list)
		if err != nil {
			return fmt.Errorf("holders of band key %d: %w", h, err)
		}
		for _, c := range holders {
			keysOf[c] = append(keysOf[c], h)
		}
		addPartners(partners, holders)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("find shared band keys: %w", err)
	}
	ids := slices.Sorted(maps.Keys(keysOf))
	masks = make(map[int64]int64, len(ids))
	const batch = 4096
	for len(ids) > 0 {
		n := min(len(ids), batch)
		list, err := json.Marshal(ids[:n])
		if err != nil {
			return nil, nil, err
		}
		ids = ids[n:]
		rows, err := q.QueryContext(ctx, "SELECT c.id, c.body, c.bands FROM json_each(?) j JOIN contents c ON c.id = j.value", string(list))
		err = eachRow(rows, err, func(rows *sql.Rows) error {
			var c int64
			var body, bands []byte
			if err := rows.Scan(&c, &body, &bands); err != nil {
				return err
			}
			held, err := contentBandKeys(c, body, bands)
			if err != nil {
				return err
			}
			ks := keysOf[c]
			if m := bandMask(held, func(k int64) bool { return slices.Contains(ks, k) }); m != 0 {
				masks[c] = m
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read bands: %w", err)
		}
	}
	return masks, partners, nil
}

// backfillBandShares records the masks and partners of contents stored
// before version 6.
func backfillBandShares(ctx context.Context, tx *sql.Tx) error {
	masks, partners, err := sharedBands(ctx, tx)
	if err != nil {
		return err
	}
	return writeShares(ctx, tx, masks, partners)
}

// writeShares writes the rows of band_shares sharedBands computes, by
// content.
func writeShares(ctx context.Context, tx *sql.Tx, masks map[int64]int64, partners map[int64][]int64) error {
	stmts := &txStmts{tx: tx}
	for _, c := range slices.Sorted(maps.Keys(partners)) {
		ps := partners[c]
		if err := putShare(ctx, stmts, c, masks[c], ps, ps == nil); err != nil {
			return err
		}
	}
	return nil
}

// memShares are the band shares a bulk load's postings, settled from
// memory, imply: what sharedBands would read from the tables then,
// computed without reading them (2.6 of the 3.5 s the 50,000-file scan
// spent on its band shares). They hold until this store writes again, or
// another connection does (version: the writer connection's
// data_version when they were computed).
type memShares struct {
	masks    map[int64]int64
	partners map[int64][]int64
	version  int64
}

// bandSharesOf computes the band shares of band postings sorted by key and
// content, each with its band's position (posting.n), as sharedBands
// does from the tables.
func bandSharesOf(rows []posting) *memShares {
	m := &memShares{masks: make(map[int64]int64), partners: make(map[int64][]int64)}
	var holders []int64
	for len(rows) > 0 {
		end := 1
		for end < len(rows) && rows[end].h == rows[0].h {
			end++
		}
		group := rows[:end]
		rows = rows[end:]
		holders = holders[:0]
		for _, r := range group {
			if len(holders) == 0 || holders[len(holders)-1] != r.c {
				holders = append(holders, r.c)
			}
		}
		if len(holders) < 2 {
			continue
		}
		for _, r := range group {
			if r.n < maskBands {
				m.masks[r.c] |= 1 << r.n
			}
		}
		addPartners(m.partners, holders)
	}
	return m
}

// addPartners records that the distinct contents holders share a band
// key: each lists the others, up to maxPartners (nil beyond).
func addPartners(partners map[int64][]int64, holders []int64) {
	for _, c := range holders {
		ps, seen := partners[c]
		switch {
		case seen && ps == nil:
			continue // too many already
		case len(holders) > maxPartners+1:
			partners[c] = nil
			continue
		}
		for _, o := range holders {
			if o != c && !slices.Contains(ps, o) {
				if ps = append(ps, o); len(ps) > maxPartners {
					ps = nil
					break
				}
			}
		}
		partners[c] = ps
	}
}

// dataVersion returns the connection's PRAGMA data_version, which changes
// when another connection commits.
func dataVersion(ctx context.Context, tx *sql.Tx) (int64, error) {
	var v int64
	if err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read data_version: %w", err)
	}
	return v, nil
}

// checkBandShares verifies that every content holding a shared band key
// has its bit and, unless it has too many, lists the contents it shares
// with.
func checkBandShares(ctx context.Context, q querier) error {
	if stale, err := sharesStale(ctx, q); err != nil || stale {
		return err // stale: computed when the bulk load closes, nothing to check
	}
	want, partners, err := sharedBands(ctx, q)
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	type row struct {
		mask     int64
		partners []int64
		listed   bool
	}
	have := make(map[int64]row)
	rows, err := q.QueryContext(ctx, "SELECT c, mask, partners FROM band_shares")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var c, m int64
		var blob []byte
		if err := rows.Scan(&c, &m, &blob); err != nil {
			return err
		}
		have[c] = row{m, decodeIDs(blob), blob != nil}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	for c, m := range want {
		if have[c].mask&m != m {
			return fmt.Errorf("check index: %w: content %d lacks shared band bits %#x", ErrInconsistent, c, m&^have[c].mask)
		}
	}
	for c, ps := range partners {
		r, ok := have[c]
		if !ok {
			return fmt.Errorf("check index: %w: content %d shares band keys and has no band_shares row", ErrInconsistent, c)
		}
		if !r.listed {
			continue // too many to list: its queries look its keys up
		}
		for _, o := range ps {
			if !slices.Contains(r.partners, o) {
				return fmt.Errorf("check index: %w: content %d shares a band key with %d, which it does not list", ErrInconsistent, c, o)
			}
		}
		if ps == nil {
			return fmt.Errorf("check index: %w: content %d lists partners but shares with more than %d", ErrInconsistent, c, maxPartners)
		}
	}
	return nil
}
