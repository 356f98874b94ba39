//go:build unix

package daemon

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/internal/sqlitedb/sqlitetest"
)

// TestDataDirectoryIsPrivate: under umask 0000, everything the daemon
// creates in its data directory is its owner's alone: files 0600,
// directories 0700 (issue 31, item 7), the default inbox among them, whose
// names the group could list (issue 47, item 7). Inside the embedded NATS store,
// nats-server chooses the modes; its private directory is what guards it.
func TestDataDirectoryIsPrivate(t *testing.T) {
	sqlitetest.Umask(t, 0)
	cfg := embeddedConfig(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Connectors.FS.Dirs = DefaultConfig().Connectors.FS.Dirs
	d := startDaemon(t, cfg, nil)
	stopDaemon(t, d)
	err := filepath.WalkDir(cfg.DataDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if e.IsDir() {
			want = 0o700
		}
		rel, _ := filepath.Rel(cfg.DataDir, p)
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %#o, want %#o", rel, got, want)
		}
		if e.IsDir() && rel == "nats" {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sqlitetest.Private(t, filepath.Join(cfg.DataDir, "nats"))
}
