package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// TestSnapshotHoldsOneConnection runs every read inside a snapshot of a
// store with a single read connection, which the snapshot holds: a read
// that took a connection of its own would wait until the deadline.
func TestSnapshotHoldsOneConnection(t *testing.T) {
	for _, inMemory := range []bool{false, true} {
		t.Run(map[bool]string{false: "anchors on disk", true: "anchors in memory"}[inMemory], func(t *testing.T) {
			s, err := Open(context.Background(), filepath.Join(t.TempDir(), "index.db"), Options{Scheme: 1, Readers: 1, AnchorsInMemory: inMemory})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			a1, a2 := uint32(1*index.AnchorEvery), uint32(2*index.AnchorEvery)
			put, err := s.Put(context.Background(), []index.Entry{anchorDoc("a", "a", a1, a2), anchorDoc("b", "b", a1, a2)})
			if err != nil {
				t.Fatal(err)
			}
			if inMemory {
				waitAnchors(t, s)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ctx, done, err := s.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			if again, nop, err := s.Snapshot(ctx); err != nil || again != ctx {
				t.Fatalf("nested snapshot: %v, same context %v", err, again == ctx)
			} else {
				nop()
			}
			c := put[0].Content
			fp := anchorDoc("q", "a", a1, a2).Fingerprint
			reads := map[string]func() error{
				"Get":       func() error { _, err := s.Get(ctx, put[0].ID); return err },
				"Lookup":    func() error { _, err := s.Lookup(ctx, "a"); return err },
				"ByContent": func() error { _, err := s.ByContent(ctx, c); return err },
				"Seen":      func() error { _, err := s.Seen(ctx, "a"); return err },
				"Documents": func() error { return s.Documents(ctx, func(*index.Record) error { return nil }) },
				"Find":      func() error { _, err := s.Find(ctx, "a", 10); return err },
				"Children":  func() error { _, err := s.Children(ctx, put[0].ID); return err },
				"Text":      func() error { _, err := s.Text(ctx, c); return ignore(err, index.ErrNoText) },
				"Candidates": func() error {
					_, err := s.Candidates(ctx, index.CandidateQuery{TextSHA256: fp.TextSHA256, Chunks: []uint64{1}, MaxChunkDocs: 10})
					return err
				},
				"Anchors": func() error { _, err := s.AnchorCandidates(ctx, fp.Anchors(), 10, 0.5, 10); return err },
				"Fingerprint": func() error {
					return s.Fingerprints(ctx, []index.ContentID{c}, func(index.ContentID, *index.Fingerprint) error { return nil })
				},
				"SimHashes":   func() error { return s.SimHashes(ctx, func(index.ContentID, uint64) error { return nil }) },
				"Stats":       func() error { _, err := s.Stats(ctx); return err },
				"Templates":   func() error { _, err := s.Templates(ctx); return err },
				"ChunkCounts": func() error { _, err := s.ChunkContents(ctx, []uint64{1, 2}); return err },
				"Groups":      func() error { return s.Groups(ctx, 10, nil, func([]index.ContentID) error { return nil }) },
				"AnchorGroups": func() error {
					return s.AnchorGroups(ctx, 10, nil, func([]index.ContentID, []int) error { return nil })
				},
			}
			for name, read := range reads {
				if err := read(); err != nil {
					t.Errorf("%s in a snapshot: %v", name, err)
				}
			}
		})
	}
}

func ignore(err, want error) error {
	if errors.Is(err, want) {
		return nil
	}
	return err
}

// TestSnapshotSeesOneState writes after a snapshot's first read: its
// reads do not see the write, and reads after it ends do.
func TestSnapshotSeesOneState(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	bg := context.Background()
	first, err := s.Put(bg, []index.Entry{anchorDoc("a", "a")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, done, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, first[0].ID); err != nil {
		t.Fatal(err)
	}
	second, err := s.Put(ctx, []index.Entry{anchorDoc("b", "b")}) // writes are not part of it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, second[0].ID); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("a document written after the snapshot's first read, read in it: %v, want ErrNotFound", err)
	}
	if _, err := s.Remove(bg, "a", ""); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.ByContent(ctx, first[0].Content); err != nil || len(recs) != 1 {
		t.Errorf("a document removed after the snapshot's first read, read in it: %d, %v", len(recs), err)
	}
	done()
	if _, err := s.Get(bg, second[0].ID); err != nil {
		t.Errorf("after the snapshot: %v", err)
	}
	if _, err := s.Get(ctx, first[0].ID); err == nil {
		t.Error("a snapshot's context read the store after the snapshot ended")
	}
}

// TestSnapshotsOfTwoStores nests a snapshot of one store in another's: each
// store's reads still find their own, on the one connection each has.
func TestSnapshotsOfTwoStores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stores [2]*Store
	var ids [2]index.DocID
	for i := range stores {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "index.db"), Options{Scheme: 1, Readers: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		put, err := s.Put(ctx, []index.Entry{anchorDoc("a", "a")})
		if err != nil {
			t.Fatal(err)
		}
		stores[i], ids[i] = s, put[0].ID
	}
	ctx, doneA, err := stores[0].Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer doneA()
	ctx, doneB, err := stores[1].Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer doneB()
	for i, s := range stores {
		if _, err := s.Get(ctx, ids[i]); err != nil {
			t.Errorf("store %d in nested snapshots: %v", i, err)
		}
	}
}
