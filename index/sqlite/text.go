package sqlite

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/chunk"
)

// Codecs name how a texts row holds its text; the codec is stored with
// each text so another can be added without rewriting the older rows.
const (
	// codecZstd is the whole text in one Zstandard frame (versions 3–7;
	// still read, no longer written).
	codecZstd = "zstd"
	// codecPieces is the text as a list of runs of pieces kept once in
	// text_blocks (version 8): near-copies share most of their bytes.
	codecPieces = "pieces"
)

// maxText bounds what a stored text may inflate to, so a corrupt row cannot
// exhaust memory.
const maxText = 1 << 30

// pieceParams cut a text into the pieces stored once across all texts:
// content-defined, so that an excerpt, a re-save or an edited version
// shares every piece but those around its edits and ends. Smaller pieces
// share more, but cost a row and a run each; on the 50,000-file scan
// corpus these kept 3.2 times less than compressing each text alone
// (docs/BENCHMARKS.md).
var pieceParams = chunk.Params{Min: 128, Avg: 512, Max: 4096}

// maxBlock is the most new bytes a text puts in one block: reading a
// text decompresses every block it uses whole, so a short text sharing a
// piece of a long one must not inflate all of it.
const maxBlock = 128 << 10

// textVersion is the first byte of a codecPieces texts row.
const textVersion = 1

var (
	textEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	textDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxText), zstd.WithDecoderConcurrency(0))
)

// preparedText is a text cut into pieces by Prepare.
type preparedText struct {
	sum    [32]byte
	pieces []chunk.Chunk
}

func prepareText(text []byte) *preparedText {
	return &preparedText{sum: sha256.Sum256(text), pieces: chunk.Append(pieceParams, nil, text)}
}

// Prepare cuts the texts of entries into pieces and hashes them on the
// caller's goroutine, leaving the single writer to look the pieces up and
// compress the new ones. Put prepares any text left unprepared.
func (s *Store) Prepare(ctx context.Context, entries []index.Entry) {
	for i := range entries {
		e := &entries[i]
		if e.Text != nil && e.Fingerprint != nil {
			e.Prepared = prepareText(e.Text)
		}
	}
}

// insertPieces begins the statement inserting text_pieces rows.
const insertPieces = "INSERT OR IGNORE INTO text_pieces (h, block, off, len)"

// textRun is a run of a text's bytes stored in one block.
type textRun struct {
	block    int64
	off, len uint32
}

// textRow is a decoded codecPieces row.
type textRow struct {
	sum  [32]byte
	size uint64
	runs []textRun
}

// appendTextRow encodes r: the version, the text's SHA-256 and length,
// then its runs as (block gap from the previous run's, zigzag varint;
// offset; length).
func appendTextRow(dst []byte, r *textRow) []byte {
	dst = append(dst, textVersion)
	dst = append(dst, r.sum[:]...)
	dst = binary.AppendUvarint(dst, r.size)
	dst = binary.AppendUvarint(dst, uint64(len(r.runs)))
	var prev int64
	for _, run := range r.runs {
		dst = binary.AppendVarint(dst, run.block-prev)
		dst = binary.AppendUvarint(dst, uint64(run.off))
		dst = binary.AppendUvarint(dst, uint64(run.len))
		prev = run.block
	}
	return dst
}

// errTextRow is wrapped by decodeTextRow's errors.
var errTextRow = fmt.Errorf("%w: text row", ErrInconsistent)

