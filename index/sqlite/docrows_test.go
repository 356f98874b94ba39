package sqlite

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// openSchema10 copies testdata/schema10.db.gz, an index made by the code of
// schema version 10, into a temporary file and opens it.
func openSchema10(t *testing.T) *Store {
	t.Helper()
	f, err := os.Open("testdata/schema10.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var db bytes.Buffer
	if _, err := db.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(path, db.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return open(t, path, 1)
}

// TestMigrateCompactsDocuments: an index made by the code of schema
// version 10 migrates to compact document rows with every id and field
// kept, as that code read them, and is found by key, idempotency key,
// name, parent and metadata; ids go on after the old sequence, not after
// the largest id left.
func TestMigrateCompactsDocuments(t *testing.T) {
	ctx := context.Background()
	s := openSchema10(t)
	var got []*index.Record
	if err := s.Documents(ctx, func(r *index.Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.MarshalIndent(got, "", "\t")
	want, err := os.ReadFile("testdata/schema10-records.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(gotJSON)+"\n" != string(want) {
		t.Fatalf("records after migration:\n%s\nwant:\n%s", gotJSON, want)
	}
	for _, r := range got {
		if rs, err := s.Lookup(ctx, r.Key); err != nil || rs[0].ID != r.ID {
			t.Errorf("Lookup(%q) = %v, %v", r.Key, rs, err)
		}
		if ok, err := s.Seen(ctx, r.IdempotencyKey()); err != nil || !ok {
			t.Errorf("Seen(%q) = %v, %v", r.IdempotencyKey(), ok, err)
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	checkCompactRows(t, s)
	checkFinds(t, s)
	c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "fs:/srv/new.txt", Error: "x"}, Parent: -1}})
	if err != nil || c[0].ID != 9 {
		t.Fatalf("Put after migration = %v, %v; want id 9, after the sequence's 8", c, err)
	}
}

// checkCompactRows checks that the migrated rows of testdata/schema10.db.gz
// store only what cannot be derived.
func checkCompactRows(t *testing.T, s *Store) {
	t.Helper()
	got := dumpRows(t, s, `SELECT d.id || ' ' || p.prefix || ' ' || d.base || ' ' || coalesce(d.version_id, '-') || ' ' || iif(d.idem IS NULL, '-', hex(d.idem))
		|| ' ' || typeof(d.name) || ' ' || coalesce(d.path, '-') || ' ' || coalesce(d.meta, '-') FROM documents d JOIN doc_dirs p ON p.id = d.dir ORDER BY d.id`)
	want := []string{
		`1 fs:/srv/in/ a.txt - - integer - {"charset":"utf-8","deleted_at_source":"2026-01-02T03:04:05.000000006Z","deleted_at_source_event":"ev-1"}`,
		`3 s3:bucket/dir/ b.eml v1 73333A6D61696E006275636B6574006469722F622E656D6C0076310065746167 integer - {"message_id":"\u003cm1@x\u003e","subject":"Hi \u003cyou\u003e \u0026 me","thread_id":"t1"}`,
		`4 s3:bucket/dir/b.eml!/ att.docx v1 - integer ["dir/b.eml","att.docx"] null`,
		`5  nokey  - text [] null`,
		`6 fs:/srv/ünï/ č.txt 7 - integer - -`,
		`7 fs:/srv/in/ d.txt v 66733A2F7372762F696E2F642E747874 text ["elsewhere","d"] null`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkFinds checks the reads by name, parent and metadata of the
// migrated testdata/schema10.db.gz.
func checkFinds(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	ids := func(rs []*index.Record, err error) []index.DocID {
		if err != nil {
			t.Fatal(err)
		}
		var out []index.DocID
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []index.DocID
	}{
		{"ÜNÏ", nil}, // ASCII case only, as LIKE
		{"ünï/č", []index.DocID{6}},
		{"display", []index.DocID{7}}, // by name alone
		{"srv/in", []index.DocID{7, 1}},
		{"b.eml", []index.DocID{4, 3}},
		{"4", []index.DocID{4}},
	} {
		if got := ids(s.Find(ctx, c.query, 10)); !slices.Equal(got, c.want) {
			t.Errorf("Find(%q) = %v, want %v", c.query, got, c.want)
		}
	}
	if got := ids(s.Children(ctx, 3)); !slices.Equal(got, []index.DocID{4}) {
		t.Errorf("Children(3) = %v", got)
	}
	if got := ids(s.ByMeta(ctx, index.MetaThreadID, "t1")); !slices.Equal(got, []index.DocID{3}) {
		t.Errorf("ByMeta(thread t1) = %v", got)
	}
	var deleted []index.DocID
	err := s.DeletedAtSource(ctx, func(r *index.Record) error { deleted = append(deleted, r.ID); return nil })
	if err != nil || !slices.Equal(deleted, []index.DocID{1}) {
		t.Errorf("DeletedAtSource = %v, %v", deleted, err)
	}
}

// TestDocumentLookupsUseTheirIndexes: the reads by key and by
// idempotency key search the hash indexes, not the table.
func TestDocumentLookupsUseTheirIndexes(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	for _, q := range []string{
		"SELECT " + docColumns + docFrom + "WHERE d.key_hash = ? AND d.key = ? ORDER BY d.id DESC",
		"SELECT 1 FROM document_view WHERE idem_hash = ? AND idem = ?",
		"SELECT id FROM document_view WHERE key_hash = ? AND key = ? AND parent_id IS NULL",
	} {
		plan := strings.Join(dumpRows(t, s, "EXPLAIN QUERY PLAN "+strings.ReplaceAll(strings.ReplaceAll(q, "= ?", "= 1"), "key = 1", "key = ''")), "; ")
		if !strings.Contains(plan, "USING INDEX documents_") || strings.Contains(plan, "SCAN d") {
			t.Errorf("%s:\nplan %s", q, plan)
		}
	}
}

// FuzzDocumentRow: a document's fields come back as they were put,
// whatever they are, and the document is found by its key and its
// idempotency key.
func FuzzDocumentRow(f *testing.F) {
	f.Add("fs:/srv/in/a.txt", "1-5", "", "in/a.txt", int64(1), int64(4), true)
	f.Add("s3:b/k", "v1", "s3:b\x00k\x00v1", "k", int64(0), int64(0), false)
	f.Add("a/\x00/ü", "", "", "/ü", int64(-3), int64(7), true)
	f.Add("k\xff/x", "1-0", "k\xff/x\x001-0", "x", int64(1), int64(0), false)
	s, err := Open(context.Background(), filepath.Join(f.TempDir(), "index.db"), Options{Scheme: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, key, version, idem, name string, mod, size int64, pathIsName bool) {
		ctx := context.Background()
		d := index.Doc{Key: key, VersionID: version, Idempotency: idem, Name: name, Error: "e", KeepVersions: true,
			Meta: map[string]string{"k": name}}
		if mod != 0 {
			d.ModTime = time.Unix(0, mod).UTC()
		}
		if pathIsName {
			d.Path = []string{name}
		}
		if ok, err := s.Seen(ctx, d.IdempotencyKey()); err != nil || ok {
			return // put already, by another input
		}
		c, err := s.Put(ctx, []index.Entry{{Doc: d, Parent: -1, RawSize: size}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Get(ctx, c[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := d
		if want.Path == nil {
			want.Path = []string{}
		}
		want.Idempotency = d.IdempotencyKey()
		if r.Key != want.Key || r.VersionID != want.VersionID || r.Idempotency != want.Idempotency || r.Name != want.Name ||
			!slices.Equal(r.Path, want.Path) || r.Meta["k"] != name || !r.ModTime.Equal(want.ModTime) || r.RawSize != size {
			t.Fatalf("put %+v size %d, got %+v", want, size, r)
		}
		if ok, err := s.Seen(ctx, want.Idempotency); err != nil || !ok {
			t.Fatalf("Seen(%q) = %v, %v", want.Idempotency, ok, err)
		}
		rs, err := s.Lookup(ctx, key)
		if err != nil || !slices.ContainsFunc(rs, func(x *index.Record) bool { return x.ID == r.ID }) {
			t.Fatalf("Lookup(%q) = %v, %v", key, rs, err)
		}
	})
}
