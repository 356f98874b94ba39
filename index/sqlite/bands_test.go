package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
)

// A content whose band keys are those of its MinHash slots stores one
// byte for them; its keys are derived where the store needs them (band
// shares, removal, the check), alongside contents that store their keys,
// and every posting and share stays exact.
func TestBandsDerivedFromSlots(t *testing.T) {
	ctx := context.Background()
	opts := index.DefaultOptions()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), opts.Scheme())
	ix, err := index.New(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base := strings.Repeat("Records of the payroll office are kept for seven years and then destroyed under supervision. ", 40)
	var inputs []index.Input
	for i := range 12 {
		text := base + fmt.Sprintf("Version %d of the schedule, approved on day %d.", i%4, i)
		inputs = append(inputs, index.Input{Doc: index.Doc{Key: fmt.Sprintf("doc-%d", i)}, Text: []byte(text), Parent: -1})
	}
	for _, in := range inputs {
		if _, err := ix.Add(ctx, []index.Input{in}); err != nil {
			t.Fatal(err)
		}
	}
	// Contents with keys stored whole, as before store schema 12.
	putBandDocs(t, s, 20, 3)

	var derived, whole int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE length(bands) = 1), count(*) FILTER (WHERE length(bands) > 1) FROM contents").Scan(&derived, &whole); err != nil {
		t.Fatal(err)
	}
	if derived != 12 || whole == 0 {
		t.Fatalf("%d contents with derived band keys, %d with their keys; want 12 and some", derived, whole)
	}
	check := func() {
		t.Helper()
		sharesExact(t, s)
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check()
	// Its near-copies are found by their shared bands.
	r, err := ix.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ix.SimilarOf(ctx, r, opts.Thresholds)
	if err != nil || len(ms) != 11 {
		t.Fatalf("near-copies of doc-0: %d, %v; want 11", len(ms), err)
	}
	for i := range inputs {
		if i%3 == 0 {
			if _, err := ix.Remove(ctx, inputs[i].Doc.Key, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	check()
	var left int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM band_postings WHERE c IN (SELECT id FROM contents WHERE length(bands) = 1)").Scan(&left); err != nil || left != 8*opts.Sketch.Bands {
		t.Fatalf("%d band postings of the 8 contents left (%v), want %d", left, err, 8*opts.Sketch.Bands)
	}
	var stray int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM band_postings WHERE c NOT IN (SELECT id FROM contents)").Scan(&stray); err != nil || stray != 0 {
		t.Fatalf("%d band postings of removed contents (%v)", stray, err)
	}
}
