//go:build unix

package index_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, every thread, so
// that a benchmark can report its speed per CPU-second, which other
// processes on a shared machine do not depress.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
