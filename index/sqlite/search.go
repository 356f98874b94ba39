package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"

	"github.com/simdex/simdex/index"
)

// Candidates returns contents that share a band key or a chunk.
func (s *Store) Candidates(ctx context.Context, q index.CandidateQuery) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if err := s.load.settleView(ctx); err != nil { // only the tables answer
		return nil, fmt.Errorf("find candidates: %w", err)
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
	err = eachRow(rows, err, func(rows *sql.Rows) error {
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
		return fn(index.ContentID(id), fp)
	})
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", s.mapErr(err))
	}
	return nil
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
	return eachRow(rows, nil, func(rows *sql.Rows) error {
		var id, h int64
		if err := rows.Scan(&id, &h); err != nil {
			return fmt.Errorf("read simhashes: %w", err)
		}
		return fn(index.ContentID(id), uint64(h))
	})
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
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var k, c int64
		if err := rows.Scan(&k, &c); err != nil {
			return err
		}
		out[k] = append(out[k], c)
		return nil
	})
	return out, err
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
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var k int64
		var cs sql.NullString
		if err := rows.Scan(&k, &cs); err != nil {
			return err
		}
		if !cs.Valid || cs.String == "" {
			return nil
		}
		ids, err := parseIDs(cs.String)
		if err != nil {
			return fmt.Errorf("posting list of %d: %w", k, err)
		}
		out[k] = ids
		return nil
	})
	return out, err
}

// anchorShare is a content on two or more of a query's anchor lists: on
// how many, and how many anchors it has in all.
type anchorShare struct {
	c       int64
	shared  int32
	anchors int32
}

// anchorShares returns the contents on two or more of the lists of keys no
// longer than maxDocs, ascending: counted where the lists are, when they
// are in memory, else from the lists read from the blocks.
func (s *Store) anchorShares(ctx context.Context, tx *sql.Tx, gen uint64, keys []int64, maxDocs int) ([]anchorShare, error) {
	if s.mem != nil {
		at, err := s.readAnchorsGen(ctx, tx)
		if err != nil {
			return nil, err
		}
		if shares, ok := s.mem.shares(keys, maxDocs, at); ok {
			return shares, nil
		}
	}
	lists, err := s.anchorLists(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, err
	}
	// Every posting of the lists that tell something, sorted by content:
	// a content's run is the anchors it shares with the query. Sorting
	// cost half what counting in a map did.
	return sharesOfSorted(sharedAnchors(lists, maxDocs)), nil
}

// sharesOfSorted returns the contents found two or more times in all,
// which is sorted by content.
func sharesOfSorted(all []anchorPosting) []anchorShare {
	var out []anchorShare
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].c == all[i].c {
			j++
		}
		if j-i >= 2 {
			out = append(out, anchorShare{all[i].c, int32(j - i), all[i].n})
		}
		i = j
	}
	return out
}

// sharedAnchors returns the postings of the lists no longer than maxDocs
// (longer ones are boilerplate, held by too many contents to tell
// anything), sorted by content. They are sorted as integers, content id
// above anchor count, which took a third of the time of sorting the
// structures, by radix on the id's bits alone (a query's tens of thousands
// of postings in two passes: a third of the time of slices.Sort, which
// was a tenth of an "all versions" query); ids too large for that (never
// seen: 2^40 contents) are sorted as structures.
func sharedAnchors(lists map[int64][]anchorPosting, maxDocs int) []anchorPosting {
	const countBits = 24
	total := 0
	for _, ps := range lists {
		if len(ps) <= maxDocs {
			total += len(ps)
		}
	}
	all := make([]anchorPosting, 0, total) // sized first: appends were most of a query's garbage
	packable := true
	for _, ps := range lists {
		if len(ps) > maxDocs {
			continue
		}
		for _, p := range ps {
			packable = packable && p.c < 1<<(63-countBits) && p.n < 1<<countBits
		}
		all = append(all, ps...)
	}
	if !packable {
		slices.SortFunc(all, func(a, b anchorPosting) int { return cmp.Compare(a.c, b.c) })
		return all
	}
	buf := make([]int64, 2*len(all))
	keys := buf[:len(all)]
	var most int64
	for i, p := range all {
		keys[i] = p.c<<countBits | int64(p.n)
		most = max(most, p.c)
	}
	keys = radixSortAbove(keys, buf[len(all):], countBits, bits.Len64(uint64(most)))
	for i, k := range keys {
		all[i] = anchorPosting{c: k >> countBits, n: int32(k & (1<<countBits - 1))}
	}
	return all
}

// radixSortAbove sorts keys, which are not negative, by their bits from
// lo to lo+width (the bits below lo keep their order: the sort is stable),
// in passes of radixBits, using scratch (as long as keys); it returns the
// slice holding the result, keys or scratch.
func radixSortAbove[K int64 | uint32](keys, scratch []K, lo, width int) []K {
	const radixBits = 11
	var count [1 << radixBits]int
	for shift := lo; shift < lo+width; shift += radixBits {
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<radixBits-1)]++
		}
		sum := 0
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, k := range keys {
			d := k >> shift & (1<<radixBits - 1)
			scratch[count[d]] = k
			count[d]++
		}
		keys, scratch = scratch, keys
	}
	return keys
}

// AnchorCandidates implements index.Searcher.
func (s *Store) AnchorCandidates(ctx context.Context, anchors []uint64, maxDocs int, minShare float64, limit int) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if len(anchors) == 0 || limit <= 0 {
		return nil, nil
	}
	if err := s.load.settleView(ctx); err != nil { // only the tables answer
		return nil, fmt.Errorf("find anchor candidates: %w", err)
	}
	gen := s.over.start(s.now())
	// One read transaction for every lookup: each statement on its own
	// would take and release the WAL read lock (system calls) again.
	tx, end, err := s.readTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", err)
	}
	defer end()
	keys := make([]int64, 0, len(anchors))
	seen := make(map[int64]struct{}, len(anchors))
	for _, a := range anchors {
		k := postingKey(a)
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	queried := len(keys)
	shares, err := s.anchorShares(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", s.mapErr(err))
	}
	return bestShares(shares, queried, minShare, limit), nil
}

// bestShares returns up to limit of the contents of shares that share at
// least minShare of the anchors of the smaller of them and the query (of
// queried anchors), best share first.
func bestShares(shares []anchorShare, queried int, minShare float64, limit int) []index.ContentID {
	type cand struct {
		id    int64
		share float64
	}
	var cands []cand
	for _, sh := range shares {
		smaller := min(queried, int(sh.anchors))
		if smaller == 0 {
			continue
		}
		if share := float64(sh.shared) / float64(smaller); share >= minShare {
			cands = append(cands, cand{sh.c, share})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.share > b.share:
			return -1
		case a.share < b.share:
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(cands) > limit {
		cands = cands[:limit]
	}
	out := make([]index.ContentID, len(cands))
	for i, c := range cands {
		out[i] = index.ContentID(c.id)
	}
	return out
}
