package peers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	cdc "github.com/PlakarKorp/go-cdc-chunkers"
	_ "github.com/PlakarKorp/go-cdc-chunkers/chunkers/fastcdc"
	minhashlsh "github.com/ekzhu/minhash-lsh"
	"github.com/glaslos/tlsh"
	fastcdc "github.com/jotfs/fastcdc-go"
	"github.com/mfonda/simhash"
	"github.com/restic/chunker"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/chunk"
	"github.com/simdex/simdex/index/sketch"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/corpustest"
)

// Every contender chunks or sketches each document of docs() in turn, as
// an indexer does, reusing what its API lets it reuse; b.SetBytes is the
// corpus size, so MB/s are comparable across contenders.
//
// Besides the wall-clock MB/s, each benchmark reports cpu-MB/s: bytes per
// second of the process's CPU time (user and system, every thread, so the
// garbage collector's work counts). On a shared machine wall time also
// counts the time other processes held the core; CPU time is what the
// code costs on one core, which is what the targets are about.

// cpuClock is the process's CPU time when a measurement started.
type cpuClock time.Duration

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock(cpuTime()) }

// seconds returns the CPU seconds spent since c started.
func (c cpuClock) seconds() float64 { return (cpuTime() - time.Duration(c)).Seconds() }

// report records bytes per iteration as cpu-MB/s.
func (c cpuClock) report(b *testing.B, bytes int64) {
	b.ReportMetric(float64(bytes)*float64(b.N)/c.seconds()/1e6, "cpu-MB/s")
}

// chunkParams are simdex's defaults; every chunker gets the same minimum,
// average and maximum so that they cut the same number of chunks.
var chunkParams = index.DefaultOptions().Chunk

// resticPol is the polynomial of restic/chunker's own tests.
const resticPol = chunker.Pol(0x3DA3358B4DC173)

type chunkFunc func(doc []byte) (chunks int)

// chunkers are the contenders of BenchmarkChunker, by sub-benchmark name.
func chunkers(tb testing.TB) []struct {
	name string
	fn   chunkFunc
} {
	p := chunkParams
	var dst []chunk.Chunk
	rc := chunker.NewWithBoundaries(nil, resticPol, uint(p.Min), uint(p.Max))
	rbuf := make([]byte, p.Max)
	var rd bytes.Reader
	pc, err := cdc.NewChunker("fastcdc-v1.0.0", &rd, &cdc.ChunkerOpts{MinSize: p.Min, NormalSize: p.Avg, MaxSize: p.Max})
	if err != nil {
		tb.Fatal(err)
	}
	return []struct {
		name string
		fn   chunkFunc
	}{
		{"simdex-cut", func(doc []byte) int {
			// Boundaries only, like the peers.
			n := 0
			for d := doc; len(d) > 0; n++ {
				d = d[chunk.Cut(p, d):]
			}
			return n
		}},
		{"simdex-append", func(doc []byte) int {
			// What the fingerprint uses: boundaries and the XXH64 of each chunk.
			dst = chunk.Append(p, dst[:0], doc)
			return len(dst)
		}},
		{"restic", func(doc []byte) int {
			rd.Reset(doc)
			rc.ResetWithBoundaries(&rd, resticPol, uint(p.Min), uint(p.Max))
			rc.SetAverageBits(10) // Avg 1024; Reset sets it back to 1 MiB
			n := 0
			for {
				c, err := rc.Next(rbuf)
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					tb.Fatal(err)
				}
				rbuf = c.Data
				n++
			}
		}},
		{"jotfs-fastcdc", func(doc []byte) int {
			rd.Reset(doc)
			c, err := fastcdc.NewChunker(&rd, fastcdc.Options{MinSize: p.Min, AverageSize: p.Avg, MaxSize: p.Max})
			if err != nil {
				tb.Fatal(err)
			}
			n := 0
			for {
				_, err := c.Next()
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					tb.Fatal(err)
				}
				n++
			}
		}},
		{"plakar-fastcdc", func(doc []byte) int {
			rd.Reset(doc)
			pc.Reset(&rd)
			n := 0
			for {
				c, err := pc.Next()
				if len(c) > 0 {
					n++
				}
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					tb.Fatal(err)
				}
			}
		}},
	}
}

