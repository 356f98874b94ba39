package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index/sqlite"
)

// TestStatsShowsWhereTheSpaceGoes: stats measures an index table by table
// without changing it, and refuses a file that is not an index.
func TestStatsShowsWhereTheSpaceGoes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"GPL-3.0-only.txt", "Apache-2.0.txt", "MIT.txt"} {
		write(t, filepath.Join(dir, name), readCorpus(t, name))
	}
	idx := filepath.Join(t.TempDir(), "idx.db")
	if out, code, err := run(t, "scan", "--index", idx, dir); code != 0 {
		t.Fatalf("scan: %d %v\n%s", code, err, out)
	}
	before, _ := os.ReadFile(idx)
	out, code, err := run(t, "stats", "--index", idx, "--json")
	if code != 0 {
		t.Fatalf("stats: %d %v", code, err)
	}
	var fp sqlite.Footprint
	if err := json.Unmarshal([]byte(out), &fp); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	var sum int64
	tables := map[string]bool{}
	for _, tb := range fp.Tables {
		sum += tb.Bytes + tb.IndexBytes
		tables[tb.Table] = true
	}
	if fp.Objects != 3 || fp.InputBytes == 0 || sum != fp.PageBytes || !tables["documents"] || !tables["contents"] {
		t.Fatalf("footprint %+v", fp)
	}
	if after, _ := os.ReadFile(idx); string(after) != string(before) {
		t.Error("stats changed the index file")
	}
	out, _, _ = run(t, "stats", "--index", idx)
	if !strings.Contains(out, "of input") || !strings.Contains(out, "documents") {
		t.Errorf("stats text:\n%s", out)
	}
	other := filepath.Join(t.TempDir(), "notes.txt")
	write(t, other, []byte("not a database"))
	if _, code, _ := run(t, "stats", "--index", other); code != 2 {
		t.Errorf("stats on a text file: exit %d, want 2", code)
	}
}
