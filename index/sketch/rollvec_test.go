package sketch

import (
	"slices"
	"testing"
)

// computeScalar is Compute with rollPow2's scalar loops, whatever the
// processor.
func computeScalar(p Params, text []byte, s *Sketch) {
	defer func(v bool) { haveVec = v }(haveVec)
	haveVec = false
	Compute(p, text, s)
}

// sameAsScalar fails unless Compute's result for text equals that of the
// scalar loops, with fresh sketches and with the reused sketch s.
func sameAsScalar(t testing.TB, p Params, text []byte, s *Sketch) {
	t.Helper()
	var want Sketch
	computeScalar(p, text, &want)
	Compute(p, text, s)
	if !slices.Equal(s.Samples, want.Samples) || !slices.Equal(s.MinHash, want.MinHash) || s.SimHash != want.SimHash {
		t.Fatalf("params %+v, text of %d bytes %.40q: the vector loops differ from the scalar ones", p, len(text), text)
	}
}

// TestRollVecMatchesScalar compares rollPow2Vec with rollPow2's scalar
// loops on texts of every length around the block and group sizes, long
// texts that reach rollTopVec, and windows up to the largest.
func TestRollVecMatchesScalar(t *testing.T) {
	if !haveVec {
		t.Skip("no AVX-512: rollPow2Vec is not used")
	}
	params := []Params{
		DefaultParams(),
		{Window: 4, SampleN: 1, MinHashK: 1, Bands: 1, SimHashWords: 1},
		{Window: 5, SampleN: 2, MinHashK: 7, Bands: 7, SimHashWords: 2},
		{Window: 8, SampleN: 4, MinHashK: 3, Bands: 1, SimHashWords: 3},
		{Window: 63, SampleN: 64, MinHashK: 256, Bands: 32, SimHashWords: 5},
		{Window: 64, SampleN: 8, MinHashK: 1000, Bands: 10, SimHashWords: 3},
		{Window: 1024, SampleN: 65536, MinHashK: 4096, Bands: 64, SimHashWords: 4},
	}
	long := longText(7, 200_000)
	var s Sketch
	for _, p := range params {
		for n := 0; n < 3*block && p.MinHashK <= 1000; n += 1 + n/64 {
			// (densify takes MinHashK² steps on a short text.)
			sameAsScalar(t, p, long[:n], &s)
		}
		for _, n := range []int{block + p.Window - 1, block + p.Window, block + p.Window + 7, 20_000, len(long)} {
			sameAsScalar(t, p, long[:n], &s)
		}
	}
	for _, text := range corpusTexts(t) {
		sameAsScalar(t, DefaultParams(), text, &s)
	}
}

// FuzzRollVecMatchesScalar compares rollPow2Vec with the scalar loops on
// any text, window and power-of-two SampleN; the text is repeated to
// reach rollTopVec's part of the text too.
func FuzzRollVecMatchesScalar(f *testing.F) {
	f.Add([]byte("hello world, hello there"), uint16(20), uint8(4), uint8(7), uint16(1))
	f.Add([]byte("a  b\n\nc"), uint16(4), uint8(0), uint8(0), uint16(3000))
	f.Add(longText(8, 3000), uint16(1024), uint8(16), uint8(127), uint16(20))
	f.Fuzz(func(t *testing.T, text []byte, w uint16, logN, k uint8, reps uint16) {
		if !haveVec {
			t.Skip("no AVX-512: rollPow2Vec is not used")
		}
		p := DefaultParams()
		p.Window = int(w%1021) + 4
		p.SampleN = 1 << (logN % 17)
		p.MinHashK = int(k) + 1
		p.Bands = 1
		if len(text)*int(reps%64+1) <= 1<<16 {
			text = bytesRepeat(text, int(reps%64+1))
		}
		var s Sketch
		sameAsScalar(t, p, text, &s)
	})
}

func bytesRepeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for range n {
		out = append(out, b...)
	}
	return out
}

// FuzzRollVecKernel compares the assembly kernels buzGather and rollVec
// with their models buzGatherGo and rollVecGo on one block, reading the
// slots (top 0) or comparing with top: the table values, the hash, the
// samples and the pending shingles must be equal.
func FuzzRollVecKernel(f *testing.F) {
	f.Add(longText(9, 1100), uint16(20), uint16(128), uint8(4), uint64(1), uint16(3), uint32(0))
	f.Add([]byte("a b c d e f g h i j k l m n o p q r s t u v w x y z"), uint16(4), uint16(1), uint8(0), uint64(0), uint16(0), uint32(1<<28))
	f.Fuzz(func(t *testing.T, text []byte, w, k uint16, logN uint8, h uint64, seed uint16, top uint32) {
		if !haveVec {
			t.Skip("no AVX-512: rollVec is the model")
		}
		wi := int(w%1021) + 4
		if len(text) > block+wi {
			text = text[:block+wi]
		}
		n := (len(text) - wi) &^ 7
		if n <= 0 {
			return
		}
		tv, want := make([]uint64, len(text)), make([]uint64, len(text))
		g := len(text) &^ 7
		buzGather(&text[0], g, &buzTable, &tv[0])
		buzGatherGo(&text[0], len(text), &buzTable, &want[0])
		if !slices.Equal(tv[:g], want[:g]) {
			t.Fatalf("buzGather differs from buzGatherGo")
		}
		// Slots partly filled, so that some shingles are kept and some not.
		slots := make([]uint64, int(k%4096)+1)
		rnd := uint64(seed)
		for i := range slots {
			rnd = mix(rnd + 1)
			slots[i] = []uint64{empty, rnd >> 32, rnd >> 36, 0}[rnd%4]
		}
		mask := uint64(1)<<(logN%17) - 1<<8
		buf, pend := make([]uint32, n+8), make([]uint64, n+8)
		h1, nb1, np1 := rollVec(&want[0], n, wi, h, &slots[0], uint64(len(slots)), mask, &buf[0], 0, &pend[0], uint64(top))
		buf2, pend2 := make([]uint32, n+8), make([]uint64, n+8)
		h2, nb2, np2 := rollVecGo(&want[0], n, wi, h, &slots[0], uint64(len(slots)), mask, &buf2[0], 0, &pend2[0], uint64(top))
		if h1 != h2 || !slices.Equal(buf[:nb1], buf2[:nb2]) || !slices.Equal(pend[:np1], pend2[:np2]) {
			t.Fatalf("window %d, %d slots, %d shingles: rollVec (hash %x, %d samples, %d pending) differs from rollVecGo (%x, %d, %d)",
				wi, len(slots), n, h1, nb1, np1, h2, nb2, np2)
		}
	})
}

