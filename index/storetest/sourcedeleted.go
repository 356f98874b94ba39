package storetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// SourceDeletedStore is a store that keeps the ledger of documents deleted
// at their source while a legal hold kept them (the pipeline's Ledger).
type SourceDeletedStore interface {
	index.Store
	MarkDeletedAtSource(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error)
	DeletedAtSource(ctx context.Context, fn func(*index.Record) error) error
	MarkSuperseded(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error)
}

// DeletedAtSource checks a store's marks of documents deleted at source
// while held: a mark adds its two metadata keys, keeps the
// document and its other metadata, is kept on a second mark, and the
// marked documents are listed. Origin metadata naming the mark
// (forgedOrigin) neither lists a document nor keeps it from being marked.
// A superseded mark works alike, under its own keys, and lists nothing.
// A document stored with no metadata at all is marked too (SQLite stored
// its metadata as JSON null, which took no mark and counted it done).
func DeletedAtSource(t *testing.T, s SourceDeletedStore) {
	t.Helper()
	ctx := context.Background()
	var ids []index.DocID
	for i, key := range []string{"a", "b", "c"} {
		fp := Fingerprint("text "+key, []uint64{uint64(i+1) << 40}, nil)
		doc := index.Doc{Key: key, VersionID: "v1", Meta: map[string]string{"title": "t"}, Origin: maps.Clone(forgedOrigin)}
		if key == "c" {
			doc.Meta, doc.Origin = nil, nil
		}
		c, err := s.Put(ctx, []index.Entry{{Doc: doc, Fingerprint: fp, Parent: -1}})
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
	want := map[string]string{"title": "t", index.MetaDeletedAtSource: first.Format(time.RFC3339Nano), index.MetaDeletedAtSourceEvent: "delete marker m1 of a from s3:x"}
	if !maps.Equal(r.Meta, want) || !maps.Equal(r.Origin, forgedOrigin) {
		t.Errorf("meta = %v, origin = %v; want %v and %v", r.Meta, r.Origin, want, forgedOrigin)
	}
	if n, err := s.MarkDeletedAtSource(ctx, ids[2:], first, "deleted from fs:inbox"); err != nil || n != 1 {
		t.Fatalf("mark a document without metadata: %d, %v", n, err)
	}
	if r, err := s.Get(ctx, ids[2]); err != nil || r.Meta[index.MetaDeletedAtSource] == "" {
		t.Fatalf("a document without metadata has meta %v after its mark (%v)", r.Meta, err)
	}
	var listed []index.DocID
	if err := s.DeletedAtSource(ctx, func(r *index.Record) error { listed = append(listed, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed[0] != ids[0] || listed[1] != ids[2] {
		t.Fatalf("DeletedAtSource listed %v, want [%d %d]", listed, ids[0], ids[2])
	}
	if n, err := s.MarkSuperseded(ctx, ids[1:2], first, "overwritten by v2 of b from fs:inbox"); err != nil || n != 1 {
		t.Fatalf("mark superseded: %d, %v", n, err)
	}
	if n, err := s.MarkSuperseded(ctx, ids[1:2], first.Add(time.Hour), "again"); err != nil || n != 0 {
		t.Fatalf("second superseded mark: %d, %v; want 0 newly marked", n, err)
	}
	r, err = s.Get(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"title": "t", index.MetaSupersededAt: first.Format(time.RFC3339Nano), index.MetaSupersededBy: "overwritten by v2 of b from fs:inbox"}
	if !maps.Equal(r.Meta, want) {
		t.Errorf("superseded meta = %v, want %v", r.Meta, want)
	}
}