// BenchmarkChunker measures content-defined chunking (Min 256, Avg 1024,
// Max 8192 for every contender) and reports the mean chunk length, which
// must be alike for the comparison to be fair.
func BenchmarkChunker(b *testing.B) {
	ds, size := docs(b)
	for _, c := range chunkers(b) {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			n := 0
			clk := startCPU()
			for b.Loop() {
				n = 0
				for _, d := range ds {
					n += c.fn(d)
				}
			}
			clk.report(b, size)
			b.ReportMetric(float64(size)/float64(n), "B/chunk")
			b.ReportMetric(float64(len(ds)), "docs")
			b.ReportMetric(float64(size)/1e6, "corpus-MB")
		})
	}
}

// shingleWords calls fn with every run of k consecutive words of the
// normalised text (words are separated by one space or newline), as a
// slice of text.
func shingleWords(text []byte, k int, fn func([]byte)) {
	var starts, ends [16]int
	n := 0
	i := 0
	for i < len(text) {
		for i < len(text) && (text[i] == ' ' || text[i] == '\n') {
			i++
		}
		if i == len(text) {
			break
		}
		s := i
		for i < len(text) && text[i] != ' ' && text[i] != '\n' {
			i++
		}
		starts[n%k], ends[n%k] = s, i
		n++
		if n >= k {
			fn(text[starts[n%k]:ends[(n-1)%k]])
		}
	}
}

// BenchmarkMinHash measures MinHash sketching of each document. simdex's
// sketch.Compute makes the 128-slot MinHash together with the Mod-n
// samples and the SimHash in one pass (it has no MinHash-only entry
// point). ekzhu/minhash-lsh is used as its README and tests do, with 128
// hash functions, pushing each shingle: once with simdex's 20-byte
// shingles (the same set), once with 3-word shingles (about six times
// fewer pushes, its cheapest sensible use).
func BenchmarkMinHash(b *testing.B) {
	ds, size := docs(b)
	p := index.DefaultOptions().Sketch
	b.Run("simdex", func(b *testing.B) {
		var s sketch.Sketch
		eachDoc(b, ds, size, func(d []byte) {
			sketch.Compute(p, d, &s)
		})
	})
	b.Run("ekzhu-bytes20", func(b *testing.B) {
		eachDoc(b, ds, size, func(d []byte) {
			m := minhashlsh.NewMinhash(1, p.MinHashK)
			w := p.Window
			if len(d) < w {
				w = len(d)
			}
			for i := 0; i+w <= len(d); i++ {
				m.Push(d[i : i+w])
			}
			_ = m.Signature()
		})
	})
	b.Run("ekzhu-words3", func(b *testing.B) {
		eachDoc(b, ds, size, func(d []byte) {
			m := minhashlsh.NewMinhash(1, p.MinHashK)
			shingleWords(d, p.SimHashWords, m.Push)
			_ = m.Signature()
		})
	})
}

// BenchmarkSimHash measures 64-bit SimHash of each document: simdex's
// sketch.Compute (which also makes the MinHash and the samples) against
// mfonda/simhash used as its README does (word features).
func BenchmarkSimHash(b *testing.B) {
	ds, size := docs(b)
	p := index.DefaultOptions().Sketch
	b.Run("simdex", func(b *testing.B) {
		var s sketch.Sketch
		eachDoc(b, ds, size, func(d []byte) {
			sketch.Compute(p, d, &s)
		})
	})
	b.Run("mfonda-words", func(b *testing.B) {
		eachDoc(b, ds, size, func(d []byte) {
			_ = simhash.Simhash(simhash.NewWordFeatureSet(d))
		})
	})
}

// BenchmarkFingerprint measures whole-document fingerprints: simdex's full
// fingerprint (index.Index.Fingerprint: normalisation, SHA-256 of the
// text, chunks with their hashes, samples, MinHash and SimHash) against
// glaslos/tlsh's TLSH, another whole-document similarity digest.
func BenchmarkFingerprint(b *testing.B) {
	ds, size := docs(b)
	b.Run("simdex", func(b *testing.B) {
		ctx := context.Background()
		opts := index.DefaultOptions()
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "index.db"), sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		ix, err := index.New(ctx, st, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		sums := make([][32]byte, len(ds))
		for i, d := range ds {
			sums[i] = sha256.Sum256(d)
		}
		b.SetBytes(size)
		clk := startCPU()
		for b.Loop() {
			for i, d := range ds {
				if _, err := ix.Fingerprint(sums[i], int64(len(d)), d); err != nil {
					b.Fatal(err)
				}
			}
		}
		clk.report(b, size)
	})
	b.Run("glaslos-tlsh", func(b *testing.B) {
		eachDoc(b, ds, size, func(d []byte) {
			// TLSH refuses inputs under 50 bytes or without enough
			// variety; the time spent on them still counts.
			_, _ = tlsh.HashBytes(d)
		})
	})
}

