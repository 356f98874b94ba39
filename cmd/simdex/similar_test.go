package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSimilarSaysWhichArgumentItTook: similar DIR answered "extract DIR:
// read: read DIR: read DIR: is a directory"; a file named 35 was taken for
// the file without a word, though 35 is also a document id; an index path
// that did not exist was created empty and answered "no copies". A
// directory and a missing index are one clear error each, a number that
// names a file is refused as ambiguous, and ./35 or --id 35 says which.
func TestSimilarSaysWhichArgumentItTook(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	text := words("alpha", 300)
	write(t, filepath.Join("docs", "a.txt"), text)
	write(t, filepath.Join("docs", "b.txt"), text)
	idx := filepath.Join(t.TempDir(), "idx.db")
	if out, code, err := run(t, "scan", "--index", idx, "docs"); code != 0 {
		t.Fatalf("scan: exit %d: %v\n%s", code, err, out)
	}
	matches := func(args ...string) []string {
		t.Helper()
		out, code, err := run(t, append([]string{"similar", "--index", idx, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("similar %v: exit %d: %v", args, code, err)
		}
		var r struct{ Matches []struct{ ID int64 } }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range r.Matches {
			ids = append(ids, strconv.FormatInt(m.ID, 10))
		}
		return ids
	}
	ids := matches(filepath.Join("docs", "a.txt"))
	if len(ids) != 2 {
		t.Fatalf("similar FILE: matches %v, want both copies", ids)
	}
	id := ids[0]
	if got := matches(id); len(got) != 1 {
		t.Errorf("similar %s (a document id, no such file): %v", id, got)
	}
	write(t, id, text) // a file named like the document id
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"docs"}, "docs is a directory: similar compares one file"},
		{[]string{id}, id + " is both a file here and a document id: say ./" + id + " for the file, or --id " + id + " for the document"},
		{[]string{"--id", id, "docs/a.txt"}, "not both"},
		{[]string{}, "give a FILE, or a document ID (--id ID)"},
		{[]string{"nothere"}, "nothere: no such file, and not a document id"},
	} {
		_, code, err := run(t, append([]string{"similar", "--index", idx}, c.args...)...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("similar %v: exit %d, %v; want exit 2 and %q", c.args, code, err, c.want)
		}
	}
	if got := matches("./" + id); len(got) != 2 {
		t.Errorf("similar ./%s (the file): %v, want both copies", id, got)
	}
	if got := matches("--id", id); len(got) != 1 {
		t.Errorf("similar --id %s (the document): %v", id, got)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	_, code, err := run(t, "similar", "--index", missing, "docs/a.txt")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "index "+missing+": no such file") {
		t.Errorf("similar against a missing index: exit %d, %v", code, err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("similar created the missing index: %v", err)
	}
}
