// Package storetest is the conformance suite every index.Store
// implementation must pass, in the manner of restic's backend tests: the
// embedded SQLite store runs it today, a shared PostgreSQL store will too.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// Opener opens a fresh, empty store for one test. Reopen, when set, closes
// nothing and opens the same store again (to check persistence). Replica,
// when set, opens another store on the same data, as another replica of
// a fleet would (its own connections); the concurrency tests then race
// two stores, else two goroutines on one.
type Opener struct {
	Open    func(t *testing.T) index.Store
	Reopen  func(t *testing.T, s index.Store) index.Store
	Replica func(t *testing.T, s index.Store) index.Store
}

// Fingerprint makes a deterministic fingerprint for text whose chunks and
// bands are the given hashes.
func Fingerprint(text string, chunks []uint64, samples []uint32) *index.Fingerprint {
	fp := &index.Fingerprint{
		RawSHA256:  sha256.Sum256([]byte("raw:" + text)),
		RawSize:    int64(len(text)) + 4,
		TextSHA256: sha256.Sum256([]byte(text)),
		TextSize:   int64(len(text)),
		Samples:    samples,
		MinHash:    []uint32{1, 2, 3, 4},
		SimHash:    uint64(len(text)) * 0x9e3779b97f4a7c15,
	}
	for _, c := range chunks {
		fp.Chunks = append(fp.Chunks, index.Chunk{Hash: c, Len: 100})
	}
	return fp
}

func entry(key, version, text string, chunks, bands []uint64) index.Entry {
	return index.Entry{
		Doc:         index.Doc{Key: key, VersionID: version, Name: key, Source: "test", Path: []string{key}, Meta: map[string]string{"k": "v"}, ModTime: time.Unix(1700000000, 0).UTC()},
		Fingerprint: Fingerprint(text, chunks, []uint32{1, 5, 9}),
		Bands:       bands,
		Parent:      -1,
	}
}

// h spreads small numbers over the 64-bit space like real hashes.
func h(i uint64) uint64 { return (i + 1) * 0x9e3779b97f4a7c15 }