// hammingN is the number of stored SimHashes scanned per query.
const hammingN = 1 << 20

// hammingMax is the distance searched: index.Options.CandidateHamming's
// default.
var hammingMax = index.DefaultOptions().CandidateHamming

// BenchmarkHamming scans hammingN stored 64-bit SimHashes for those within
// hammingMax bits of a query. simdex's is sketch.Near, the scan the
// index's in-memory SimHash table runs under a read lock for every query;
// the peer is a loop over mfonda/simhash.Compare. It reports comparisons
// per second (and MB/s of stored hashes).
func BenchmarkHamming(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	hashes := make([]uint64, hammingN)
	for i := range hashes {
		hashes[i] = r.Uint64()
	}
	// A few true neighbours, so that the scan has something to find.
	q := r.Uint64()
	for i := 0; i < hammingN; i += hammingN / 16 {
		hashes[i] = q ^ 1<<(i%64) ^ 1<<((i/7)%64)
	}
	report := func(b *testing.B, clk cpuClock, found int) {
		b.ReportMetric(float64(hammingN)*float64(b.N)/b.Elapsed().Seconds(), "cmp/s")
		b.ReportMetric(float64(hammingN)*float64(b.N)/clk.seconds(), "cpu-cmp/s")
		b.ReportMetric(float64(found), "found/op")
	}
	b.Run("simdex-Near", func(b *testing.B) {
		var dst []int32
		b.SetBytes(8 * hammingN)
		clk := startCPU()
		for b.Loop() {
			dst = sketch.Near(hashes, q, hammingMax, dst[:0])
		}
		report(b, clk, len(dst))
	})
	b.Run("mfonda-Compare", func(b *testing.B) {
		var dst []int32
		b.SetBytes(8 * hammingN)
		clk := startCPU()
		for b.Loop() {
			dst = dst[:0]
			for i, h := range hashes {
				if int(simhash.Compare(h, q)) <= hammingMax {
					dst = append(dst, int32(i))
				}
			}
		}
		report(b, clk, len(dst))
	})
}

// TestChunkersCoverInput checks that every chunker contender consumes each
// document whole and cuts about as many chunks as simdex.
func TestChunkersCoverInput(t *testing.T) {
	corpustest.Suite(t)
	ds, size := docs(t)
	counts := map[string]int{}
	for _, c := range chunkers(t) {
		for _, d := range ds[:50] {
			counts[c.name] += c.fn(d)
		}
	}
	want := counts["simdex-cut"]
	if counts["simdex-append"] != want {
		t.Errorf("simdex-append cut %d chunks, simdex-cut %d", counts["simdex-append"], want)
	}
	for name, n := range counts {
		if n < want/2 || n > want*2 {
			t.Errorf("%s cut %d chunks, simdex %d: parameters differ", name, n, want)
		}
	}
	t.Logf("chunks in the first 50 documents: %v (corpus %d bytes)", counts, size)
}

// TestShingleWords checks the 3-word shingles fed to ekzhu/minhash-lsh.
func TestShingleWords(t *testing.T) {
	var got []string
	shingleWords([]byte(" a bb\nccc d "), 3, func(s []byte) { got = append(got, string(s)) })
	want := []string{"a bb\nccc", "bb\nccc d"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("shingleWords = %q, want %q", got, want)
	}
}

// eachDoc runs fn over every document per benchmark iteration, one at a
// time as an indexer does, and reports MB/s of CPU time beside wall time.
func eachDoc(b *testing.B, ds [][]byte, size int64, fn func(d []byte)) {
	b.SetBytes(size)
	clk := startCPU()
	for b.Loop() {
		for _, d := range ds {
			fn(d)
		}
	}
	clk.report(b, size)
}
