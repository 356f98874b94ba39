package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

func openMem(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Scheme: 1, AnchorsInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitAnchors waits until the lists in memory have loaded, and reports
// their state and generation.
func waitAnchors(t *testing.T, s *Store) (memState, int64) {
	t.Helper()
	s.mu.Lock()
	done := s.memDone
	s.mu.Unlock()
	<-done
	s.mem.mu.RLock()
	defer s.mem.mu.RUnlock()
	return s.mem.state, s.mem.gen
}

func TestConformanceAnchorsInMemory(t *testing.T) {
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) index.Store { return openMem(t, filepath.Join(t.TempDir(), "index.db")) },
		Reopen: func(t *testing.T, s index.Store) index.Store {
			path := s.(*Store).Path()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return openMem(t, path)
		},
	})
}

// anchorDoc is a document whose anchors are the given samples (multiples
// of index.AnchorEvery).
func anchorDoc(key, text string, anchors ...uint32) index.Entry {
	samples := slices.Clone(anchors)
	slices.Sort(samples)
	samples = slices.Compact(samples)
	return index.Entry{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(text, nil, samples), Parent: -1}
}

// memLists returns the in-memory lists of keys, whole.
func memLists(t *testing.T, s *Store, keys []int64) map[int64][]anchorPosting {
	t.Helper()
	waitAnchors(t, s)
	got, ok := s.mem.read(keys, 1<<30, 0)
	if !ok {
		t.Fatal("in-memory anchor lists are not valid")
	}
	return got
}

// diskLists returns the stored lists of keys, whole, read by a store
// without lists in memory.
func diskLists(t *testing.T, s *Store, keys []int64) map[int64][]anchorPosting {
	t.Helper()
	ctx := context.Background()
	tx := readTx(t, s)
	defer tx.Rollback()
	out := make(map[int64][]anchorPosting)
	for _, k := range keys {
		ps, err := s.anchorList(ctx, tx, k, 1<<30, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) > 0 {
			out[k] = ps
		}
	}
	return out
}

// TestAnchorsInMemoryFollowCommits puts, replaces and removes documents at
// random, in batches, and checks after each commit that the lists in memory
// are the stored ones, and are again after a reopen.
func TestAnchorsInMemoryFollowCommits(t *testing.T) {
	for _, merge := range []bool{false, true} {
		t.Run(fmt.Sprintf("merge=%v", merge), func(t *testing.T) {
			if merge { // the changed lists fold into the base at every commit
				defer func(v int) { mergeChangedMin = v }(mergeChangedMin)
				mergeChangedMin = 0
			}
			followCommits(t)
		})
	}
}

