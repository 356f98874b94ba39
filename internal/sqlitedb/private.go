package sqlitedb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/simdex/simdex/internal/datadir"
)

// FileMode is the mode of every database file: owner only, since the
// databases hold extracted texts, API token hashes and hold decisions.
const FileMode fs.FileMode = 0o600

// companions are the files SQLite keeps beside a database. It creates
// each with the database file's own mode, whatever the umask.
var companions = []string{"-wal", "-shm", "-journal"}

// MakePrivate makes the database at path readable by its owner only,
// before SQLite opens it: it creates the folder holding it (0700, see
// datadir.Make) and the file itself, empty and 0600, when they are
// missing, so that the write-ahead log, shared-memory index and journal
// SQLite creates later get 0600 too; and it takes group and other
// permissions away from the database and those companions when an older
// simdex created them wider. A file the process does not own is left as
// it is.
func MakePrivate(path string) error {
	if err := datadir.Make(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	if err == nil {
		err = f.Chmod(FileMode) // the umask may have taken bits away
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	for _, p := range append([]string{path}, suffixed(path)...) {
		if err := tighten(p); err != nil {
			return err
		}
	}
	return nil
}

func suffixed(path string) []string {
	out := make([]string, len(companions))
	for i, s := range companions {
		out[i] = path + s
	}
	return out
}

// tighten sets an existing file that grants group or other permissions
// to FileMode.
func tighten(p string) error {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check mode of %s: %w", p, err)
	}
	if fi.Mode().Perm()&^FileMode == 0 {
		return nil
	}
	if err := os.Chmod(p, FileMode); err != nil && !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("restrict %s to its owner: %w", p, err)
	}
	return nil
}
