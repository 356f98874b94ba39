package extract

import (
	"bytes"
	"context"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/corpustest"
)

// BenchmarkLegacy measures the throughput of the DOC, XLS, PPT and MSG
// readers on the fixtures (MB/s of input bytes, one object at a time):
//
//	go test -run '^$' -bench '^BenchmarkLegacy$' -cpu 1 ./extract/
func BenchmarkLegacy(b *testing.B) {
	x := newTestExtractor(b, DefaultLimits())
	files := []string{}
	for _, fx := range legacyFixtures {
		files = append(files, fx.file)
	}
	inputs := map[string][]byte{}
	for _, f := range files {
		inputs[f] = readLegacy(b, f)
	}
	for _, name := range []string{"strangeDate.msg", "unicode.msg"} {
		files = append(files, name)
		inputs[name] = readFileB(b, path.Join(corpustest.Dir(b), "outlook", name))
	}
	for _, f := range files {
		data := inputs[f]
		name := strings.TrimSuffix(f, ".gz")
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d, err := x.Extract(context.Background(), Object{Name: name, Reader: bytes.NewReader(data)})
				if err != nil || d.Text == "" {
					b.Fatalf("%v, %d bytes of text", err, len(d.Text))
				}
			}
		})
	}
}

func readFileB(b *testing.B, name string) []byte {
	b.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
