package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sketch"
)

// Put commits entries in one transaction. It costs a fixed number of round
// trips per run of entries (see segments), whatever the index's size: 5
// for new documents, 3 more when a document replaces older versions of
// its key (docs/store.md).
func (s *Store) Put(ctx context.Context, entries []index.Entry) ([]index.Committed, error) {
	for i, e := range entries {
		if e.Parent >= i {
			return nil, fmt.Errorf("put documents: entry %d: parent %d must come before it", i, e.Parent)
		}
	}
	var out []index.Committed
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		p := &putTx{tx: tx, entries: entries, out: make([]index.Committed, len(entries)), now: s.now().UnixNano()}
		for _, seg := range segments(entries) {
			if err := p.segment(ctx, seg[0], seg[1]); err != nil {
				return err
			}
		}
		out = p.out
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("put documents: %w", err)
	}
	return out, nil
}

// segments splits entries into runs [lo, hi) in which no idempotency key
// repeats and no key that an entry replaces was written before: each run
// is looked up once, before it is written.
func segments(entries []index.Entry) [][2]int {
	var out [][2]int
	lo := 0
	idems, keys := map[string]bool{}, map[string]bool{}
	for i := range entries {
		d := &entries[i].Doc
		idem := d.IdempotencyKey()
		if idems[idem] || (replaces(&entries[i]) && keys[d.Key]) {
			out = append(out, [2]int{lo, i})
			lo = i
			clear(idems)
			clear(keys)
		}
		idems[idem], keys[d.Key] = true, true
	}
	if lo < len(entries) {
		out = append(out, [2]int{lo, len(entries)})
	}
	return out
}

// replaces reports whether e replaces the older versions of its key.
func replaces(e *index.Entry) bool { return !e.Doc.KeepVersions && e.Parent < 0 }

// lockKey is the advisory lock of a name: every writer of an idempotency
// key or a document key takes it for its transaction.
func lockKey(kind, name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// putTx is one Put's transaction.
type putTx struct {
	tx      pgx.Tx
	entries []index.Entry
	out     []index.Committed
	now     int64
}

// segment writes entries[lo:hi]: it locks their keys and looks them up
// (one round trip), removes the versions they replace, stores their new
// contents (one), then their postings, texts and documents (one).
func (p *putTx) segment(ctx context.Context, lo, hi int) error {
	found, err := p.lookUp(ctx, lo, hi)
	if err != nil {
		return err
	}
	var write []int // entries to write: not stored yet
	roots := map[string][]int64{}
	for i := lo; i < hi; i++ {
		e := &p.entries[i]
		if dup, ok := found.idems[e.Doc.IdempotencyKey()]; ok {
			p.out[i] = dup
			continue
		}
		write = append(write, i)
		if replaces(e) {
			roots[e.Doc.Key] = found.roots[e.Doc.Key]
		}
	}
	if err := p.replace(ctx, write, roots); err != nil {
		return err
	}
	created, err := p.putContents(ctx, write)
	if err != nil {
		return err
	}
	return p.write(ctx, write, found.ids, lo, created)
}

// found is what lookUp found.
type found struct {
	idems map[string]index.Committed // stored documents by idempotency key
	roots map[string][]int64         // top-level documents by key
	ids   []int64                    // document ids for the segment's entries
}

// lookUp locks the segment's keys, in order, and reads what is stored
// under them, in one round trip.
func (p *putTx) lookUp(ctx context.Context, lo, hi int) (*found, error) {
	var locks []int64
	var idems [][]byte
	var keys []string
	for i := lo; i < hi; i++ {
		e := &p.entries[i]
		idem := e.Doc.IdempotencyKey()
		idems = append(idems, []byte(idem))
		locks = append(locks, lockKey("idem", idem))
		if e.Parent < 0 {
			keys = append(keys, e.Doc.Key)
			locks = append(locks, lockKey("key", e.Doc.Key))
		}
	}
	slices.Sort(locks)
	f := &found{idems: map[string]index.Committed{}, roots: map[string][]int64{}}
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT k FROM unnest($1::int8[]) k ORDER BY k) s", locks)
	b.Queue("SELECT idem, id, coalesce(content_id, 0) FROM index_documents WHERE idem = ANY($1)", idems).Query(func(rows pgx.Rows) error {
		return scanEach(rows, func() error {
			var idem []byte
			var c index.Committed
			c.Duplicate = true
			if err := rows.Scan(&idem, &c.ID, &c.Content); err != nil {
				return err
			}
			f.idems[string(idem)] = c
			return nil
		})
	})
	b.Queue("SELECT key, id FROM index_documents WHERE key = ANY($1) AND parent_id IS NULL ORDER BY id", keys).Query(func(rows pgx.Rows) error {
		return scanEach(rows, func() error {
			var key string
			var id int64
			if err := rows.Scan(&key, &id); err != nil {
				return err
			}
			f.roots[key] = append(f.roots[key], id)
			return nil
		})
	})
	b.Queue("SELECT nextval(pg_get_serial_sequence('index_documents', 'id')) FROM generate_series(1, $1::int)", hi-lo).Query(func(rows pgx.Rows) error {
		return scanEach(rows, func() error {
			var id int64
			err := rows.Scan(&id)
			f.ids = append(f.ids, id)
			return err
		})
	})
	if err := p.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("look up %d documents: %w", hi-lo, err)
	}
	return f, nil
}

