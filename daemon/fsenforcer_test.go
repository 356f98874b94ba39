package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// TestFSEnforcerDeletesOnlyTheIndexedVersion: a file is deleted only
// while its size, modification time and SHA-256 are the ones indexed;
// the same size and time with other bytes is stale, a missing file or
// index entry gone, another indexed version stale, and no key reaches
// outside the folder. Holds: a file cannot be locked (ErrCannotLock).
func TestFSEnforcerDeletesOnlyTheIndexedVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mod := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	write := func(name, text string) *index.Record {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return &index.Record{Doc: index.Doc{Key: "fs:" + dir + "/" + name, VersionID: "v1", ModTime: mod},
			RawSHA256: sha256.Sum256([]byte(text)), RawSize: int64(len(text))}
	}
	recs := map[string][]*index.Record{}
	enf := &fsEnforcer{Roots: map[string]string{"fs:" + dir: dir},
		Lookup: func(_ context.Context, key string) ([]*index.Record, error) { return recs[key], nil }}
	obj := func(name string) policy.Object {
		return policy.Object{Source: "fs:" + dir, Key: name, VersionID: "v1", IndexKey: "fs:" + dir + "/" + name}
	}
	for _, name := range []string{"keep.txt", "swapped.txt", "missing.txt"} {
		r := write(name, "the text of "+name)
		recs[r.Key] = []*index.Record{r}
	}
	write("swapped.txt", "THE TEXT OF swapped.txt") // same size and time, other bytes
	if err := os.Remove(filepath.Join(dir, "missing.txt")); err != nil {
		t.Fatal(err)
	}
	other := write("replaced.txt", "a newer version")
	other.VersionID = "v2"
	recs[other.Key] = []*index.Record{other}
	for name, want := range map[string]error{"swapped.txt": policy.ErrStale, "missing.txt": policy.ErrGone,
		"replaced.txt": policy.ErrStale, "unindexed.txt": policy.ErrGone} {
		if err := enf.Delete(ctx, obj(name)); !errors.Is(err, want) {
			t.Errorf("delete %s: %v, want %v", name, err, want)
		}
	}
	escape := obj("../outside.txt")
	recs[escape.IndexKey] = []*index.Record{{Doc: index.Doc{Key: escape.IndexKey, VersionID: "v1"}}}
	if err := enf.Delete(ctx, escape); err == nil || errors.Is(err, policy.ErrGone) {
		t.Errorf("delete outside the folder: %v", err)
	}
	if err := enf.Delete(ctx, obj("keep.txt")); err != nil {
		t.Fatalf("delete the indexed version: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); !os.IsNotExist(err) {
		t.Errorf("keep.txt after deletion: %v", err)
	}
	for _, name := range []string{"swapped.txt", "replaced.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := enf.HoldAll(ctx, obj("swapped.txt")); !errors.Is(err, policy.ErrCannotLock) {
		t.Errorf("hold a file: %v", err)
	}
	if err := (&fsEnforcer{}).Delete(ctx, obj("swapped.txt")); !errors.Is(err, policy.ErrNotEnforceable) {
		t.Errorf("delete in no watched folder: %v", err)
	}
}
