package sketch

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simdex/simdex/internal/corpustest"
)

// corpusTexts returns real texts from the committed fixtures
// (testdata/corpora) and some edge cases. The corpora are not normalised, which only
// makes the inputs more varied.
func corpusTexts(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pat := range []string{"spdx/text/*.txt", "gomod-licenses/*/*", "licenseclassifier/*/*"} {
		fs, _ := filepath.Glob(filepath.Join(corpustest.Fixtures(), pat))
		if len(fs) > 40 {
			fs = fs[:40]
		}
		for _, f := range fs {
			if b, err := os.ReadFile(f); err == nil {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		t.Log("no corpus texts found; testing synthetic input only")
	}
	r := rand.New(rand.NewPCG(9, 10))
	rnd := make([]byte, 5000)
	for i := range rnd {
		rnd[i] = " \nab\x00\xff"[r.IntN(6)]
	}
	return append(out, rnd, []byte(""), []byte("x"), []byte(" "), []byte("a b"), []byte("a b c d"),
		[]byte("  leading and trailing  \n"), bytes.Repeat([]byte("w "), 3000), bytes.Repeat([]byte("a"), 3000),
		bytes.Repeat([]byte(" "), 3000))
}

func sameSketch(t testing.TB, p Params, text []byte) {
	t.Helper()
	var got, want Sketch
	Compute(p, text, &got)
	computeRef(p, text, &want)
	if !slices.Equal(got.Samples, want.Samples) || !slices.Equal(got.MinHash, want.MinHash) || got.SimHash != want.SimHash || got.Level != want.Level {
		t.Fatalf("params %+v, text of %d bytes %.40q: Compute differs from the reference (simhash %x, want %x)",
			p, len(text), text, got.SimHash, want.SimHash)
	}
}

func TestComputeMatchesReference(t *testing.T) {
	texts := corpusTexts(t)
	params := []Params{
		DefaultParams(),
		{Window: 4, SampleN: 1, MinHashK: 1, Bands: 1, SimHashWords: 1},
		{Window: 7, SampleN: 12, MinHashK: 100, Bands: 10, SimHashWords: 2},
		{Window: 64, SampleN: 64, MinHashK: 256, Bands: 32, SimHashWords: 5},
		{Window: 65, SampleN: 3, MinHashK: 128, Bands: 32, SimHashWords: 16},
		{Window: 1024, SampleN: 65536, MinHashK: 4096, Bands: 64, SimHashWords: 4},
		{Window: 20, SampleN: 16, MinHashK: 128, Bands: 32, SimHashWords: 3, MinHashBits: 16, SampleFloor: 64},
		{Window: 20, SampleN: 8, MinHashK: 128, Bands: 32, SimHashWords: 3, MinHashBits: 32, SampleFloor: 8},
	}
	for _, p := range params {
		for _, text := range texts {
			sameSketch(t, p, text)
		}
	}
}

func TestSimHashMatchesReference(t *testing.T) {
	for _, text := range corpusTexts(t) {
		for w := 1; w <= 16; w++ {
			if got, want := simHash(w, text), simHashRef(w, text); got != want {
				t.Fatalf("words %d, text %.40q: simHash %x, want %x", w, text, got, want)
			}
		}
	}
}

func FuzzComputeMatchesReference(f *testing.F) {
	f.Add([]byte("hello world, hello there"), uint8(20), uint8(16), uint8(3))
	f.Add([]byte("a  b\n\nc"), uint8(4), uint8(5), uint8(1))
	f.Add([]byte("a longer text whose samples are thinned to a floor of a few"), uint8(4), uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, text []byte, w, n, words uint8) {
		p := DefaultParams()
		p.Window = int(w%70) + 4
		p.SampleN = int(n) + 1
		p.SimHashWords = int(words%16) + 1
		if words%2 == 0 && p.SampleN&(p.SampleN-1) == 0 && p.SampleN <= 1<<12 {
			p.SampleFloor = int(words) + 1
		}
		sameSketch(t, p, text)
	})
}
