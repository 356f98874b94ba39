// Package dirlock keeps two processes from using one data directory at
// once: the first takes an exclusive lock on DIR/lock, held until it
// releases it or exits (the kernel drops the lock of a killed process, so a
// crash leaves nothing to clean up), and writes its pid there so that the
// second can say who holds it.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked reports a directory another process holds; the error is a
// *LockedError naming it.
var ErrLocked = errors.New("directory in use")

// LockedError says which process holds the lock.
type LockedError struct {
	Dir string
	PID int // 0 when unknown
}

// Error implements error.
func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("another simdex is running in %s (pid %d)", e.Dir, e.PID)
	}
	return fmt.Sprintf("another simdex is running in %s", e.Dir)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held directory lock.
type Lock struct {
	f *os.File
}

// Acquire locks dir, which must exist, without waiting: a directory held
// by another process gives a *LockedError.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errWouldBlock) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LockedError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: write pid: %w", dir, err)
		}
	}
	return &Lock{f: f}, nil
}

// Release unlocks the directory. It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops the lock
	l.f = nil
	return err
}
