//go:build unix

package datadir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/datadir"
	"github.com/simdex/simdex/internal/sqlitedb/sqlitetest"
)

// Make creates every missing directory 0700 whatever the umask, and leaves
// existing ones as they are.
func TestMake(t *testing.T) {
	for _, mask := range []int{0o022, 0o000, 0o077} {
		t.Run(fmt.Sprintf("umask %#o", mask), func(t *testing.T) {
			sqlitetest.Umask(t, mask)
			root := t.TempDir()
			existing := filepath.Join(root, "shared")
			if err := os.Mkdir(existing, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(existing, 0o755); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(existing, "data")
			if err := datadir.Make(filepath.Join(data, "nats", "jetstream")); err != nil {
				t.Fatal(err)
			}
			if err := datadir.Make(data); err != nil { // again: nothing to do
				t.Fatal(err)
			}
			sqlitetest.Private(t, data, "nats/jetstream")
			if fi, err := os.Stat(existing); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("existing parent: %v %v, want it left 0755", fi.Mode(), err)
			}
		})
	}
}

func TestMakeRefusesAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		if err := datadir.Make(dir); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("Make(%s) = %v, want an error naming %s", dir, err, file)
		}
	}
}

// Check warns about a data directory that any local user may read, write
// or enter, and only about such a directory.
func TestCheck(t *testing.T) {
	cases := []struct {
		mode os.FileMode
		warn bool
	}{
		{0o700, false}, {0o750, false}, {0o770, false}, {os.ModeSetgid | 0o770, false}, // Kubernetes fsGroup
		{0o755, true}, {0o701, true}, {0o777, true}, {0o704, true},
	}
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			warning, err := datadir.Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := warning != ""; got != c.warn {
				t.Errorf("warning %q, want one: %v", warning, c.warn)
			}
			if c.warn && (!strings.Contains(warning, dir) || !strings.Contains(warning, "chmod 700")) {
				t.Errorf("warning %q does not name the directory and the cure", warning)
			}
		})
	}
	if _, err := datadir.Check(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Check of a missing directory: no error")
	}
}