func followCommits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := openMem(t, path)
	rng := rand.New(rand.NewPCG(1, 2))
	const pool = 12 // anchors shared between documents
	var keys []int64
	for a := range pool + 400 {
		keys = append(keys, postingKey(uint64(uint32(a+1)*index.AnchorEvery)<<32))
	}
	anchor := func(a int) uint32 { return uint32(a+1) * index.AnchorEvery }
	check := func(step string) {
		t.Helper()
		mem, disk := memLists(t, s, keys), diskLists(t, s, keys)
		if len(mem) != len(disk) {
			t.Fatalf("%s: %d keys in memory, %d stored", step, len(mem), len(disk))
		}
		for k, want := range disk {
			if got := mem[k]; !slices.Equal(got, want) {
				t.Fatalf("%s: key %d: in memory %v, stored %v", step, k, got, want)
			}
		}
		// Shares counted where the lists are match those of the lists.
		for _, maxDocs := range []int{2, 5, 1 << 30} {
			got, ok := s.mem.shares(keys, maxDocs, 0)
			if want := sharesOfSorted(sharedAnchors(disk, maxDocs)); !ok || !slices.Equal(got, want) {
				t.Fatalf("%s: shares of lists up to %d long: in memory %v (%v), stored %v", step, maxDocs, got, ok, want)
			}
		}
	}
	for step := range 60 {
		switch op := rng.IntN(4); op {
		case 0, 1: // a batch of new documents or new versions of old keys
			var entries []index.Entry
			for range 1 + rng.IntN(20) {
				key := fmt.Sprintf("doc-%d", rng.IntN(200))
				entries = append(entries, anchorDoc(key, fmt.Sprintf("text %d %d", step, len(entries)),
					anchor(rng.IntN(pool)), anchor(rng.IntN(pool)), anchor(pool+rng.IntN(400))))
			}
			if _, err := s.Put(ctx, entries); err != nil {
				t.Fatal(err)
			}
		case 2: // an exact copy under another key: one content, two references
			e := anchorDoc(fmt.Sprintf("copy-%d", step), "text 0 0", anchor(0), anchor(1))
			if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
				t.Fatal(err)
			}
		case 3:
			for range 1 + rng.IntN(5) {
				if _, err := s.Remove(ctx, fmt.Sprintf("doc-%d", rng.IntN(200)), ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		check(fmt.Sprintf("step %d", step))
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openMem(t, path)
	check("reopened")
}

// TestAnchorsInMemorySeeOtherWriters writes into a store from a second
// store on the same file, as another process would: the first one's
// queries find what the second wrote at once, from the blocks, and its
// next commit reloads the lists.
func TestAnchorsInMemorySeeOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := openMem(t, path)
	a1, a2, a3 := uint32(1*index.AnchorEvery), uint32(2*index.AnchorEvery), uint32(3*index.AnchorEvery)
	mine, err := s.Put(ctx, []index.Entry{anchorDoc("mine", "mine", a1, a2)})
	if err != nil {
		t.Fatal(err)
	}
	// The lists must be loaded before the other store writes: a load that
	// reads after its commit holds it already and has nothing to reload.
	if state, gen := waitAnchors(t, s); state != memReady || gen != 1 {
		t.Fatalf("after this store's commit: state %v at generation %d, want ready at 1", state, gen)
	}
	other := open(t, path, 1) // no lists in memory, like the scan command
	theirs, err := other.Put(ctx, []index.Entry{anchorDoc("theirs", "theirs", a1, a2, a3)})
	if err != nil {
		t.Fatal(err)
	}
	query := []uint64{uint64(a1) << 32, uint64(a2) << 32}
	found := func(when string, want ...index.ContentID) {
		t.Helper()
		got, err := s.AnchorCandidates(ctx, query, 100, 0.5, 100)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: candidates %v, want %v", when, got, want)
		}
	}
	found("after the other store's commit", mine[0].Content, theirs[0].Content)
	if state, gen := waitAnchors(t, s); state != memReady || gen != 1 {
		t.Fatalf("before the reload: state %v at generation %d, want ready at 1", state, gen)
	}
	// The next commit of this store sees the other's and reloads.
	third, err := s.Put(ctx, []index.Entry{anchorDoc("third", "third", a1, a2)})
	if err != nil {
		t.Fatal(err)
	}
	if state, gen := waitAnchors(t, s); state != memReady || gen != 3 {
		t.Fatalf("after the reload: state %v at generation %d, want ready at 3", state, gen)
	}
	found("after the reload", mine[0].Content, theirs[0].Content, third[0].Content)
	// And a removal by the other store is seen as well.
	if _, err := other.Remove(ctx, "theirs", ""); err != nil {
		t.Fatal(err)
	}
	found("after the other store's removal", mine[0].Content, third[0].Content)
}

// TestAnchorsInMemoryAfterFailedCommit makes a commit fail (its context is
// cancelled) and checks that the lists still match the store.
func TestAnchorsInMemoryAfterFailedPut(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, filepath.Join(t.TempDir(), "index.db"))
	a1, a2 := uint32(1*index.AnchorEvery), uint32(2*index.AnchorEvery)
	if _, err := s.Put(ctx, []index.Entry{anchorDoc("a", "a", a1, a2)}); err != nil {
		t.Fatal(err)
	}
	// A child whose parent comes after it: the put fails and rolls back.
	bad := anchorDoc("b", "b", a1, a2)
	bad.Parent = 1
	if _, err := s.Put(ctx, []index.Entry{bad, anchorDoc("c", "c", a1)}); err == nil {
		t.Fatal("bad parent: no error")
	}
	keys := []int64{postingKey(uint64(a1) << 32), postingKey(uint64(a2) << 32)}
	mem, disk := memLists(t, s, keys), diskLists(t, s, keys)
	for _, k := range keys {
		if !slices.Equal(mem[k], disk[k]) {
			t.Errorf("key %d: in memory %v, stored %v", k, mem[k], disk[k])
		}
	}
}

