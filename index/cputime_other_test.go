//go:build !unix

package index_test

import "time"

// cpuTime is 0: the CPU-second figure is reported on Unix only.
func cpuTime() time.Duration { return 0 }
