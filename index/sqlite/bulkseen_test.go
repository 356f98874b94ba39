package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/index"
)

// dumpDocuments returns the documents and contents of s as rows.
func dumpDocuments(t *testing.T, s tested) []string {
	t.Helper()
	return dumpRows(t, s,
		"SELECT 'document', id, key, version_id, idem, coalesce(content_id, 0) FROM document_view ORDER BY id",
		"SELECT 'content', id, hex(text_sha256), refs FROM contents ORDER BY id")
}

// A bulk load answers from what it wrote whether an idempotency key, a
// key or a text is stored: the documents and contents it ends with are
// those of a load asking the tables, through the cases that depend on it:
// the same text in two documents, in one transaction and in two; the same
// document put again; a new version of a key; a put rolled back; a text
// removed and put again.
func TestBulkSeenMatchesTheTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	doc := func(key, version, text string) index.Entry {
		e := bandDoc(key, text, 1<<40)
		e.Doc.VersionID = version
		return e
	}
	steps := [][]index.Entry{
		{doc("a", "1", "alpha"), doc("b", "1", "beta"), doc("c", "1", "alpha")},                                  // a text twice in one put
		{doc("d", "1", "beta"), doc("a", "1", "alpha")},                                                          // in another put; a document again
		{doc("b", "2", "gamma")},                                                                                 // a new version: beta loses a reference
		{doc("e", "1", "delta"), func() index.Entry { e := doc("f", "1", "epsilon"); e.Parent = 5; return e }()}, // fails: rolled back
		{doc("e", "1", "delta"), doc("f", "1", "epsilon")},                                                       // put again
		{doc("g", "1", "beta"), doc("h", "1", "zeta")},
	}
	run := func(s tested) []string {
		var out []string
		for i, step := range steps {
			got, err := s.Put(ctx, step)
			out = append(out, fmt.Sprintf("step %d: %+v %v", i, got, err != nil))
		}
		if _, err := s.Remove(ctx, "h", ""); err != nil { // zeta's content released
			t.Fatal(err)
		}
		got, err := s.Put(ctx, []index.Entry{doc("i", "1", "zeta"), doc("j", "1", "alpha")})
		return append(out, fmt.Sprintf("after a removal: %+v %v", got, err))
	}
	immediate := open(t, filepath.Join(dir, "immediate.db"), 1)
	bulk := openBulk(t, filepath.Join(dir, "bulk.db"))
	if bulk.seen == nil {
		t.Fatal("a bulk load into an empty index keeps nothing of what it wrote")
	}
	wantPuts, gotPuts := run(immediate), run(bulk)
	if !slices.Equal(gotPuts, wantPuts) {
		t.Fatalf("the bulk load's puts returned\n%v\nthe other's\n%v", gotPuts, wantPuts)
	}
	if got, want := dumpDocuments(t, bulk), dumpDocuments(t, immediate); !slices.Equal(got, want) {
		t.Fatalf("the bulk load stored\n%v\nthe other\n%v", got, want)
	}
	if bulk.seen.off {
		t.Error("the bulk load stopped answering from memory without another process writing")
	}
	if err := bulk.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bulk.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// A content that another process stores during a bulk load is found when
// the load puts the same text: the load asks the tables once the
// sequences have moved.
func TestBulkSeenAsksTheTablesAfterAnotherProcessWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	bulk := openBulk(t, path)
	putEntries(t, bulk, viewDocs(0, 5), 5)
	other := open(t, path, 1)
	putEntries(t, other, []index.Entry{bandDoc("other", "a text of the other's", 7<<40)}, 1)
	got, err := bulk.Put(ctx, []index.Entry{bandDoc("mine", "a text of the other's", 7<<40)})
	if err != nil {
		t.Fatalf("putting a text another process stored: %v", err)
	}
	if got[0].Content != 6 || !bulk.seen.off {
		t.Fatalf("put %+v (answering from memory: %v); want content 6, the other's, asked of the tables", got, !bulk.seen.off)
	}
	// And a document it stored is a duplicate.
	got, err = bulk.Put(ctx, []index.Entry{bandDoc("other", "a text of the other's", 7<<40)})
	if err != nil || !got[0].Duplicate {
		t.Fatalf("putting another process's document again: %+v, %v; want a duplicate", got, err)
	}
}

// A load into an index holding documents without contents (failed
// extractions) has seen them: putting one again finds it stored.
func TestBulkSeenKnowsWhatTheIndexHeld(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	first := open(t, path, 1)
	failed := index.Entry{Doc: index.Doc{Key: "failed", Error: "unreadable"}, Parent: -1}
	if _, err := first.Put(ctx, []index.Entry{failed}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	bulk := openBulk(t, path)
	if bulk.seen == nil || bulk.seen.newIdem(failed.Doc.IdempotencyKey()) || bulk.seen.newKey("failed") {
		t.Fatal("a bulk load has not seen the document the index held at open")
	}
	got, err := bulk.Put(ctx, []index.Entry{failed})
	if err != nil || !got[0].Duplicate {
		t.Fatalf("the stored document put again: %+v, %v; want a duplicate", got, err)
	}
	if got := dumpDocuments(t, bulk); len(got) != 1 {
		t.Fatalf("documents after putting the stored one again: %v", got)
	}
}