// scanEach calls fn for each of rows.
func scanEach(rows pgx.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// replace removes the versions the entries write replace, with their
// families, and records them as replaced.
func (p *putTx) replace(ctx context.Context, write []int, roots map[string][]int64) error {
	var all []int64
	for _, ids := range roots {
		all = append(all, ids...)
	}
	if len(all) == 0 {
		return nil
	}
	removed, err := removeFamilies(ctx, p.tx, all)
	if err != nil {
		return err
	}
	for _, i := range write {
		e := &p.entries[i]
		if !replaces(e) {
			continue
		}
		for _, root := range roots[e.Doc.Key] {
			p.out[i].Replaced = append(p.out[i].Replaced, removed[root]...)
		}
	}
	return nil
}

// putContents counts a reference to the content of each entry of write
// that has a fingerprint, creating those not stored, in one statement; it
// sets the entries' Content and returns the contents it created.
func (p *putTx) putContents(ctx context.Context, write []int) (map[index.ContentID]int, error) {
	refs := map[[32]byte]int64{}
	first := map[[32]byte]int{} // the entry whose fingerprint a new content takes
	var shas [][32]byte
	for _, i := range write {
		if fp := p.entries[i].Fingerprint; fp != nil {
			if refs[fp.TextSHA256] == 0 {
				shas = append(shas, fp.TextSHA256)
				first[fp.TextSHA256] = i
			}
			refs[fp.TextSHA256]++
		}
	}
	if len(shas) == 0 {
		return nil, nil
	}
	// In the entries' order, so that new contents take ids in that order,
	// as in the SQLite store. Two writers storing the same texts in
	// opposite orders may deadlock: the server aborts one, which runs
	// again.
	var (
		sha, body, bands [][]byte
		size, sim, n     []int64
		anchors          []int32
	)
	for _, h := range shas {
		e := &p.entries[first[h]]
		fp := e.Fingerprint
		sha = append(sha, fp.TextSHA256[:])
		size = append(size, fp.TextSize)
		sim = append(sim, int64(fp.SimHash))
		body = append(body, fp.AppendBody(nil))
		bands = append(bands, encodeKeys(e.Bands))
		anchors = append(anchors, int32(len(fp.Anchors())))
		n = append(n, refs[h])
	}
	rows, err := p.tx.Query(ctx, `INSERT INTO index_contents AS c (text_sha256, text_size, simhash, body, bands, anchors, refs)
		SELECT * FROM unnest($1::bytea[], $2::int8[], $3::int8[], $4::bytea[], $5::bytea[], $6::int4[], $7::int8[])
		ON CONFLICT (text_sha256) DO UPDATE SET refs = c.refs + EXCLUDED.refs
		RETURNING text_sha256, id, xmax = 0`, sha, size, sim, body, bands, anchors, n)
	if err != nil {
		return nil, fmt.Errorf("store %d contents: %w", len(shas), err)
	}
	ids := map[[32]byte]index.ContentID{}
	created := map[index.ContentID]int{}
	err = scanEach(rows, func() error {
		var h []byte
		var id index.ContentID
		var isNew bool
		if err := rows.Scan(&h, &id, &isNew); err != nil {
			return err
		}
		ids[[32]byte(h)] = id
		if isNew {
			created[id] = first[[32]byte(h)]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %d contents: %w", len(shas), err)
	}
	for _, i := range write {
		if fp := p.entries[i].Fingerprint; fp != nil {
			p.out[i].Content = ids[fp.TextSHA256]
		}
	}
	return created, nil
}

// encodeKeys encodes 64-bit keys as 8 little-endian bytes each.
func encodeKeys(keys []uint64) []byte {
	b := make([]byte, 0, 8*len(keys))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b
}

// bandKeysOf returns the band keys of a content from its decoded body fp
// and index_contents.bands. This release writes the keys whole
// (encodeKeys) and also reads the form the SQLite store writes from its
// schema 12, one byte giving the number of bands whose keys the body's
// MinHash slots give again: a later release may then write that form
// while this one, still running during its rolling upgrade, reads it.
func bandKeysOf(fp *index.Fingerprint, bands []byte) []uint64 {
	if len(bands) == 1 {
		return sketch.Bands(sketch.Params{Bands: int(bands[0])}, fp.MinHash, nil)
	}
	return decodeKeys(bands)
}

// decodeKeys decodes what encodeKeys made.
func decodeKeys(b []byte) []uint64 {
	keys := make([]uint64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		keys = append(keys, binary.LittleEndian.Uint64(b))
	}
	return keys
}

// write inserts, in one round trip, the postings of the created contents,
// the texts of the entries and their documents, with the ids reserved
// for the segment starting at entry lo.
func (p *putTx) write(ctx context.Context, write []int, ids []int64, lo int, created map[index.ContentID]int) error {
	b := &pgx.Batch{}
	var posts postings
	for c, i := range created {
		posts.add(c, p.entries[i].Fingerprint, p.entries[i].Bands)
	}
	posts.queueInsert(b)
	for _, i := range write {
		e := &p.entries[i]
		p.out[i].ID = index.DocID(ids[i-lo])
		if e.Text != nil && p.out[i].Content != 0 {
			b.Queue("INSERT INTO index_texts (content_id, data) VALUES ($1, $2) ON CONFLICT DO NOTHING", p.out[i].Content, e.Text)
		}
	}
	for _, i := range write {
		if err := p.queueDocument(b, i); err != nil {
			return err
		}
	}
	if b.Len() == 0 {
		return nil
	}
	if err := p.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("insert %d documents: %w", len(write), err)
	}
	return nil
}

// queueDocument queues the insert of entries[i]'s document, whose id and
// content are set in p.out[i].
func (p *putTx) queueDocument(b *pgx.Batch, i int) error {
	e := &p.entries[i]
	d := &e.Doc
	var parent *int64
	if d.Parent != 0 {
		v := int64(d.Parent)
		parent = &v
	}
	if e.Parent >= 0 {
		v := int64(p.out[e.Parent].ID)
		parent = &v
	}
	var content *int64
	if c := p.out[i].Content; c != 0 {
		v := int64(c)
		content = &v
	}
	var rawSHA []byte
	rawSize := e.RawSize
	if e.RawSHA256 != ([32]byte{}) {
		rawSHA = e.RawSHA256[:]
	}
	if fp := e.Fingerprint; fp != nil {
		rawSHA, rawSize = fp.RawSHA256[:], fp.RawSize
	}
	path := []byte("[]")
	if d.Path != nil {
		path, _ = json.Marshal(d.Path) // strings always marshal
	}
	meta := []byte("{}")
	if d.Meta != nil {
		meta, _ = json.Marshal(d.Meta)
	}
	origin := []byte("{}") // never NULL, which marks rows written without it
	if d.Origin != nil {
		origin, _ = json.Marshal(d.Origin)
	}
	var modTime int64
	if !d.ModTime.IsZero() {
		modTime = d.ModTime.UnixNano()
	}
	b.Queue(`INSERT INTO index_documents (id, key, version_id, idem, name, source, parent_id, path, media_type, meta,
		mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id, origin)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		int64(p.out[i].ID), d.Key, d.VersionID, []byte(d.IdempotencyKey()), d.Name, d.Source, parent, string(path), d.MediaType, string(meta),
		modTime, p.now, d.Error, d.KeepVersions, rawSHA, rawSize, content, string(origin))
	return nil
}
