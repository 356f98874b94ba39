package postgres_test

import (
	"context"
	"maps"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgtest"
)

// TestOriginOfThePreviousRelease: a row written without the origin column
// (before migration 2, or by a replica of the previous release during a
// rolling upgrade, whose insert names no origin) holds its origin
// metadata in meta; it reads back with a nil Origin, so that OriginMeta
// finds that metadata there.
func TestOriginOfThePreviousRelease(t *testing.T) {
	ctx := context.Background()
	pool := openPool(t, pgtest.DSN(t))
	s := openOn(t, pool)
	fp := storetest.Fingerprint("old text", []uint64{1 << 40}, nil)
	c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "k", VersionID: "v"}, Fingerprint: fp, Parent: -1}})
	if err != nil {
		t.Fatal(err)
	}
	// The previous release's insert: meta holds the origin's metadata, origin is left NULL.
	if _, err := pool.Exec(ctx, `UPDATE index_documents SET origin = NULL, meta = '{"custodian": "kim"}' WHERE id = $1`, int64(c[0].ID)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, c[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Origin != nil || !maps.Equal(r.OriginMeta(), map[string]string{"custodian": "kim"}) {
		t.Fatalf("origin = %#v, OriginMeta = %v; want nil and the metadata in meta", r.Origin, r.OriginMeta())
	}
}
