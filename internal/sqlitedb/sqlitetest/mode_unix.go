//go:build unix

package sqlitetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Umask sets the process umask to mask until the test ends. The umask is
// the process's: a test that calls it must not run in parallel with
// others.
func Umask(t testing.TB, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// Private fails t unless every file under dir (dir included) is private
// to its owner: files 0600, directories 0700. The files named in want,
// relative to dir, must exist, so that a test cannot pass because SQLite
// had not created them yet.
func Private(t testing.TB, dir string, want ...string) {
	t.Helper()
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
			t.Errorf("%s was not created: %v", w, err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := fi.Mode().Perm(); got != want {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s has mode %#o, want %#o", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
