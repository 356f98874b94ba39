package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/pgtest"
)

// This release reads index_contents.bands of one byte, the number of
// bands whose keys the body's slots give again, which a later release may
// write: removing such a content takes all its band postings away.
func TestOneByteBandsAreRead(t *testing.T) {
	ctx := context.Background()
	pool := openPool(t, pgtest.DSN(t))
	opts := index.DefaultOptions()
	ix, err := index.New(ctx, openOn(t, pool), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	postings := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM index_band_postings").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	add := func(key, text string) {
		t.Helper()
		if _, err := ix.Add(ctx, []index.Input{{Doc: index.Doc{Key: key}, Text: []byte(strings.Repeat(text, 30)), Parent: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "The payroll office keeps its records for seven years. ")
	before := postings()
	add("c", "An unrelated memo about the canteen's opening hours in winter. ")
	if got := postings(); got != before+opts.Sketch.Bands {
		t.Fatalf("%d band postings after adding c, want %d", got, before+opts.Sketch.Bands)
	}
	if _, err := pool.Exec(ctx, "UPDATE index_contents SET bands = $1", []byte{byte(opts.Sketch.Bands)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Remove(ctx, "c", ""); err != nil {
		t.Fatal(err)
	}
	if got := postings(); got != before {
		t.Fatalf("%d band postings after removing c, want %d", got, before)
	}
}
