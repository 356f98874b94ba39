// Package datadir creates the directories that hold simdex's state (the
// data directory, the embedded NATS store, the folder of a database) so
// that only their owner can enter them, whatever the process umask, and
// checks that an existing data directory is not open to other users.
//
// The files in those directories hold extracted texts, API token hashes
// and hold decisions: a directory that others cannot enter keeps them
// private even when a file inside was created with a wider mode (by an
// older simdex, or by an embedded server whose modes simdex does not
// choose).
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Mode is the mode of every directory Make creates: owner only.
const Mode fs.FileMode = 0o700

// Make creates dir and every missing parent with mode 0700, whatever the
// umask. Directories that exist are left as they are: Check tells about
// one that others can enter.
func Make(dir string) error {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("create directory %s: a file of that name exists", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := Make(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, Mode); errors.Is(err, fs.ErrExist) {
		return nil // created meanwhile by someone else: not ours to change
	} else if err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	// The umask may have taken bits away from Mode (never added any).
	if err := os.Chmod(dir, Mode); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	return nil
}

// Check returns a warning for the log when users other than dir's owner
// and group may read, write or enter dir, and "" otherwise; the error is
// non-nil only when dir cannot be examined. Group access is left to the
// operator: platforms such as Kubernetes (fsGroup) grant it on purpose.
func Check(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("check data directory %s: %w", dir, err)
	}
	if perm := fi.Mode().Perm(); perm&0o007 != 0 {
		return fmt.Sprintf("data directory %s has mode %#o: any local user may read the index, the extracted texts and the API tokens in it; run chmod 700 %s", dir, perm, dir), nil
	}
	return "", nil
}
