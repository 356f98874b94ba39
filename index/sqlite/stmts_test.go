package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// TestStatementsUnderContention runs every kind of lookup and commit at
// once on a fresh store with a single reader connection, so that each
// statement is first needed while the pool's connections are taken:
// preparing one must never wait for a connection its own caller holds.
func TestStatementsUnderContention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "index.db"), Options{Scheme: 1, Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fp := func(i int) *index.Fingerprint {
		return storetest.Fingerprint(fmt.Sprintf("text %d", i), []uint64{uint64(i+1) << 40, 7 << 40},
			[]uint32{3 * index.AnchorEvery, uint32(i+4) * index.AnchorEvery}) // ascending, as samples are
	}
	const writers, readers, rounds = 2, 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				n := w*rounds + i
				e := index.Entry{Doc: index.Doc{Key: fmt.Sprintf("doc-%d", n)}, Fingerprint: fp(n), Parent: -1, Text: []byte("text")}
				entries := []index.Entry{e}
				s.Prepare(ctx, entries)
				if _, err := s.Put(ctx, entries); err != nil {
					errs <- fmt.Errorf("put %d: %w", n, err)
					return
				}
			}
		}()
	}
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				q := fp(1)
				cands, err := s.Candidates(ctx, index.CandidateQuery{Bands: []uint64{1 << 40}, Chunks: []uint64{7 << 40}, MaxChunkDocs: 100})
				if err == nil {
					_, err = s.AnchorCandidates(ctx, q.Anchors(), 100, 0.1, 10)
				}
				if err == nil {
					err = s.Fingerprints(ctx, cands, func(index.ContentID, *index.Fingerprint) error { return nil })
				}
				if err == nil {
					_, err = s.ChunkContents(ctx, []uint64{7 << 40})
				}
				if err == nil {
					_, err = s.ByContent(ctx, 1)
				}
				if err == nil {
					_, err = s.Seen(ctx, "doc-1")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("lookups and commits still waiting after 60 s: a statement waits for a connection its caller holds")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