// Run runs the suite.
func Run(t *testing.T, o Opener) {
	ctx := context.Background()
	put := func(t *testing.T, s index.Store, es ...index.Entry) []index.Committed {
		t.Helper()
		c, err := s.Put(ctx, es)
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		return c
	}
	t.Run("PutGet", func(t *testing.T) {
		s := o.Open(t)
		c := put(t, s, entry("a", "v1", "alpha", []uint64{h(1)}, []uint64{h(10)}))
		r, err := s.Get(ctx, c[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Key != "a" || r.VersionID != "v1" || r.Meta["k"] != "v" || !slices.Equal(r.Path, []string{"a"}) || r.Content != c[0].Content || r.TextSize != 5 {
			t.Fatalf("record %+v", r)
		}
		if !r.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Fatalf("mod time %v", r.ModTime)
		}
		if _, err := s.Get(ctx, 999999); !errors.Is(err, index.ErrNotFound) {
			t.Fatalf("Get missing: %v", err)
		}
		if _, err := s.Lookup(ctx, "missing"); !errors.Is(err, index.ErrNotFound) {
			t.Fatalf("Lookup missing: %v", err)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		s := o.Open(t)
		c1 := put(t, s, entry("a", "v1", "alpha", nil, nil))
		c2 := put(t, s, entry("a", "v1", "alpha", nil, nil))
		if !c2[0].Duplicate || c2[0].ID != c1[0].ID {
			t.Fatalf("second put %+v, first %+v", c2[0], c1[0])
		}
		e := entry("a", "v1", "alpha", nil, nil)
		if seen, err := s.Seen(ctx, e.Doc.IdempotencyKey()); err != nil || !seen {
			t.Fatalf("Seen: %v %v", seen, err)
		}
		if seen, err := s.Seen(ctx, "other"); err != nil || seen {
			t.Fatalf("Seen(other): %v %v", seen, err)
		}
		// The pipeline looks a document up by its idempotency key, which
		// joins its parts with NUL (and may carry any bytes).
		if rs, err := s.Lookup(ctx, e.Doc.IdempotencyKey()); err != nil || len(rs) != 1 || rs[0].ID != c1[0].ID {
			t.Fatalf("Lookup by idempotency key: %v, %v", rs, err)
		}
		if _, err := s.Lookup(ctx, "a\x00\xff other"); !errors.Is(err, index.ErrNotFound) {
			t.Fatalf("Lookup of an absent key with NUL and invalid UTF-8: %v", err)
		}
		st, _ := s.Stats(ctx)
		if st.Documents != 1 {
			t.Fatalf("documents = %d", st.Documents)
		}
	})
	t.Run("ReplaceAndKeepVersions", func(t *testing.T) {
		s := o.Open(t)
		c1 := put(t, s, entry("a", "v1", "alpha", []uint64{h(1)}, nil))
		c2 := put(t, s, entry("a", "v2", "alpha two", []uint64{h(2)}, nil))
		if !slices.Equal(c2[0].Replaced, []index.DocID{c1[0].ID}) {
			t.Fatalf("replaced %v", c2[0].Replaced)
		}
		if _, err := s.Get(ctx, c1[0].ID); !errors.Is(err, index.ErrNotFound) {
			t.Fatalf("old version still there: %v", err)
		}
		e := entry("b", "v1", "beta", nil, nil)
		e.Doc.KeepVersions = true
		put(t, s, e)
		e = entry("b", "v2", "beta two", nil, nil)
		e.Doc.KeepVersions = true
		put(t, s, e)
		rs, err := s.Lookup(ctx, "b")
		if err != nil || len(rs) != 2 || rs[0].VersionID != "v2" {
			t.Fatalf("Lookup b: %v %v", rs, err)
		}
		if _, err := s.Remove(ctx, "b", "v1"); err != nil {
			t.Fatal(err)
		}
		if rs, _ := s.Lookup(ctx, "b"); len(rs) != 1 || rs[0].VersionID != "v2" {
			t.Fatalf("after removing v1: %v", rs)
		}
	})
	t.Run("ContentsAreShared", func(t *testing.T) {
		s := o.Open(t)
		c := put(t, s, entry("a", "", "same", []uint64{h(1)}, []uint64{h(2)}), entry("b", "", "same", []uint64{h(1)}, []uint64{h(2)}))
		if c[0].Content != c[1].Content {
			t.Fatalf("contents %d and %d", c[0].Content, c[1].Content)
		}
		rs, err := s.ByContent(ctx, c[0].Content)
		if err != nil || len(rs) != 2 {
			t.Fatalf("ByContent: %v %v", rs, err)
		}
		// Several contents at once, by document id; unknown ones add nothing.
		other := put(t, s, entry("c", "", "other", []uint64{h(3)}, nil), entry("d", "", "same", []uint64{h(1)}, []uint64{h(2)}))
		rs, err = s.ByContent(ctx, other[0].Content, 1<<40, c[0].Content)
		var ids []index.DocID
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		if want := []index.DocID{c[0].ID, c[1].ID, other[0].ID, other[1].ID}; err != nil || !slices.Equal(ids, want) {
			t.Fatalf("ByContent of two contents: %v %v, want %v", ids, err, want)
		}
		if rs, err := s.ByContent(ctx); err != nil || len(rs) != 0 {
			t.Fatalf("ByContent of none: %v %v", rs, err)
		}
		for _, key := range []string{"c", "d"} {
			if _, err := s.Remove(ctx, key, ""); err != nil {
				t.Fatal(err)
			}
		}
		var all []index.DocID
		if err := s.Documents(ctx, func(r *index.Record) error { all = append(all, r.ID); return nil }); err != nil || !slices.Equal(all, []index.DocID{c[0].ID, c[1].ID}) {
			t.Fatalf("Documents: %v %v", all, err)
		}
		if _, err := s.Remove(ctx, "a", ""); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Candidates(ctx, index.CandidateQuery{Chunks: []uint64{h(1)}, MaxChunkDocs: 10})
		if !slices.Equal(got, []index.ContentID{c[0].Content}) {
			t.Fatalf("content dropped while still referenced: %v", got)
		}
		if _, err := s.Remove(ctx, "b", ""); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Candidates(ctx, index.CandidateQuery{Bands: []uint64{h(2)}, Chunks: []uint64{h(1)}, MaxChunkDocs: 10})
		if len(got) != 0 {
			t.Fatalf("postings left after last reference: %v", got)
		}
		st, _ := s.Stats(ctx)
		if st.Contents != 0 || st.Documents != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("ChildrenAndAtomicity", func(t *testing.T) {
		s := o.Open(t)
		parent := entry("box.zip", "", "", nil, nil)
		parent.Fingerprint = nil
		parent.Doc.MediaType = "application/zip"
		child := entry("box.zip!/a.txt", "", "alpha", []uint64{h(1)}, nil)
		child.Parent = 0
		grandchild := entry("box.zip!/a.txt!/x", "", "x", nil, nil)
		grandchild.Parent = 1
		c := put(t, s, parent, child, grandchild)
		r, _ := s.Get(ctx, c[2].ID)
		if r.Parent != c[1].ID {
			t.Fatalf("grandchild parent %d, want %d", r.Parent, c[1].ID)
		}
		// A batch that cannot be committed leaves nothing behind.
		bad := entry("bad", "", "bad", nil, nil)
		bad.Parent = 5
		if _, err := s.Put(ctx, []index.Entry{entry("good", "", "good", nil, nil), bad}); err == nil {
			t.Fatal("Put with a forward parent reference succeeded")
		}
		if _, err := s.Lookup(ctx, "good"); !errors.Is(err, index.ErrNotFound) {
			t.Fatalf("half-written batch: %v", err)
		}
		removed, err := s.Remove(ctx, "box.zip", "")
		if err != nil || len(removed) != 3 {
			t.Fatalf("Remove family: %v %v", removed, err)
		}
	})
	t.Run("FindAndChildren", func(t *testing.T) {
		s := o.Open(t)
		parent := entry("s3:bucket/Mail/Box.zip", "", "box", nil, nil)
		child := entry("s3:bucket/Mail/Box.zip!/contract 100%_final.txt", "", "contract", []uint64{h(1)}, nil)
		child.Parent = 0
		other := entry("s3:bucket/other.txt", "", "other", nil, nil)
		c := put(t, s, parent, child, other)
		kids, err := s.Children(ctx, c[0].ID)
		if err != nil || len(kids) != 1 || kids[0].ID != c[1].ID {
			t.Fatalf("Children: %v %v", kids, err)
		}
		if kids, err := s.Children(ctx, c[2].ID); err != nil || len(kids) != 0 {
			t.Fatalf("Children of a leaf: %v %v", kids, err)
		}
		ids := func(rs []*index.Record) []index.DocID {
			var out []index.DocID
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for _, tc := range []struct {
			q    string
			want []index.DocID
		}{
			{"box.ZIP", []index.DocID{c[1].ID, c[0].ID}}, // case ignored, newest first
			{"100%_", []index.DocID{c[1].ID}},            // wildcards are literal
			{"10%", nil},
			{"_", []index.DocID{c[1].ID}},
			{"", nil},
			{"zzz", nil},
		} {
			rs, err := s.Find(ctx, tc.q, 10)
			if err != nil || !slices.Equal(ids(rs), tc.want) {
				t.Errorf("Find(%q) = %v, %v; want %v", tc.q, ids(rs), err, tc.want)
			}
		}
		rs, err := s.Find(ctx, fmt.Sprint(c[2].ID), 10)
		if err != nil || len(rs) == 0 || rs[0].ID != c[2].ID {
			t.Fatalf("Find by id: %v %v", ids(rs), err)
		}
		if rs, _ := s.Find(ctx, "bucket", 2); len(rs) != 2 {
			t.Fatalf("Find limit 2 returned %d", len(rs))
		}
	})
	t.Run("Text", func(t *testing.T) {
		s := o.Open(t)
		with := entry("a", "", "alpha text", []uint64{h(1)}, nil)
		with.Text = []byte("Alpha  TEXT\n")
		without := entry("b", "", "beta text", []uint64{h(2)}, nil)
		c := put(t, s, with, without)
		got, err := s.Text(ctx, c[0].Content)
		if err != nil || string(got) != "Alpha  TEXT\n" {
			t.Fatalf("Text = %q, %v", got, err)
		}
		if _, err := s.Text(ctx, c[1].Content); !errors.Is(err, index.ErrNoText) {
			t.Fatalf("Text of a content stored without: %v", err)
		}
		// Removing the last document of a content drops its text.
		if _, err := s.Remove(ctx, "a", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Text(ctx, c[0].Content); !errors.Is(err, index.ErrNoText) {
			t.Fatalf("Text after remove: %v", err)
		}
		// A later document of a content stored without its text brings
		// it (a hold's seed file, whose text is kept where no other is).
		seed := entry("seed", "", "beta text", []uint64{h(2)}, nil)
		seed.Text = []byte("Beta text")
		sc := put(t, s, seed)
		if sc[0].Content != c[1].Content {
			t.Fatalf("the seed's content %d, want the stored %d", sc[0].Content, c[1].Content)
		}
		if got, err := s.Text(ctx, c[1].Content); err != nil || string(got) != "Beta text" {
			t.Fatalf("Text brought by a later document = %q, %v", got, err)
		}
	})
	t.Run("ErrorDocuments", func(t *testing.T) {
		s := o.Open(t)
		e := entry("enc.pdf", "", "", nil, nil)
		e.Fingerprint = nil
		e.Doc.Error = "encrypted"
		c := put(t, s, e)
		r, err := s.Get(ctx, c[0].ID)
		if err != nil || r.Error != "encrypted" || r.Content != 0 {
			t.Fatalf("%+v %v", r, err)
		}
		st, _ := s.Stats(ctx)
		if st.Failed != 1 {
			t.Fatalf("failed = %d", st.Failed)
		}
	})
	t.Run("CandidatesAndGroups", func(t *testing.T) {
		s := o.Open(t)
		c := put(t, s,
			entry("a", "", "a", []uint64{h(1), h(2)}, []uint64{h(100)}),
			entry("b", "", "b", []uint64{h(2), h(3)}, []uint64{h(101)}),
			entry("c", "", "c", []uint64{h(4)}, []uint64{h(100)}),
			entry("d", "", "d", []uint64{h(5)}, []uint64{h(102)}))
		got, err := s.Candidates(ctx, index.CandidateQuery{Bands: []uint64{h(100)}, Chunks: []uint64{h(3)}, MaxChunkDocs: 10})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want := []index.ContentID{c[0].Content, c[1].Content, c[2].Content}
		if !slices.Equal(got, want) {
			t.Fatalf("candidates %v, want %v", got, want)
		}
		// A chunk held by more contents than allowed adds none.
		got, _ = s.Candidates(ctx, index.CandidateQuery{Chunks: []uint64{h(2)}, MaxChunkDocs: 1})
		if len(got) != 0 {
			t.Fatalf("boilerplate chunk gave candidates %v", got)
		}
		n, err := s.ChunkContents(ctx, []uint64{h(2), h(5), h(99)})
		if err != nil || n[h(2)] != 2 || n[h(5)] != 1 || n[h(99)] != 0 {
			t.Fatalf("ChunkContents %v %v", n, err)
		}
		var groups [][]index.ContentID
		err = s.Groups(ctx, 10, nil, func(ids []index.ContentID) error {
			g := slices.Clone(ids)
			slices.Sort(g)
			groups = append(groups, g)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) != 2 {
			t.Fatalf("groups %v", groups)
		}
		// Restricted to contents, the groups holding one of them, whole.
		for _, of := range [][]index.ContentID{{c[0].Content}, {c[3].Content}, {c[1].Content, c[2].Content}, {}} {
			var got [][]index.ContentID
			err := s.Groups(ctx, 10, of, func(ids []index.ContentID) error {
				g := slices.Clone(ids)
				slices.Sort(g)
				got = append(got, g)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := holding(groups, of); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("groups of %v: %v, want %v", of, got, want)
			}
		}
		loaded := map[index.ContentID]*index.Fingerprint{}
		err = s.Fingerprints(ctx, []index.ContentID{c[0].Content, c[3].Content, 12345}, func(id index.ContentID, fp *index.Fingerprint) error {
			loaded[id] = fp
			return nil
		})
		if err != nil || len(loaded) != 2 || len(loaded[c[0].Content].Chunks) != 2 || loaded[c[0].Content].SimHash == 0 {
			t.Fatalf("Fingerprints %v %v", loaded, err)
		}
		var sims int
		if err := s.SimHashes(ctx, func(index.ContentID, uint64) error { sims++; return nil }); err != nil || sims != 4 {
			t.Fatalf("SimHashes %d %v", sims, err)
		}
	})
	t.Run("CandidatesOfStoredText", func(t *testing.T) {
		candidatesOfStoredText(t, o.Open(t))
	})
	t.Run("Anchors", func(t *testing.T) {
		s := o.Open(t)
		// Anchors are the samples divisible by index.AnchorEvery.
		anch := func(vs ...uint32) []uint32 {
			out := make([]uint32, len(vs))
			for i, v := range vs {
				out[i] = v * index.AnchorEvery
			}
			return out
		}
		mk := func(key, text string, samples []uint32) index.Entry {
			e := entry(key, "", text, nil, nil)
			slices.Sort(samples)
			e.Fingerprint = Fingerprint(text, nil, samples)
			return e
		}
		short := mk("short", "short text", anch(1, 2, 3, 4))
		long := mk("long", "long text", append(anch(1, 2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17), 3)) // 3 is not an anchor
		other := mk("other", "other text", anch(1, 20, 21, 22))
		c, err := s.Put(ctx, []index.Entry{short, long, other})
		if err != nil {
			t.Fatal(err)
		}
		keys := short.Fingerprint.Anchors()
		got, err := s.AnchorCandidates(ctx, keys, 10, 0.5, 10)
		if err != nil {
			t.Fatal(err)
		}
		// long holds all four of short's anchors; other only one.
		if !slices.Contains(got, c[1].Content) || slices.Contains(got, c[2].Content) {
			t.Fatalf("AnchorCandidates from short = %v, want long (%d) and not other (%d)", got, c[1].Content, c[2].Content)
		}
		got, _ = s.AnchorCandidates(ctx, long.Fingerprint.Anchors(), 10, 0.5, 10)
		if !slices.Contains(got, c[0].Content) {
			t.Fatalf("AnchorCandidates from long = %v, want short (%d)", got, c[0].Content)
		}
		if got, _ := s.AnchorCandidates(ctx, keys, 1, 0.5, 10); len(got) != 0 {
			t.Fatalf("anchors over the document-frequency cap gave %v", got)
		}
		groups := 0
		var all [][]index.ContentID
		err = s.AnchorGroups(ctx, 10, nil, func(ids []index.ContentID, counts []int) error {
			all = append(all, slices.Sorted(slices.Values(ids)))
			groups++
			if len(ids) != len(counts) {
				t.Errorf("AnchorGroups: %d ids, %d counts", len(ids), len(counts))
			}
			for i, id := range ids {
				want := map[index.ContentID]int{c[0].Content: 4, c[1].Content: 12, c[2].Content: 4}[id]
				if counts[i] != want {
					t.Errorf("AnchorGroups: content %d has %d anchors, want %d", id, counts[i], want)
				}
			}
			return nil
		})
		if err != nil || groups != 4 { // anchors 1 (three contents), 2, 3, 4
			t.Fatalf("AnchorGroups: %d groups, %v", groups, err)
		}
		// Restricted to contents, the groups holding one of them, whole.
		for _, of := range [][]index.ContentID{{c[0].Content}, {c[2].Content}, {c[1].Content, c[2].Content}, {}} {
			var got [][]index.ContentID
			err := s.AnchorGroups(ctx, 10, of, func(ids []index.ContentID, counts []int) error {
				got = append(got, slices.Sorted(slices.Values(ids)))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := holding(all, of); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("anchor groups of %v: %v, want %v", of, got, want)
			}
		}
		// Removing a content removes its postings.
		if _, err := s.Remove(ctx, "long", ""); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.AnchorCandidates(ctx, keys, 10, 0.5, 10); slices.Contains(got, c[1].Content) {
			t.Fatalf("removed content still a candidate: %v", got)
		}
	})
	t.Run("Templates", func(t *testing.T) {
		s := o.Open(t)
		id, err := s.AddTemplate(ctx, index.Template{Name: "licence header", Reason: "boilerplate", Actor: "alice", Chunks: []uint64{h(1)}, Samples: []uint32{7}})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := s.Templates(ctx)
		if err != nil || len(ts) != 1 || ts[0].ID != id || ts[0].Actor != "alice" || !slices.Equal(ts[0].Chunks, []uint64{h(1)}) || !slices.Equal(ts[0].Samples, []uint32{7}) {
			t.Fatalf("Templates %+v %v", ts, err)
		}
	})
	if o.Reopen != nil {
		t.Run("Persistence", func(t *testing.T) {
			s := o.Open(t)
			c := put(t, s, entry("a", "v1", "alpha", []uint64{h(1)}, []uint64{h(2)}))
			s = o.Reopen(t, s)
			r, err := s.Get(ctx, c[0].ID)
			if err != nil || r.Key != "a" {
				t.Fatalf("after reopen: %+v %v", r, err)
			}
			got, _ := s.Candidates(ctx, index.CandidateQuery{Bands: []uint64{h(2)}, MaxChunkDocs: 10})
			if len(got) != 1 {
				t.Fatalf("candidates after reopen: %v", got)
			}
		})
	}
	t.Run("OriginApart", func(t *testing.T) { originApart(t, o) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, o) })
	t.Run("Closed", func(t *testing.T) {
		s := o.Open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx, []index.Entry{entry("a", "", "a", nil, nil)}); !errors.Is(err, index.ErrClosed) {
			t.Fatalf("Put after Close: %v", err)
		}
		if _, err := s.Get(ctx, 1); !errors.Is(err, index.ErrClosed) {
			t.Fatalf("Get after Close: %v", err)
		}
	})
}

// candidatesOfStoredText checks that a query naming its stored text (and
// its content, or a wrong one) finds what the same query without it finds
// (and, at most, contents no longer stored): a store may skip band keys it
// knows only that content holds, never one another content holds. Random batches of puts, replacements and removals over a
// small set of band keys make keys shared at different band positions,
// within one transaction and across several, and shared no longer.
func candidatesOfStoredText(t *testing.T, s index.Store) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 11))
	type stored struct {
		fp      *index.Fingerprint
		bands   []uint64
		content index.ContentID
	}
	live := map[string]stored{} // text -> what it was stored with
	keyText := map[string]string{}
	next := 0
	for round := range 40 {
		batch := make([]index.Entry, 1+r.IntN(6))
		texts := make([]string, len(batch))
		for i := range batch {
			key := fmt.Sprintf("k%d", r.IntN(30))
			text := fmt.Sprintf("text %d", next)
			next++
			bands := make([]uint64, 6)
			for j := range bands {
				bands[j] = h(uint64(1000 + r.IntN(60)))
			}
			batch[i] = entry(key, fmt.Sprintf("v%d", next), text, []uint64{h(uint64(next))}, bands)
			texts[i] = text
		}
		put, err := s.Put(ctx, batch)
		if err != nil {
			t.Fatalf("round %d: Put: %v", round, err)
		}
		for i, e := range batch { // a later version of a key replaces the earlier
			if old, ok := keyText[e.Doc.Key]; ok {
				delete(live, old)
			}
			keyText[e.Doc.Key] = texts[i]
			live[texts[i]] = stored{e.Fingerprint, e.Bands, put[i].Content}
		}
		if r.IntN(4) == 0 {
			key := fmt.Sprintf("k%d", r.IntN(30))
			if _, err := s.Remove(ctx, key, ""); err != nil {
				t.Fatal(err)
			}
			if old, ok := keyText[key]; ok {
				delete(live, old)
				delete(keyText, key)
			}
		}
		for text, st := range live {
			q := index.CandidateQuery{Bands: st.bands, MaxChunkDocs: 100}
			all, err := s.Candidates(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.TextSHA256 = st.fp.TextSHA256
			// Naming the text, then its content too, then a content that
			// is not the text's (which must not mislead the store).
			for _, content := range []index.ContentID{0, st.content, st.content + 1} {
				q.Content = content
				got, err := s.Candidates(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				// More is allowed only of contents no longer stored.
				var extra []index.ContentID
				for _, c := range got {
					if !slices.Contains(all, c) {
						extra = append(extra, c)
					}
				}
				var found []index.ContentID
				if err := s.Fingerprints(ctx, extra, func(c index.ContentID, _ *index.Fingerprint) error {
					found = append(found, c)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				missing := slices.DeleteFunc(slices.Clone(all), func(c index.ContentID) bool { return slices.Contains(got, c) })
				if len(missing) > 0 || len(found) > 0 {
					t.Fatalf("round %d, %s, content %d: candidates %v, without naming its text %v: %v missing, %v stored added", round, text, content, got, all, missing, found)
				}
			}
		}
	}
}

// holding returns the groups holding one of of, in order.
func holding(groups [][]index.ContentID, of []index.ContentID) [][]index.ContentID {
	var out [][]index.ContentID
	for _, g := range groups {
		if slices.ContainsFunc(g, func(c index.ContentID) bool { return slices.Contains(of, c) }) {
			out = append(out, g)
		}
	}
	return out
}

// concurrent races two writers (two replicas when o.Replica is set) on one
// idempotency key, on one key's Remove and Put, and on one content put
// under two keys.
func concurrent(t *testing.T, o Opener) {
	ctx := context.Background()
	pair := func(t *testing.T) [2]index.Store {
		s := o.Open(t)
		if o.Replica == nil {
			return [2]index.Store{s, s}
		}
		return [2]index.Store{s, o.Replica(t, s)}
	}
	// race runs fn(0) and fn(1) at once and returns their errors.
	race := func(fn func(i int) error) [2]error {
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = fn(i)
			}()
		}
		close(start)
		wg.Wait()
		return errs
	}
	t.Run("OneIdempotencyKey", func(t *testing.T) {
		s := pair(t)
		for round := range 10 {
			key := fmt.Sprintf("k%d", round)
			var got [2][]index.Committed
			errs := race(func(i int) (err error) {
				got[i], err = s[i].Put(ctx, []index.Entry{entry(key, "v1", "text "+key, []uint64{h(uint64(round))}, []uint64{h(uint64(100 + round))})})
				return err
			})
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v", round, errs)
			}
			if got[0][0].Duplicate == got[1][0].Duplicate || got[0][0].ID != got[1][0].ID || got[0][0].Content != got[1][0].Content {
				t.Fatalf("round %d: racing puts returned %+v and %+v, want one commit and one duplicate of it", round, got[0][0], got[1][0])
			}
		}
		if st, err := s[0].Stats(ctx); err != nil || st.Documents != 10 || st.Contents != 10 {
			t.Fatalf("stats %+v %v, want 10 documents and contents", st, err)
		}
	})
	t.Run("RemoveAndPut", func(t *testing.T) {
		s := pair(t)
		for round := range 10 {
			old := entry("a", fmt.Sprint("v", round), fmt.Sprint("old ", round), []uint64{h(uint64(round))}, nil)
			if _, err := s[0].Put(ctx, []index.Entry{old}); err != nil {
				t.Fatal(err)
			}
			next := entry("a", fmt.Sprint("w", round), fmt.Sprint("new ", round), []uint64{h(uint64(1000 + round))}, nil)
			errs := race(func(i int) error {
				if i == 0 {
					_, err := s[0].Remove(ctx, "a", "")
					return err
				}
				_, err := s[1].Put(ctx, []index.Entry{next})
				return err
			})
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v", round, errs)
			}
			// Either order leaves no old version, and at most the new one.
			rs, err := s[0].Lookup(ctx, "a")
			if err != nil && !errors.Is(err, index.ErrNotFound) {
				t.Fatal(err)
			}
			if len(rs) > 1 || (len(rs) == 1 && rs[0].VersionID != next.Doc.VersionID) {
				t.Fatalf("round %d: versions left %+v", round, rs)
			}
			st, _ := s[0].Stats(ctx)
			if st.Documents != int64(len(rs)) || st.Contents != int64(len(rs)) {
				t.Fatalf("round %d: stats %+v with %d versions", round, st, len(rs))
			}
			got, _ := s[0].Candidates(ctx, index.CandidateQuery{Chunks: []uint64{h(uint64(round))}, MaxChunkDocs: 10})
			if len(got) != 0 {
				t.Fatalf("round %d: the old version's postings are left: %v", round, got)
			}
			if _, err := s[0].Remove(ctx, "a", ""); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("OneContentTwoKeys", func(t *testing.T) {
		s := pair(t)
		for round := range 10 {
			text := fmt.Sprint("shared ", round)
			var got [2][]index.Committed
			errs := race(func(i int) (err error) {
				e := entry(fmt.Sprintf("%d-%d", round, i), "", text, []uint64{h(uint64(round))}, []uint64{h(uint64(50 + round))})
				got[i], err = s[i].Put(ctx, []index.Entry{e})
				return err
			})
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v", round, errs)
			}
			if got[0][0].Duplicate || got[1][0].Duplicate || got[0][0].Content != got[1][0].Content || got[0][0].ID == got[1][0].ID {
				t.Fatalf("round %d: %+v and %+v, want two documents of one content", round, got[0][0], got[1][0])
			}
			// The content counts both: it goes with the second removal only.
			if _, err := s[0].Remove(ctx, fmt.Sprintf("%d-0", round), ""); err != nil {
				t.Fatal(err)
			}
			if cs, _ := s[1].Candidates(ctx, index.CandidateQuery{Chunks: []uint64{h(uint64(round))}, MaxChunkDocs: 10}); len(cs) != 1 {
				t.Fatalf("round %d: candidates after removing one of two: %v", round, cs)
			}
			if _, err := s[1].Remove(ctx, fmt.Sprintf("%d-1", round), ""); err != nil {
				t.Fatal(err)
			}
		}
		if st, err := s[0].Stats(ctx); err != nil || st.Contents != 0 || st.Documents != 0 {
			t.Fatalf("stats %+v %v, want none", st, err)
		}
	})
}
