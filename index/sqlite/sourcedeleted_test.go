package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// TestMarkDeletedAtSource: a mark adds its two metadata keys, keeps the
// document and its other metadata, is kept on a second mark, and the
// marked documents are listed.
func TestMarkDeletedAtSource(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	var ids []index.DocID
	for i, key := range []string{"a", "b"} {
		fp := storetest.Fingerprint("text "+key, []uint64{uint64(i+1) << 40}, nil)
		c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: key, VersionID: "v1", Meta: map[string]string{"custodian": "kim"}}, Fingerprint: fp, Parent: -1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c[0].ID)
	}
	first := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	if n, err := s.MarkDeletedAtSource(ctx, ids[:1], first, "delete marker m1 of a from s3:x"); err != nil || n != 1 {
		t.Fatalf("mark: %d, %v", n, err)
	}
	if n, err := s.MarkDeletedAtSource(ctx, ids[:1], first.Add(time.Hour), "again"); err != nil || n != 0 {
		t.Fatalf("second mark: %d, %v; want 0 newly marked", n, err)
	}
	r, err := s.Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"custodian": "kim", index.MetaDeletedAtSource: first.Format(time.RFC3339Nano), index.MetaDeletedAtSourceEvent: "delete marker m1 of a from s3:x"}
	for k, v := range want {
		if r.Meta[k] != v {
			t.Errorf("meta[%q] = %q, want %q", k, r.Meta[k], v)
		}
	}
	var listed []index.DocID
	if err := s.DeletedAtSource(ctx, func(r *index.Record) error { listed = append(listed, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != ids[0] {
		t.Fatalf("DeletedAtSource listed %v, want [%d]", listed, ids[0])
	}
}
