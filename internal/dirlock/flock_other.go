//go:build !unix

package dirlock

import (
	"errors"
	"os"
)

// errWouldBlock is never returned where no lock is taken.
var errWouldBlock = errors.New("would block")

// tryLock takes no lock on systems without flock: two daemons in one
// directory are then the operator's to avoid.
func tryLock(*os.File) error { return nil }
