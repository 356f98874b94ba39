package sketch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// longText returns about n bytes of English-like text: words of a
// vocabulary large enough that shingles rarely repeat, with some repeated
// sentences, separated by spaces and newlines.
func longText(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	var b bytes.Buffer
	var sentences []string
	for b.Len() < n {
		if len(sentences) > 0 && r.IntN(8) == 0 {
			b.WriteString(sentences[r.IntN(len(sentences))])
			continue
		}
		var s strings.Builder
		for range 5 + r.IntN(15) {
			fmt.Fprintf(&s, "w%x ", r.IntN(5000))
		}
		s.WriteString("end.\n")
		sentences = append(sentences, s.String())
		b.WriteString(s.String())
	}
	return b.Bytes()
}

// TestComputeMatchesReferenceLong compares Compute with the reference on
// texts long enough for the main loop to switch from updating every slot
// to testing the largest slot first (after fillPerSlot*MinHashK shingles),
// for several slot counts, and on short texts that never switch.
func TestComputeMatchesReferenceLong(t *testing.T) {
	texts := [][]byte{longText(1, 300_000), longText(2, 20_000), longText(3, 3_000)}
	params := []Params{
		DefaultParams(),
		{Window: 4, SampleN: 1, MinHashK: 1, Bands: 1, SimHashWords: 1},
		{Window: 8, SampleN: 2, MinHashK: 7, Bands: 7, SimHashWords: 2},
		{Window: 20, SampleN: 16, MinHashK: 1000, Bands: 10, SimHashWords: 3},
		{Window: 64, SampleN: 64, MinHashK: 256, Bands: 32, SimHashWords: 16},
		{Window: 1024, SampleN: 32, MinHashK: 4096, Bands: 64, SimHashWords: 4},
	}
	for _, p := range params {
		for _, text := range texts {
			sameSketch(t, p, text)
		}
	}
}

// TestComputeReusesState checks that a Sketch used with other parameters
// and texts before gives the same result as a new one.
func TestComputeReusesState(t *testing.T) {
	texts := [][]byte{longText(4, 50_000), []byte("a b c"), longText(5, 2_000), nil, longText(6, 12_000)}
	params := []Params{
		DefaultParams(),
		{Window: 7, SampleN: 12, MinHashK: 100, Bands: 10, SimHashWords: 2},
		{Window: 64, SampleN: 64, MinHashK: 256, Bands: 32, SimHashWords: 5},
		{Window: 4, SampleN: 1, MinHashK: 1, Bands: 1, SimHashWords: 1},
	}
	var reused Sketch
	for i := range 3 * len(texts) {
		p, text := params[i%len(params)], texts[i%len(texts)]
		var fresh Sketch
		Compute(p, text, &fresh)
		Compute(p, text, &reused)
		if !slices.Equal(fresh.Samples, reused.Samples) || !slices.Equal(fresh.MinHash, reused.MinHash) || fresh.SimHash != reused.SimHash {
			t.Fatalf("run %d, params %+v: a reused Sketch differs from a new one", i, p)
		}
	}
}

func BenchmarkComputeShort(b *testing.B) {
	var texts [][]byte
	var n int64
	for i := range 100 {
		texts = append(texts, longText(uint64(i), 1000+100*i))
		n += int64(len(texts[i]))
	}
	b.SetBytes(n)
	var s Sketch
	for b.Loop() {
		for _, t := range texts {
			Compute(DefaultParams(), t, &s)
		}
	}
}

// TestSimHashStreams compares simHash with the reference on texts whose
// separators fall everywhere around the middle and the ends of blocks,
// where simState.hash splits a block between wordHashes2's two streams,
// or cannot.
func TestSimHashStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	var texts [][]byte
	for range 200 {
		text := bytes.Repeat([]byte("x"), 1+r.IntN(4*block))
		for range r.IntN(40) {
			text[r.IntN(len(text))] = " \n"[r.IntN(2)]
		}
		// A separator near the middle or the end of a block.
		for range 3 {
			at := r.IntN(4)*block + r.IntN(2)*block/2 + r.IntN(5) - 2
			if at >= 0 && at < len(text) {
				text[at] = ' '
			}
		}
		texts = append(texts, text)
	}
	texts = append(texts, longText(7, 5*block), bytes.Repeat([]byte(" "), 3*block), bytes.Repeat([]byte("ab "), block))
	for _, text := range texts {
		for _, w := range []int{1, 2, 3, 16} {
			if got, want := simHash(w, text), simHashRef(w, text); got != want {
				t.Fatalf("words %d, text of %d bytes: simHash %x, want %x", w, len(text), got, want)
			}
		}
	}
}
