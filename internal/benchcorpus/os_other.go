//go:build !unix

package benchcorpus

import "time"

// lockFile does not lock where flock is missing: concurrent builds of one
// fixture are then the caller's to avoid.
func lockFile(string) (func(), error) { return func() {}, nil }

// CPUTime is not measured where getrusage is missing: it returns 0.
func CPUTime() time.Duration { return 0 }
