package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index/sqlite"
)

// TestStatsTakesAnyIndexPath: stats read every relative index path as an
// SQLite URI authority ("invalid uri authority: data"), and any path with
// '?', '#' or '%' as something else. Each index is built by scan at that
// path and measured by stats.
func TestStatsTakesAnyIndexPath(t *testing.T) {
	docs := t.TempDir()
	write(t, filepath.Join(docs, "a.txt"), []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)))
	write(t, filepath.Join(docs, "b.txt"), []byte(strings.Repeat("pack my box with five dozen liquor jugs ", 40)))
	dir := t.TempDir()
	t.Chdir(dir)
	for _, idx := range []string{"scan-idx.db", "./dot-idx.db", "data/index.db", "what?.db", "hash#1.db", "100%25.db", "with space.db"} {
		if err := os.MkdirAll(filepath.Dir(idx), 0o700); err != nil {
			t.Fatal(err)
		}
		if out, code, err := run(t, "scan", "--index", idx, docs); code != 0 {
			t.Fatalf("scan --index %q: exit %d: %v\n%s", idx, code, err, out)
		}
		out, code, err := run(t, "stats", "--index", idx, "--json")
		if code != 0 {
			t.Errorf("stats --index %q: exit %d: %v", idx, code, err)
			continue
		}
		var fp sqlite.Footprint
		if err := json.Unmarshal([]byte(out), &fp); err != nil || fp.Objects != 2 {
			t.Errorf("stats --index %q: %+v, %v", idx, fp, err)
		}
		if _, err := os.Stat(filepath.Join(dir, idx)); err != nil {
			t.Errorf("the index of %q is not where it names: %v", idx, err)
		}
	}
}
