package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"slices"
	"sync"

	"github.com/simdex/simdex/index/chunk"
	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/index/sketch"
)

// Sentinel errors for input the index refuses.
var (
	// ErrEmpty reports a document whose normalised text is empty.
	ErrEmpty = errors.New("empty text")
	// ErrInvalidText reports text that is not valid UTF-8.
	ErrInvalidText = errors.New("text is not valid UTF-8")
)

// Index is the near-copy engine over a Store. It is safe for concurrent use
// by many goroutines: fingerprinting runs on the caller's goroutine and
// concurrent Adds are committed together (group commit).
type Index struct {
	store  Store
	opts   Options
	scheme uint32
	logger *slog.Logger

	commits chan *commitReq
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once

	sims      simTable
	templates templateSet
	follow    follow // where a shared store's changes were last read
	bufs      sync.Pool
}

// New returns an Index over store, which must have been opened with
// opts.Scheme(). It loads the SimHash table and templates from the store
// and starts the committer; Close stops it (and does not close the store).
func New(ctx context.Context, store Store, opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("index options: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ix := &Index{
		store:   store,
		opts:    opts,
		scheme:  opts.Scheme(),
		logger:  logger.With("component", "index"),
		commits: make(chan *commitReq, opts.MaxBatch),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	ix.bufs.New = func() any { return new(buffers) }
	if err := ix.refingerprint(ctx); err != nil {
		return nil, err
	}
	if err := ix.startFollowing(ctx); err != nil {
		return nil, err
	}
	if err := store.SimHashes(ctx, func(id ContentID, h uint64) error {
		ix.sims.add(id, h)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load simhashes: %w", err)
	}
	if err := ix.loadTemplates(ctx); err != nil {
		return nil, err
	}
	go ix.commitLoop()
	return ix, nil
}

// Close stops the committer after the commits under way. It does not close
// the store.
func (ix *Index) Close() error {
	ix.once.Do(func() { close(ix.stop) })
	<-ix.done
	return nil
}

// Options returns the options the index runs with.
func (ix *Index) Options() Options { return ix.opts }

// Store returns the underlying store.
func (ix *Index) Store() Store { return ix.store }

type buffers struct {
	nz     normalise.Normaliser // its scratch state is reused
	norm   []byte
	chunks []chunk.Chunk
	sk     sketch.Sketch
}

// maxPooledText is the largest normal form whose buffers are kept for the
// next text: the buffers of a rare large text would otherwise stay held,
// one per core, long after it is indexed.
const maxPooledText = 4 << 20

// putBuffers keeps b for the next text unless it grew too large.
func (ix *Index) putBuffers(b *buffers) {
	if cap(b.norm) <= maxPooledText {
		ix.bufs.Put(b)
	}
}

// Fingerprint computes the fingerprint of text (extracted, not yet
// normalised) for an object whose raw bytes hash to rawSHA.
func (ix *Index) Fingerprint(rawSHA [32]byte, rawSize int64, text []byte) (*Fingerprint, error) {
	b := ix.bufs.Get().(*buffers)
	defer ix.putBuffers(b)
	if err := b.normalise(text); err != nil {
		return nil, err
	}
	if len(b.norm) == 0 {
		return nil, ErrEmpty
	}
	fp := &Fingerprint{
		Scheme:     ix.scheme,
		RawSHA256:  rawSHA,
		RawSize:    rawSize,
		TextSHA256: sha256.Sum256(b.norm),
		TextSize:   int64(len(b.norm)),
	}
	b.chunks = chunk.Append(ix.opts.Chunk, b.chunks[:0], b.norm)
	fp.Chunks = make([]Chunk, len(b.chunks))
	for i, c := range b.chunks {
		fp.Chunks[i] = Chunk{Hash: c.Hash, Len: c.Len}
	}
	sketch.Compute(ix.opts.Sketch, b.norm, &b.sk)
	fp.Samples = append([]uint32(nil), b.sk.Samples...)
	fp.MinHash = append([]uint32(nil), b.sk.MinHash...)
	fp.SimHash = b.sk.SimHash
	if p := ix.opts.Sketch; p.FullBits() < 32 {
		fp.MinHashBits = uint8(p.MinHashBits)
	}
	if b.sk.Level > 0 {
		fp.SampleBase, fp.SampleLevel = uint8(ix.opts.Sketch.BaseLevel()), uint8(b.sk.Level)
	}
	return fp, nil
}

// normalise puts text (extracted) in its normal form into b.norm.
func (b *buffers) normalise(text []byte) error {
	var err error
	if b.norm, err = b.nz.Append(b.norm[:0], text); err != nil {
		return fmt.Errorf("normalise: %w: %w", ErrInvalidText, err)
	}
	return nil
}

// TextDigest returns the SHA-256 of text (extracted, not yet normalised)
// in its normal form: what Record.TextSHA holds for a document of that
// text. A text read again from its origin is the one indexed if and only
// if the two agree.
func (ix *Index) TextDigest(text []byte) ([32]byte, error) {
	b := ix.bufs.Get().(*buffers)
	defer ix.putBuffers(b)
	if err := b.normalise(text); err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b.norm), nil
}

// Input is one document to add: its description, its raw hash and size,
// and its extracted text.
type Input struct {
	Doc       Doc
	RawSHA256 [32]byte
	RawSize   int64
	// Text is the extracted text. It is ignored when Doc.Error is set.
	Text []byte
	// Parent, when non-negative, is the index of the parent input in the
	// same Add call.
	Parent int
	// KeepText keeps Text for reviewers even when Options.KeepText is
	// off: for a document no origin can give again, such as a hold's seed
	// file.
	KeepText bool
}

// Result reports what Add did with one input.
type Result struct {
	Committed
	// Fingerprint is nil when the document was stored with an error.
	Fingerprint *Fingerprint
	// Err is why the document was stored without a fingerprint: the
	// input's Doc.Error, or an index error such as ErrEmpty.
	Err error
}

// Add fingerprints inputs and commits them together, atomically: either all
// are durably stored or none is. A document whose text cannot be
// fingerprinted (empty, invalid UTF-8) is stored with its error recorded,
// so reviewers see it. Re-adding an input whose idempotency key is stored
// is a no-op reported as Duplicate. Add is Prepare then Commit.
func (ix *Index) Add(ctx context.Context, inputs []Input) ([]Result, error) {
	return ix.Commit(ctx, ix.Prepare(ctx, inputs))
}

// Prepared is a family of inputs fingerprinted and ready to commit: what
// Prepare returns and Commit takes.
type Prepared struct {
	entries []Entry
	results []Result
}

// KeepOlderVersions makes p's top-level documents keep the older versions
// of their keys instead of replacing them: a legal hold covers one of
// them, which must stay when its source overwrites it.
func (p *Prepared) KeepOlderVersions() {
	for i := range p.entries {
		if p.entries[i].Parent < 0 {
			p.entries[i].Doc.KeepVersions = true
		}
	}
}

// Prepare fingerprints inputs and prepares them for the store: the half of
// Add that keeps a core busy. A caller that runs many Adds at once can
// bound how many prepare at a time and leave the single writer that Commit
// waits for a core of its own (see Commit).
func (ix *Index) Prepare(ctx context.Context, inputs []Input) *Prepared {
	entries := make([]Entry, len(inputs))
	results := make([]Result, len(inputs))
	for i := range inputs {
		in := &inputs[i]
		e := Entry{Doc: in.Doc, Parent: in.Parent, RawSHA256: in.RawSHA256, RawSize: in.RawSize}
		if in.Doc.Error == "" {
			fp, err := ix.Fingerprint(in.RawSHA256, in.RawSize, in.Text)
			if err != nil {
				e.Doc.Error = err.Error()
				results[i].Err = err
			} else {
				e.Fingerprint = fp
				e.Doc.Meta = withWords(e.Doc.Meta, in.Text)
				e.Bands = sketch.Bands(ix.opts.Sketch, fp.MinHash, nil)
				if ix.opts.KeepText || in.KeepText {
					e.Text = in.Text
				}
				results[i].Fingerprint = fp
			}
		} else {
			results[i].Err = errors.New(in.Doc.Error)
		}
		entries[i] = e
	}
	if p, ok := ix.store.(Preparer); ok {
		p.Prepare(ctx, entries)
	}
	return &Prepared{entries: entries, results: results}
}

// Commit commits what Prepare returned, atomically, and waits until it is
// durable. Commits are written by one goroutine, in groups: many callers
// waiting in Commit cost no CPU, but a writer that has to wait for a core
// behind many preparing callers delays them all (an unbounded scan of
// 50,000 files took 13-16 s to index instead of 11-12 s).
func (ix *Index) Commit(ctx context.Context, p *Prepared) ([]Result, error) {
	committed, err := ix.commit(ctx, p.entries)
	if err != nil {
		return nil, err
	}
	results := p.results
	for i := range results {
		results[i].Committed = committed[i]
		if fp := results[i].Fingerprint; fp != nil && !committed[i].Duplicate {
			ix.sims.add(committed[i].Content, fp.SimHash)
		}
	}
	return results, nil
}

// Remove deletes a document version (every version when versionID is
// empty) with its children, and returns the removed ids.
func (ix *Index) Remove(ctx context.Context, key, versionID string) ([]DocID, error) {
	return ix.store.Remove(ctx, key, versionID)
}

// Get returns a stored document.
func (ix *Index) Get(ctx context.Context, id DocID) (*Record, error) {
	return ix.store.Get(ctx, id)
}

type commitReq struct {
	ctx     context.Context
	entries []Entry
	out     []Committed
	err     error
	done    chan struct{}
}

func (ix *Index) commit(ctx context.Context, entries []Entry) ([]Committed, error) {
	req := &commitReq{ctx: ctx, entries: entries, done: make(chan struct{})}
	select {
	case ix.commits <- req:
	case <-ix.stop:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Once queued, the request is always answered: the committer never
	// drops one, so the caller learns whether its documents were stored.
	<-req.done
	return req.out, req.err
}

// commitLoop writes queued requests in batches: one transaction for many
// concurrent Adds turns one fsync per document into one per batch.
func (ix *Index) commitLoop() {
	defer close(ix.done)
	for {
		var first *commitReq
		select {
		case first = <-ix.commits:
		case <-ix.stop:
			ix.drain()
			return
		}
		batch := []*commitReq{first}
		n := len(first.entries)
	collect:
		for n < ix.opts.MaxBatch {
			select {
			case r := <-ix.commits:
				batch = append(batch, r)
				n += len(r.entries)
			default:
				break collect
			}
		}
		ix.write(batch)
	}
}

// drain answers requests queued before Close.
func (ix *Index) drain() {
	for {
		select {
		case r := <-ix.commits:
			ix.write([]*commitReq{r})
		default:
			return
		}
	}
}

func (ix *Index) write(batch []*commitReq) {
	if len(batch) > 1 {
		var all []Entry
		for _, r := range batch {
			base := len(all)
			for _, e := range r.entries {
				if e.Parent >= 0 {
					e.Parent += base
				}
				all = append(all, e)
			}
		}
		out, err := ix.store.Put(context.Background(), all)
		if err == nil {
			for _, r := range batch {
				r.out, out = out[:len(r.entries)], out[len(r.entries):]
				close(r.done)
			}
			return
		}
		ix.logger.Debug("group commit failed, committing one by one", "err", err)
	}
	// One request at a time, so one bad request cannot fail the others.
	for _, r := range batch {
		r.out, r.err = ix.store.Put(r.ctx, r.entries)
		close(r.done)
	}
}

// simTable is the in-memory SimHash table searched by Hamming distance.
// Small tables are scanned. Large ones are also split into simBlocks
// disjoint bit blocks, each indexed by value (multi-index hashing, as in
// Manku et al.'s permuted tables): two hashes within simBlocks-1 bits agree
// on at least one whole block, so only the hashes sharing a block with the
// query are compared. At 1,000,000 contents that is about 14,000
// comparisons instead of a million (1 ms per query), with the same result.
// Each block value's list holds the hashes themselves beside their
// positions: read through positions, the comparisons were random reads of
// an 8 MB array at 1,000,000 contents, a cache miss each (175 µs a query
// instead of a few tens), for 56 MB more.
type simTable struct {
	mu     sync.RWMutex
	hashes []uint64
	ids    []ContentID
	pos    map[ContentID]struct{}
	blocks [simBlocks][]simBucket // by block b's value
}

// simBucket lists the hashes with one value of a block, and their
// positions in simTable.hashes.
type simBucket struct {
	hashes []uint64
	pos    []int32
}

const (
	// simBlocks splits the 64 bits into blocks of 10, 9, 9, 9, 9, 9, 9
	// bits; it serves distances up to simBlocks-1 (CandidateHamming is 6 by
	// default).
	simBlocks = 7
	// simScanBelow is the table size under which a scan is as fast.
	simScanBelow = 1 << 14
)

// simBlockSize is how many values block b takes: block 0 is the low 10
// bits, block b > 0 the 9 bits above block b-1.
func simBlockSize(b int) int {
	if b == 0 {
		return 1 << 10
	}
	return 1 << 9
}

// simBlock returns block b of h.
func simBlock(h uint64, b int) int {
	if b == 0 {
		return int(h & (1<<10 - 1))
	}
	return int(h >> (10 + 9*(b-1)) & (1<<9 - 1))
}

func (t *simTable) add(id ContentID, h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pos == nil {
		t.pos = make(map[ContentID]struct{})
		for b := range t.blocks {
			t.blocks[b] = make([]simBucket, simBlockSize(b))
		}
	}
	if _, ok := t.pos[id]; ok {
		return
	}
	t.pos[id] = struct{}{}
	p := int32(len(t.hashes))
	t.hashes = append(t.hashes, h)
	t.ids = append(t.ids, id)
	for b := range t.blocks {
		k := &t.blocks[b][simBlock(h, b)]
		k.hashes = append(k.hashes, h)
		k.pos = append(k.pos, p)
	}
}

// near returns contents within maxDist bits of q, in the order they were
// added. Removed contents may be returned; loading their fingerprints
// finds nothing, so they drop out.
func (t *simTable) near(q uint64, maxDist int) []ContentID {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var idx []int32
	if maxDist >= simBlocks || len(t.hashes) < simScanBelow {
		idx = sketch.Near(t.hashes, q, maxDist, nil)
	} else {
		for b := range t.blocks {
			k := &t.blocks[b][simBlock(q, b)]
			for i, h := range k.hashes {
				if bits.OnesCount64(h^q) <= maxDist {
					idx = append(idx, k.pos[i])
				}
			}
		}
		slices.Sort(idx)
		idx = slices.Compact(idx)
	}
	out := make([]ContentID, len(idx))
	for i, j := range idx {
		out[i] = t.ids[j]
	}
	return out
}

func (t *simTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.hashes)
}