// decodeTextRow decodes a row made by appendTextRow, checking that its
// runs add up to its length.
func decodeTextRow(b []byte) (*textRow, error) {
	if len(b) < 1+sha256.Size || b[0] != textVersion {
		return nil, fmt.Errorf("%w: version or length", errTextRow)
	}
	r := &textRow{}
	copy(r.sum[:], b[1:])
	b = b[1+sha256.Size:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	var ok bool
	if r.size, ok = uv(); !ok || r.size > maxText {
		return nil, fmt.Errorf("%w: size", errTextRow)
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) { // each run takes at least three bytes
		return nil, fmt.Errorf("%w: run count", errTextRow)
	}
	r.runs = make([]textRun, 0, n)
	var block int64
	var total uint64
	for range n {
		gap, m := binary.Varint(b)
		if m <= 0 {
			return nil, fmt.Errorf("%w: block", errTextRow)
		}
		b = b[m:]
		block += gap
		off, ok1 := uv()
		l, ok2 := uv()
		if !ok1 || !ok2 || off > maxBlock+uint64(pieceParams.Max) || l == 0 || l > maxBlock+uint64(pieceParams.Max) {
			return nil, fmt.Errorf("%w: run", errTextRow)
		}
		total += l
		r.runs = append(r.runs, textRun{block: block, off: uint32(off), len: uint32(l)})
	}
	if len(b) != 0 || total != r.size {
		return nil, fmt.Errorf("%w: runs cover %d of %d bytes", errTextRow, total, r.size)
	}
	return r, nil
}

// blocks returns the distinct blocks of r's runs, ascending.
func (r *textRow) blocks() []int64 {
	ids := make([]int64, 0, len(r.runs))
	for _, run := range r.runs {
		ids = append(ids, run.block)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// textWriter stores the texts of one transaction. Their pieces are looked
// up all at once (lookUp), and the references to blocks counted and the new
// pieces inserted in batches (flush): one statement per piece cost the
// single writer of a bulk load half again its time.
type textWriter struct {
	bulk  *bulkPieces        // a bulk load's, which has no rows yet
	known map[uint64]textRun // pieces stored, by hash: looked up or added
	asked map[uint64]bool    // hashes looked up, found or not
	refs  map[int64]int64    // references to count, by block
	rows  *rowWriter         // text_pieces rows to insert
	// The index's text dictionary (textdict.go), once read, or the text
	// gathered to make it.
	dictRead bool
	dict     *dictCodec
	sample   []byte
}

// texts returns the transaction's textWriter.
func (t *txStmts) texts(ctx context.Context, bulk *bulkPieces) *textWriter {
	if t.tw == nil {
		t.tw = &textWriter{
			bulk:  bulk,
			known: make(map[uint64]textRun),
			asked: make(map[uint64]bool),
			refs:  make(map[int64]int64),
			rows:  &rowWriter{ctx: ctx, stmts: t, insert: insertPieces, cols: 4},
		}
	}
	return t.tw
}

// bulkPieces are the text pieces a bulk load (Loader) has
// stored, kept in memory and inserted into text_pieces in key order when
// it settles: inserted at each commit, at random places in the table, they
// made the single writer of the 50,000-file scan a fifth slower. The index
// held nothing when the load began, so these are all its pieces. A crash
// loses them, and with them only the sharing of those pieces with texts
// stored later: a text never needs its pieces' rows to be read or removed.
type bulkPieces struct {
	stored map[uint64]textRun // committed
	added  map[uint64]textRun // by the transaction under way
}

func newBulkPieces() *bulkPieces {
	return &bulkPieces{stored: make(map[uint64]textRun), added: make(map[uint64]textRun)}
}

func (b *bulkPieces) get(h uint64) (textRun, bool) {
	if r, ok := b.added[h]; ok {
		return r, true
	}
	r, ok := b.stored[h]
	return r, ok
}

// commit keeps the pieces of the transaction just committed.
func (b *bulkPieces) commit() {
	if b != nil {
		maps.Copy(b.stored, b.added)
		clear(b.added)
	}
}

// discard forgets the pieces of a transaction rolled back.
func (b *bulkPieces) discard() {
	if b != nil {
		clear(b.added)
	}
}

// pendingPieces returns the pieces of the texts a bulk load that did not
// settle stored, as that load held them in memory, for the load that
// carries it on: otherwise its texts could not share those pieces, and a
// 50,000-file scan killed after 6 s and run again kept 8 MB more of text
// blocks. A text's runs are made of whole pieces, and where a piece is cut
// depends on its own bytes alone, so each distinct run is cut into pieces
// again from its block's bytes, each block inflated once (assembling every
// text instead, and hashing it, took 4.4 of 5 CPU-s of opening 26,507
// texts). A piece is taken only in the block that lists it, since deleting
// a block deletes the pieces it lists; its hash is computed from the bytes
// it is taken at. The load's pieces were never inserted: with text_pieces
// holding rows, none are taken (they are not this load's).
func pendingPieces(ctx context.Context, tx *sql.Tx) (*bulkPieces, error) {
	b := newBulkPieces()
	var inserted bool
	if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM text_pieces)").Scan(&inserted); err != nil || inserted {
		return b, err
	}
	runs := make(map[int64][]textRun) // by block
	texts, err := tx.QueryContext(ctx, "SELECT content_id, data FROM texts WHERE codec = ?", codecPieces)
	err = eachRow(texts, err, func(rows *sql.Rows) error {
		var content int64
		var data []byte
		if err := rows.Scan(&content, &data); err != nil {
			return err
		}
		row, err := decodeTextRow(data)
		if err != nil {
			return fmt.Errorf("text of content %d: %w", content, err)
		}
		for _, r := range row.runs {
			runs[r.block] = append(runs[r.block], r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read texts: %w", err)
	}
	if len(runs) == 0 {
		return b, nil
	}
	listed := make(map[uint64]bool)
	blocks, err := tx.QueryContext(ctx, "SELECT id, data, pieces FROM text_blocks")
	err = eachRow(blocks, err, func(rows *sql.Rows) error {
		var id int64
		var z, hashes []byte
		if err := rows.Scan(&id, &z, &hashes); err != nil {
			return err
		}
		in := runs[id]
		if len(in) == 0 {
			return nil
		}
		data, err := inflateBlock(ctx, tx, z)
		if err != nil {
			return fmt.Errorf("decompress text block %d: %w", id, err)
		}
		clear(listed)
		for i := 0; i+8 <= len(hashes); i += 8 {
			listed[binary.LittleEndian.Uint64(hashes[i:])] = true
		}
		slices.SortFunc(in, func(x, y textRun) int { return cmp.Or(cmp.Compare(x.off, y.off), cmp.Compare(x.len, y.len)) })
		for _, r := range slices.Compact(in) {
			if uint64(r.off)+uint64(r.len) > uint64(len(data)) {
				return fmt.Errorf("%w: run beyond text block %d", ErrInconsistent, id)
			}
			at := r.off
			for _, pc := range chunk.Append(pieceParams, nil, data[r.off:r.off+r.len]) {
				if _, known := b.stored[pc.Hash]; !known && listed[pc.Hash] {
					b.stored[pc.Hash] = textRun{block: id, off: at, len: pc.Len}
				}
				at += pc.Len
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read text blocks: %w", err)
	}
	return b, nil
}

// forgetBlock forgets the pieces of a deleted block.
func (b *bulkPieces) forgetBlock(block int64) {
	if b != nil {
		inBlock := func(_ uint64, r textRun) bool { return r.block == block }
		maps.DeleteFunc(b.stored, inBlock)
		maps.DeleteFunc(b.added, inBlock)
	}
}

// settlePieces inserts the load's pieces into text_pieces, in key order,
// in one transaction; lookups go to the table from then on.
func (l *Loader) settlePieces(ctx context.Context) error {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	b := l.pieces
	if b == nil {
		return nil
	}
	start := time.Now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("settle text pieces: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	stmts := &txStmts{tx: tx, pool: s.ws}
	w := &rowWriter{ctx: ctx, stmts: stmts, insert: insertPieces, cols: 4}
	for _, h := range slices.Sorted(maps.Keys(b.stored)) {
		r := b.stored[h]
		if err := w.put(int64(h), r.block, r.off, r.len); err != nil {
			return fmt.Errorf("settle text pieces: %w", err)
		}
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("settle text pieces: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("settle text pieces: commit: %w", s.mapErr(err))
	}
	l.pieces = nil
	s.logger.Debug("settled the text pieces of a bulk load", "path", s.path, "seconds", time.Since(start).Seconds(), "pieces", len(b.stored))
	return nil
}

// lookUpBatch is how many piece hashes one statement looks up.
const lookUpBatch = 4096

// lookUp finds the stored pieces of the prepared texts of entries.
func (w *textWriter) lookUp(ctx context.Context, stmts *txStmts, entries []index.Entry) error {
	if w.bulk != nil {
		return nil
	}
	var batch []byte
	n := 0
	run := func() error {
		if n == 0 {
			return nil
		}
		batch = append(batch, ']')
		rows, err := stmts.query(ctx, "SELECT t.h, t.block, t.off, t.len FROM json_each(?) j JOIN text_pieces t ON t.h = j.value", string(batch))
		err = eachRow(rows, err, func(rows *sql.Rows) error {
			var h, block, off, l int64
			if err := rows.Scan(&h, &block, &off, &l); err != nil {
				return err
			}
			w.known[uint64(h)] = textRun{block: block, off: uint32(off), len: uint32(l)}
			return nil
		})
		if err != nil {
			return fmt.Errorf("look up text pieces: %w", err)
		}
		batch, n = batch[:0], 0
		return nil
	}
	for i := range entries {
		p, ok := entries[i].Prepared.(*preparedText)
		if !ok || entries[i].Text == nil {
			continue
		}
		for _, pc := range p.pieces {
			if w.asked[pc.Hash] {
				continue
			}
			w.asked[pc.Hash] = true
			if n == 0 {
				batch = append(batch, '[')
			} else {
				batch = append(batch, ',')
			}
			batch = strconv.AppendInt(batch, int64(pc.Hash), 10)
			if n++; n == lookUpBatch {
				if err := run(); err != nil {
					return err
				}
			}
		}
	}
	return run()
}

// piece returns where the piece h of length l is stored, if it is.
func (w *textWriter) piece(ctx context.Context, stmts *txStmts, h uint64, l uint32) (textRun, bool, error) {
	run, ok := w.known[h]
	if !ok && w.bulk != nil {
		run, ok = w.bulk.get(h)
	} else if !ok && !w.asked[h] { // a text Prepare did not see
		w.asked[h] = true
		var block, off, n int64
		err := stmts.queryRow(ctx, "SELECT block, off, len FROM text_pieces WHERE h = ?", int64(h)).Scan(&block, &off, &n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return textRun{}, false, fmt.Errorf("look up text piece: %w", err)
		}
		if ok = err == nil; ok {
			run = textRun{block: block, off: uint32(off), len: uint32(n)}
			w.known[h] = run
		}
	}
	// Another piece under the same hash is stored as new bytes.
	return run, ok && run.len == l, nil
}

// putText keeps the extracted text of content c, once: its pieces already
// stored (in any text) are referred to, the others are compressed into new
// blocks. prepared is the entry's Prepared.
//
// A content created by this transaction has no text yet; one stored before
// may have (or not, if stored without keeping texts).
func (s *Store) putText(ctx context.Context, stmts *txStmts, c index.ContentID, created bool, text []byte, prepared any) error {
	if !created {
		var one int
		err := stmts.queryRow(ctx, "SELECT 1 FROM texts WHERE content_id = ?", int64(c)).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	p, ok := prepared.(*preparedText)
	if !ok {
		p = prepareText(text)
	}
	w := stmts.tw // made by put, with the load's pieces
	// New pieces go into new blocks, numbered -1, -2, … until inserted.
	type newPiece struct {
		h        uint64
		off, len uint32
	}
	var (
		row       = textRow{sum: p.sum, size: uint64(len(text))}
		fresh     [][]byte     // new bytes of each new block
		freshKeys [][]newPiece // the pieces in each
		at        int
	)
	for _, pc := range p.pieces {
		if int(pc.Len) > len(text)-at {
			return fmt.Errorf("store text of content %d: pieces longer than the text", c)
		}
		data := text[at : at+int(pc.Len)]
		at += int(pc.Len)
		run, stored, err := w.piece(ctx, stmts, pc.Hash, pc.Len)
		if err != nil {
			return err
		}
		if !stored {
			if len(fresh) == 0 || len(fresh[len(fresh)-1])+len(data) > maxBlock {
				fresh = append(fresh, nil)
				freshKeys = append(freshKeys, nil)
			}
			j := len(fresh) - 1
			run = textRun{block: -int64(j + 1), off: uint32(len(fresh[j])), len: pc.Len}
			fresh[j] = append(fresh[j], data...)
			if _, taken := w.known[pc.Hash]; !taken {
				freshKeys[j] = append(freshKeys[j], newPiece{pc.Hash, run.off, run.len})
				w.known[pc.Hash] = run // a repeat within this text; fixed below
			}
		}
		row.runs = appendRun(row.runs, run)
	}
	if at != len(text) {
		return fmt.Errorf("store text of content %d: pieces cover %d of %d bytes", c, at, len(text))
	}
	if len(fresh) > 0 {
		ids := make([]int64, len(fresh))
		for j, data := range fresh {
			keys := make([]byte, 0, 8*len(freshKeys[j]))
			for _, k := range freshKeys[j] {
				keys = binary.LittleEndian.AppendUint64(keys, k.h)
			}
			z, err := w.deflateBlock(ctx, stmts, data)
			if err != nil {
				return err
			}
			err = stmts.queryRow(ctx, "INSERT INTO text_blocks (refs, data, pieces) VALUES (0, ?, ?) RETURNING id",
				z, keys).Scan(&ids[j])
			if err != nil {
				return fmt.Errorf("store text block: %w", err)
			}
			for _, k := range freshKeys[j] {
				run := textRun{block: ids[j], off: k.off, len: k.len}
				w.known[k.h] = run
				if w.bulk != nil {
					w.bulk.added[k.h] = run
				} else if err := w.rows.put(int64(k.h), run.block, run.off, run.len); err != nil {
					return fmt.Errorf("store text pieces: %w", err)
				}
			}
		}
		for i := range row.runs {
			if b := row.runs[i].block; b < 0 {
				row.runs[i].block = ids[-b-1]
			}
		}
	}
	for _, b := range row.blocks() {
		w.refs[b]++
	}
	return stmts.exec(ctx, "INSERT INTO texts (content_id, codec, data) VALUES (?, ?, ?)", int64(c), codecPieces, appendTextRow(nil, &row))
}

// flush counts the references and inserts the pieces w has collected.
func (w *textWriter) flush(ctx context.Context, stmts *txStmts) error {
	if w == nil {
		return nil
	}
	for _, b := range slices.Sorted(maps.Keys(w.refs)) {
		if err := stmts.exec(ctx, "UPDATE text_blocks SET refs = refs + ? WHERE id = ?", w.refs[b], b); err != nil {
			return fmt.Errorf("count references to text block %d: %w", b, err)
		}
	}
	clear(w.refs)
	return w.rows.flush()
}

// appendRun appends run to runs, extending the last run when run follows
// it in the same block (an unedited stretch of a stored text).
func appendRun(runs []textRun, run textRun) []textRun {
	if n := len(runs); n > 0 {
		last := &runs[n-1]
		if last.block == run.block && last.off+last.len == run.off {
			last.len += run.len
			return runs
		}
	}
	return append(runs, run)
}

// releaseText drops content cid's text's references to its blocks and
// deletes those no text uses any more, and their pieces; the texts row
// itself goes with its content (ON DELETE CASCADE).
func releaseText(ctx context.Context, stmts *txStmts, cid int64) error {
	tx := stmts.tx
	var codec string
	var data []byte
	err := tx.QueryRowContext(ctx, "SELECT codec, data FROM texts WHERE content_id = ?", cid).Scan(&codec, &data)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && codec != codecPieces) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release text of content %d: %w", cid, err)
	}
	row, err := decodeTextRow(data)
	if err != nil {
		return fmt.Errorf("release text of content %d: %w", cid, err)
	}
	// The references this transaction has counted must be in place
	// before any is dropped.
	if err := stmts.tw.flush(ctx, stmts); err != nil {
		return err
	}
	for _, b := range row.blocks() {
		var refs int64
		if err := tx.QueryRowContext(ctx, "UPDATE text_blocks SET refs = refs - 1 WHERE id = ? RETURNING refs", b).Scan(&refs); err != nil {
			return fmt.Errorf("release text block %d of content %d: %w", b, cid, err)
		}
		if refs > 0 {
			continue
		}
		var keys []byte
		if err := tx.QueryRowContext(ctx, "DELETE FROM text_blocks WHERE id = ? RETURNING pieces", b).Scan(&keys); err != nil {
			return fmt.Errorf("delete text block %d: %w", b, err)
		}
		for ; len(keys) >= 8; keys = keys[8:] {
			h := int64(binary.LittleEndian.Uint64(keys))
			if _, err := tx.ExecContext(ctx, "DELETE FROM text_pieces WHERE h = ? AND block = ?", h, b); err != nil {
				return fmt.Errorf("delete the pieces of text block %d: %w", b, err)
			}
		}
		if w := stmts.tw; w != nil {
			maps.DeleteFunc(w.known, func(_ uint64, r textRun) bool { return r.block == b })
			w.bulk.forgetBlock(b)
		}
	}
	return nil
}

// Text returns the extracted text kept for content.
func (s *Store) Text(ctx context.Context, content index.ContentID) ([]byte, error) {
	// One read transaction (or ctx's snapshot), so that a block cannot go
	// between the row and the block reads.
	tx, end, err := s.readTx(ctx)
	if err == nil {
		defer end()
		var text []byte
		if text, err = textIn(ctx, tx, int64(content)); err == nil {
			return text, nil
		}
	}
	return nil, fmt.Errorf("text of content %d: %w", content, s.mapErr(err))
}

// readPieces assembles a codecPieces text from its blocks, each read and
// inflated once, and checks it against its SHA-256.
func readPieces(ctx context.Context, tx *sql.Tx, data []byte) ([]byte, error) {
	row, err := decodeTextRow(data)
	if err != nil {
		return nil, err
	}
	blocks := make(map[int64][]byte)
	for _, b := range row.blocks() {
		var z []byte
		err := tx.QueryRowContext(ctx, "SELECT data FROM text_blocks WHERE id = ?", b).Scan(&z)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: text block %d missing", ErrInconsistent, b)
		}
		if err != nil {
			return nil, fmt.Errorf("read text block %d: %w", b, err)
		}
		if blocks[b], err = inflateBlock(ctx, tx, z); err != nil {
			return nil, fmt.Errorf("decompress text block %d: %w", b, err)
		}
	}
	text := make([]byte, 0, row.size)
	for _, run := range row.runs {
		data := blocks[run.block]
		if uint64(run.off)+uint64(run.len) > uint64(len(data)) {
			return nil, fmt.Errorf("%w: run beyond text block %d", ErrInconsistent, run.block)
		}
		text = append(text, data[run.off:run.off+run.len]...)
	}
	if sha256.Sum256(text) != row.sum {
		return nil, fmt.Errorf("%w: text does not match its SHA-256", ErrInconsistent)
	}
	return text, nil
}

// checkTexts verifies that every text block's reference count is the
// number of texts using it and that every block a text uses, or a piece
// is found in, exists.
func checkTexts(ctx context.Context, q querier) error {
	uses := make(map[int64]int64)
	rows, err := q.QueryContext(ctx, "SELECT content_id, data FROM texts WHERE codec = ?", codecPieces)
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var cid int64
		var data []byte
		if err := rows.Scan(&cid, &data); err != nil {
			return err
		}
		row, err := decodeTextRow(data)
		if err != nil {
			return fmt.Errorf("content %d: %w", cid, err)
		}
		for _, b := range row.blocks() {
			uses[b]++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check texts: %w", err)
	}
	blocks, err := q.QueryContext(ctx, "SELECT id, refs FROM text_blocks")
	if err != nil {
		return fmt.Errorf("check texts: %w", err)
	}
	defer blocks.Close()
	for blocks.Next() {
		var id, refs int64
		if err := blocks.Scan(&id, &refs); err != nil {
			return fmt.Errorf("check texts: %w", err)
		}
		if uses[id] != refs {
			return fmt.Errorf("check index: %w: text block %d counts %d references, %d texts use it", ErrInconsistent, id, refs, uses[id])
		}
		delete(uses, id)
	}
	if err := blocks.Err(); err != nil {
		return fmt.Errorf("check texts: %w", err)
	}
	for id := range uses {
		return fmt.Errorf("check index: %w: text block %d is used but missing", ErrInconsistent, id)
	}
	var orphans int64
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM text_pieces WHERE block NOT IN (SELECT id FROM text_blocks)").Scan(&orphans); err != nil {
		return fmt.Errorf("check texts: %w", err)
	}
	if orphans > 0 {
		return fmt.Errorf("check index: %w: %d text pieces in missing blocks", ErrInconsistent, orphans)
	}
	return nil
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
	where, more := findWhere(query)
	rs, err := s.records(ctx, what, where+" ORDER BY d.id DESC LIMIT ?2", append([]any{pattern, limit}, more...)...)
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

// findWhere returns the clause that selects the documents whose name or
// key holds query, as LIKE does, given the arguments pattern (the LIKE
// pattern of query) and limit, then those it returns.
//
// A name stored as the length of the key's suffix it is (docrows.go)
// matches only where the key does, and is not read. A key is its prefix,
// which ends at its last '/', and its base, which has no '/'; no key is
// put together for each row (that made a search twice as long): query
// lies within the prefix, or within the base when it has no '/', or, when
// it has, spans the two: the prefix ends with query up to its last '/'
// and the base begins with the rest.
func findWhere(query string) (string, []any) {
	const name = `(typeof(d.stored_name) = 'text' AND d.stored_name LIKE ?1 ESCAPE '\')`
	const inPrefix = `d.dir IN (SELECT id FROM doc_dirs WHERE prefix LIKE ?1 ESCAPE '\')`
	cut := strings.LastIndexByte(query, '/') + 1
	if cut == 0 {
		return `WHERE (` + inPrefix + ` OR d.base LIKE ?1 ESCAPE '\' OR ` + name + `)`, nil
	}
	return `WHERE (` + inPrefix + ` OR (d.dir IN (SELECT id FROM doc_dirs WHERE prefix LIKE ?3 ESCAPE '\')
		AND d.base LIKE ?4 ESCAPE '\') OR ` + name + `)`,
		[]any{"%" + likeEscaper.Replace(query[:cut]), likeEscaper.Replace(query[cut:]) + "%"}
}

// Children returns the documents directly inside id, by id.
func (s *Store) Children(ctx context.Context, id index.DocID) ([]*index.Record, error) {
	return s.records(ctx, fmt.Sprintf("children of document %d", id), "WHERE d.parent_id = ? ORDER BY d.id", int64(id))
}
