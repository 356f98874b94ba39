package extract

import (
	"bytes"
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/corpustest"
)

// cpuTime returns the user and system CPU time of the process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPST measures mailbox extraction in MB/s of mailbox (wall) and
// MB/cpu-s (per core): the two fixtures read in place (bytes.Reader, as
// from a file), and the Unicode one read from a stream, which spools it to
// disk first.
func BenchmarkPST(b *testing.B) {
	for _, bc := range []struct {
		name, file string
		stream     bool
	}{
		{"support", "support.pst", false},
		{"32-bit", "32-bit.pst", false},
		{"support-spooled", "support.pst", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := corpustest.ReadFrom(b, corpustest.Dir(b), "outlook/"+bc.file)
			x := newPSTExtractor(b, DefaultLimits(), b.TempDir())
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				var r io.Reader = bytes.NewReader(data)
				if bc.stream {
					r = onlyReader{r}
				}
				d, err := x.Extract(context.Background(), Object{Name: bc.file, Reader: r})
				if err != nil || len(d.Children) == 0 {
					b.Fatalf("%v, %d items", err, len(d.Children))
				}
			}
			// On a shared machine wall time counts other processes too:
			// MB per CPU-second of this process is the rate per core.
			b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime(b)-cpu).Seconds(), "MB/cpu-s")
		})
	}
}