// FuzzWordVecKernel compares the assembly kernel wordVec with its model
// wordVecGo: the word hashes, the hash under way and whether the text
// ends in a word must be equal.
func FuzzWordVecKernel(f *testing.F) {
	f.Add([]byte("hello world, hello there  and\nnewline \n\n x"), uint64(0), false)
	f.Add(longText(10, 1100), uint64(0x1234), true)
	f.Fuzz(func(t *testing.T, text []byte, h uint64, inWord bool) {
		if !haveVec {
			t.Skip("no AVX-512: wordVec is the model")
		}
		n := min(len(text), block) &^ 7
		if n == 0 {
			return
		}
		in := b2u(inWord)
		if in == 0 {
			h = 0 // the hash under way is 0 outside a word
		}
		tv := make([]uint64, n)
		for x, c := range text[:n] {
			tv[x] = buzTable[c]
		}
		got, want := make([]uint64, n), make([]uint64, n)
		h1, w1, ne1 := wordVec(&text[0], &tv[0], n, h, in, &got[0], &wordMasks)
		h2, w2, ne2 := wordVecGo(&text[0], &tv[0], n, h, in, &want[0])
		if h1 != h2 || w1 != w2 || !slices.Equal(got[:ne1], want[:ne2]) {
			t.Fatalf("%d bytes %.40q: wordVec (hash %x, in word %d, %d words) differs from wordVecGo (%x, %d, %d)",
				n, text, h1, w1, ne1, h2, w2, ne2)
		}
	})
}

// TestSimHashVecMatchesScalar compares simHash with and without wordVec
// on texts of every length around the group size and long ones.
func TestSimHashVecMatchesScalar(t *testing.T) {
	if !haveVec {
		t.Skip("no AVX-512: wordVec is not used")
	}
	long := longText(11, 50_000)
	texts := [][]byte{long, []byte("  a\n\nb  "), bytesRepeat([]byte("ab "), 700), bytesRepeat([]byte(" "), 100)}
	for n := range 300 {
		texts = append(texts, long[:n])
	}
	for _, text := range texts {
		for w := 1; w <= 16; w += 3 {
			got := simHash(w, text)
			haveVec = false
			want := simHash(w, text)
			haveVec = true
			if got != want {
				t.Fatalf("words %d, text %.40q: simHash with wordVec %x, without %x", w, text, got, want)
			}
		}
	}
}

// FuzzFeatVecKernel compares the assembly kernel featVec with its model
// featVecGo on word hashes made from the fuzzer's bytes, repeated so that
// features recur, for every number of words per feature.
func FuzzFeatVecKernel(f *testing.F) {
	f.Add([]byte("hello world"), uint8(3), uint8(4))
	f.Add(longText(12, 2000), uint8(16), uint8(0))
	f.Fuzz(func(t *testing.T, seed []byte, words, reps uint8) {
		if !haveVec {
			t.Skip("no AVX-512: featVec is the model")
		}
		wd := int(words%16) + 1
		var hs []uint64
		for range int(reps%8) + 1 {
			for i := 0; i+8 <= len(seed); i += 3 {
				hs = append(hs, uint64(seed[i])<<56|uint64(seed[i+1])<<40|uint64(seed[i+7])^mix(uint64(seed[i+3])))
			}
		}
		hs = append(make([]uint64, wd-1), hs...)
		n := min(len(hs)-(wd-1), 255*8)
		if n <= 0 {
			return
		}
		hs = append(hs, make([]uint64, 8)...)
		var got, want [8][8]uint64
		featVec(&hs[wd-1], n, wd, &got)
		featVecGo(&hs[wd-1], n, wd, &want)
		if got != want {
			t.Fatalf("%d words of %d: featVec counts %x, featVecGo %x", n, wd, got, want)
		}
	})
}

// TestComputeScalarMatchesReference runs the reference comparisons with
// the scalar loops, which processors without AVX-512 use, whatever this
// one has.
func TestComputeScalarMatchesReference(t *testing.T) {
	defer func(v bool) { haveVec = v }(haveVec)
	haveVec = false
	texts := append(corpusTexts(t), longText(13, 100_000), longText(14, 9_000))
	for _, p := range []Params{
		DefaultParams(),
		{Window: 4, SampleN: 1, MinHashK: 1, Bands: 1, SimHashWords: 1},
		{Window: 64, SampleN: 64, MinHashK: 256, Bands: 32, SimHashWords: 16},
	} {
		for _, text := range texts {
			sameSketch(t, p, text)
		}
	}
}