// TestAnchorsInMemoryCommitsDuringLoad commits while the lists load: after
// the load has read them and before it installs them, once from this
// store (the commit is queued and applied) and once from another store
// first (the queue then skips a generation and the load starts over).
func TestAnchorsInMemoryCommitsDuringLoad(t *testing.T) {
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("other=%v", other), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "index.db")
			a1, a2 := uint32(1*index.AnchorEvery), uint32(2*index.AnchorEvery)
			setup := open(t, path, 1)
			if _, err := setup.Put(ctx, []index.Entry{anchorDoc("first", "first", a1, a2)}); err != nil {
				t.Fatal(err)
			}
			read, resume := make(chan struct{}), make(chan struct{})
			var loads int
			defer func(f func()) { anchorsRead = f }(anchorsRead)
			anchorsRead = func() {
				loads++
				if loads == 1 {
					close(read)
					<-resume
				}
			}
			s := openMem(t, path)
			<-read
			if other {
				if _, err := setup.Put(ctx, []index.Entry{anchorDoc("theirs", "theirs", a1, a2)}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Put(ctx, []index.Entry{anchorDoc("mine", "mine", a1, a2)}); err != nil {
				t.Fatal(err)
			}
			close(resume)
			state, gen := waitAnchors(t, s)
			wantGen, wantLoads := int64(2), 1
			if other {
				wantGen, wantLoads = 3, 2
			}
			if state != memReady || gen != wantGen || loads != wantLoads {
				t.Fatalf("state %v at generation %d after %d loads, want ready at %d after %d", state, gen, loads, wantGen, wantLoads)
			}
			keys := []int64{postingKey(uint64(a1) << 32), postingKey(uint64(a2) << 32)}
			mem, disk := memLists(t, s, keys), diskLists(t, s, keys)
			for _, k := range keys {
				if !slices.Equal(mem[k], disk[k]) {
					t.Errorf("key %d: in memory %v, stored %v", k, mem[k], disk[k])
				}
			}
		})
	}
}

// read returns the lists of keys as anchorLists reads them from the
// blocks, at least limit+1 postings of a longer list, if the lists are at
// least generation gen.
func (m *memAnchors) read(keys []int64, limit int, gen int64) (map[int64][]anchorPosting, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.state != memReady || m.gen < gen {
		return nil, false
	}
	out := make(map[int64][]anchorPosting, len(keys))
	lists := make([][]uint32, len(keys))
	total := 0
	for i, k := range keys {
		l := m.list(uint32(k))
		lists[i] = l[:min(len(l), limit+1)]
		total += len(lists[i])
	}
	all := make([]anchorPosting, total) // one allocation for every list
	for i, k := range keys {
		l := lists[i]
		if len(l) == 0 {
			continue
		}
		ps := all[:len(l):len(l)]
		all = all[len(l):]
		for i, c := range l {
			ps[i] = anchorPosting{int64(c), m.counts[c]}
		}
		out[k] = ps
	}
	return out, true
}

// TestAnchorAppendsFindTheLastBlock: with the lists in memory telling
// which keys have no block, a posting added to a key that has one, from
// an earlier commit or earlier in the same transaction, still goes into
// that key's last block rather than a new one beside it.
func TestAnchorAppendsFindTheLastBlock(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, filepath.Join(t.TempDir(), "index.db"))
	a, b := uint32(7)*index.AnchorEvery, uint32(9)*index.AnchorEvery
	blocksOf := func(anchor uint32) (n, postings int) {
		t.Helper()
		k := postingKey(uint64(anchor) << 32)
		if err := s.w.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(n), 0) FROM anchor_blocks WHERE h = ?", k).Scan(&n, &postings); err != nil {
			t.Fatal(err)
		}
		return n, postings
	}
	put := func(entries ...index.Entry) {
		t.Helper()
		if _, err := s.Put(ctx, entries); err != nil {
			t.Fatal(err)
		}
	}
	put(anchorDoc("old", "an old text", a, a+index.AnchorEvery))
	if state, _ := waitAnchors(t, s); state != memReady {
		t.Fatalf("lists not in memory: state %v", state)
	}
	put(anchorDoc("second", "a second text", a))
	if n, ps := blocksOf(a); n != 1 || ps != 2 {
		t.Fatalf("after a second commit: %d blocks holding %d postings, want 1 holding 2", n, ps)
	}
	// One transaction: a posting, then a replaced key (which writes the
	// postings so far), then another posting under the same anchor.
	// b is a new anchor.
	put(anchorDoc("third", "a third text", a, b), anchorDoc("old", "the old text replaced"), anchorDoc("fourth", "a fourth text", a, b))
	if n, ps := blocksOf(a); n != 1 || ps != 4 {
		t.Fatalf("anchor a after one transaction: %d blocks holding %d postings, want 1 holding 4 (the replaced text.s postings go when its content is settled)", n, ps)
	}
	if n, ps := blocksOf(b); n != 1 || ps != 2 {
		t.Fatalf("new anchor b after one transaction: %d blocks holding %d postings, want 1 holding 2", n, ps)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
