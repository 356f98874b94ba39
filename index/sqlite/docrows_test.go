package sqlite

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/simdex/simdex/index"
)

// openSchema10 copies testdata/schema10.db.gz, an index made by the code of
// schema version 10, into a temporary file and opens it.
func openSchema10(t testing.TB) *Store {
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
	s, err := Open(context.Background(), path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
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
		{"in/a", []index.DocID{1}}, // across the prefix and the base
		{"N/", []index.DocID{7, 1}},
		{"/", []index.DocID{7, 6, 4, 3, 1}},
		{"dir/b.eml!/", []index.DocID{4}},
		{"ir/b.eml!/att", []index.DocID{4}},
		{"srv/in/", []index.DocID{7, 1}},
		{"srv/in/x", nil},
		{"/srv/ünï/č.txt", []index.DocID{6}},
		{"č.T", []index.DocID{6}},
		{"SRV", []index.DocID{7, 6, 1}},
		{"Name", []index.DocID{7}},
		{"_", nil},
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

// TestDocumentLookupsUseTheirIndexes: the reads by key, idempotency key,
// thread and Message-ID through document_view search their indexes, not
// the table.
func TestDocumentLookupsUseTheirIndexes(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	for _, q := range []string{
		"SELECT " + docColumns + docFrom + "WHERE d.key_hash = ? AND d.key = ? ORDER BY d.id DESC",
		"SELECT 1 FROM document_view WHERE idem_hash = ? AND idem = ?",
		"SELECT id FROM document_view WHERE key_hash = ? AND key = ? AND parent_id IS NULL",
		"SELECT " + docColumns + docFrom + metaWhere[index.MetaThreadID],
		"SELECT " + docColumns + docFrom + metaWhere[index.MetaMessageID],
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
		// Path and Meta are JSON, which holds invalid UTF-8 as U+FFFD.
		want.Path = []string{}
		if d.Path != nil {
			want.Path = []string{viaJSON(name)}
		}
		wantK := viaJSON(name)
		want.Idempotency = d.IdempotencyKey()
		if r.Key != want.Key || r.VersionID != want.VersionID || r.Idempotency != want.Idempotency || r.Name != want.Name ||
			!slices.Equal(r.Path, want.Path) || r.Meta["k"] != wantK || !r.ModTime.Equal(want.ModTime) || r.RawSize != size {
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

// FuzzFind: Find selects, newest first, the documents of the migrated
// testdata/schema10.db.gz whose name or key holds the query, ASCII case
// ignored, as a search of the whole strings does. (LIKE stops at a NUL
// byte and reads bytes as UTF-8: such queries are left out.)
func FuzzFind(f *testing.F) {
	for _, q := range []string{"in/a", "/", "N/", "srv", "č", "%", "_/", "\\", "b.eml!/a", "/srv/"} {
		f.Add(q)
	}
	s := openSchema10(f)
	var all []*index.Record
	if err := s.Documents(context.Background(), func(r *index.Record) error { all = append(all, r); return nil }); err != nil {
		f.Fatal(err)
	}
	slices.Reverse(all)
	f.Fuzz(func(t *testing.T, query string) {
		query = strings.TrimSpace(query)
		if query == "" || strings.Contains(query, "\x00") || !utf8.ValidString(query) {
			return
		}
		if _, err := strconv.ParseInt(query, 10, 64); err == nil {
			return // an id
		}
		var want []index.DocID
		q := asciiLower(query)
		for _, r := range all {
			if strings.Contains(asciiLower(r.Name), q) || strings.Contains(asciiLower(r.Key), q) {
				want = append(want, r.ID)
			}
		}
		rs, err := s.Find(context.Background(), query, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []index.DocID
		for _, r := range rs {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Find(%q) = %v, want %v", query, got, want)
		}
	})
}

// viaJSON is s after a trip through JSON.
func viaJSON(s string) string {
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &s)
	return s
}

// asciiLower lowers s's ASCII letters only, as LIKE compares them.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// TestKeyPrefixOfAPutRolledBack: a key prefix added by a put that failed
// is not remembered, so the next put of that prefix adds it again and its
// document is read back.
func TestKeyPrefixOfAPutRolledBack(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	bad := []index.Entry{{Doc: index.Doc{Key: "s3:b/new/a.txt", Error: "e"}, Parent: -1}, {Doc: index.Doc{Key: "s3:b/new/b.txt", Error: "e"}, Parent: 1}}
	if _, err := s.Put(ctx, bad); err == nil {
		t.Fatal("a put whose entry comes before its parent: no error")
	}
	for _, key := range []string{"s3:b/new/a.txt", "s3:b/new/c.txt"} {
		c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: key, Error: "e"}, Parent: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := s.Get(ctx, c[0].ID); err != nil || r.Key != key {
			t.Fatalf("Get(%d) = %v, %v; want %s", c[0].ID, r, err, key)
		}
	}
}
