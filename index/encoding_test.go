package index

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestEncodingRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		fp   Fingerprint
	}{
		{"empty", Fingerprint{}},
		{"full", Fingerprint{
			Chunks:  []Chunk{{Hash: 1, Len: 300}, {Hash: 1<<63 + 5, Len: 8192}},
			Samples: []uint32{3, 9, 1 << 31},
			MinHash: []uint32{7, 7, 0, 1<<32 - 1},
		}},
		{"levels, 16 bits", Fingerprint{
			Chunks:      []Chunk{{Hash: 1, Len: 300}},
			Samples:     []uint32{0, 64, 3 << 6, 1<<32 - 64},
			MinHash:     []uint32{7, 0, 1<<16 - 1},
			MinHashBits: 16, SampleBase: 4, SampleLevel: 6,
		}},
		{"8 bits", Fingerprint{Samples: []uint32{3, 9}, MinHash: []uint32{255, 1}, MinHashBits: 8}},
		{"levels", Fingerprint{Samples: []uint32{16, 1 << 31}, MinHash: []uint32{1<<32 - 1}, SampleBase: 4, SampleLevel: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Fingerprint
			if err := got.DecodeBody(tc.fp.AppendBody(nil)); err != nil {
				t.Fatal(err)
			}
			if len(got.Chunks)+len(got.Samples)+len(got.MinHash) == 0 && len(tc.fp.Chunks)+len(tc.fp.Samples)+len(tc.fp.MinHash) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.fp) {
				t.Fatalf("round trip: got %+v want %+v", got, tc.fp)
			}
		})
	}
}

// TestBodyVersion: a fingerprint without sample levels or narrow slots
// keeps version 2 bodies, byte for byte those of earlier releases; the
// others are version 3, with their slots in two bytes each at 16 bits.
func TestBodyVersion(t *testing.T) {
	fp := Fingerprint{Samples: []uint32{16, 32}, MinHash: make([]uint32, 128)}
	v2 := fp.AppendBody(nil)
	if v2[0] != 2 {
		t.Fatalf("version %d, want 2", v2[0])
	}
	fp.MinHashBits = 16
	v3 := fp.AppendBody(nil)
	if v3[0] != 3 || len(v3) != len(v2)+3-256 {
		t.Fatalf("16 bits: version %d, %d bytes, want 3 and %d", v3[0], len(v3), len(v2)+3-256)
	}
	fp.MinHashBits, fp.SampleBase, fp.SampleLevel = 0, 4, 4
	if v3 := fp.AppendBody(nil); v3[0] != 3 {
		t.Fatalf("levels: version %d, want 3", v3[0])
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := (&Fingerprint{Chunks: []Chunk{{Hash: 1, Len: 2}}, Samples: []uint32{1, 2}, MinHash: []uint32{1}}).AppendBody(nil)
	v3 := (&Fingerprint{Samples: []uint32{16, 32}, MinHash: []uint32{1}, MinHashBits: 16, SampleBase: 4, SampleLevel: 4}).AppendBody(nil)
	badLevel := slices.Clone(v3)
	badLevel[3] = 8 // level 8 over base 4
	badWidth := slices.Clone(v3)
	badWidth[len(v3)-4] = 12
	tests := map[string][]byte{
		"v3 level":     badLevel,
		"v3 width":     badWidth,
		"v3 truncated": v3[:len(v3)-1],
		"empty":        nil,
		"bad version":  {9},
		"truncated":    good[:len(good)-2],
		"trailing":     append(append([]byte{}, good...), 0),
		"huge count":   {encodingVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"unsorted":     (&Fingerprint{Samples: []uint32{5, 1}}).AppendBody(nil),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			var fp Fingerprint
			if err := fp.DecodeBody(b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add((&Fingerprint{Chunks: []Chunk{{Hash: 1, Len: 2}}, Samples: []uint32{1, 2}, MinHash: []uint32{1}}).AppendBody(nil))
	f.Add([]byte{encodingVersion, 0, 0, 0})
	f.Add((&Fingerprint{Samples: []uint32{16, 48, 1 << 31}, MinHash: []uint32{1, 1<<16 - 1}, MinHashBits: 16, SampleBase: 4, SampleLevel: 4}).AppendBody(nil))
	f.Add((&Fingerprint{Chunks: []Chunk{{Hash: 1, Len: 2}}, Samples: []uint32{128}, MinHash: []uint32{255}, MinHashBits: 8, SampleBase: 4, SampleLevel: 7}).AppendBody(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fp Fingerprint
		if err := fp.DecodeBody(b); err != nil {
			return
		}
		var again Fingerprint
		if err := again.DecodeBody(fp.AppendBody(nil)); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.MinHashBits != fp.MinHashBits || again.SampleLevel != fp.SampleLevel || again.SampleBase != fp.SampleBase ||
			!slices.Equal(again.Samples, fp.Samples) || !slices.Equal(again.MinHash, fp.MinHash) || !slices.Equal(again.Chunks, fp.Chunks) {
			t.Fatalf("re-decoded differently")
		}
	})
}

// TestSamplesPacked: samples round-trip through Elias–Fano at every count
// from one to a few thousand, extremes included, in about l+2 bits each.
func TestSamplesPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7, 8, 9, 255, 256, 257, 437, 1000, 4096, 70000} {
		seen := map[uint32]bool{}
		var s []uint32
		for _, v := range []uint32{0, 1<<32 - 1} {
			if len(s) < n {
				seen[v], s = true, append(s, v)
			}
		}
		for len(s) < n {
			if v := r.Uint32(); !seen[v] {
				seen[v], s = true, append(s, v)
			}
		}
		slices.Sort(s)
		fp := Fingerprint{Samples: s}
		b := fp.AppendBody(nil)
		var got Fingerprint
		if err := got.DecodeBody(b); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !slices.Equal(got.Samples, s) {
			t.Fatalf("n=%d: samples differ", n)
		}
		if bitsPer := float64(len(b)*8) / float64(n); n >= 256 && bitsPer > float64(lowBits(n, 32))+3.5 {
			t.Errorf("n=%d: %.1f bits per sample, want about %d", n, bitsPer, lowBits(n, 32)+2)
		}
	}
}

// TestDecodeVersion1: bodies written before the samples were packed (4
// bytes each) are still read.
func TestDecodeVersion1(t *testing.T) {
	b := []byte{1, 1}                                 // version 1, one chunk
	b = binary.LittleEndian.AppendUint64(b, 42)       // its hash
	b = append(b, 100, 3)                             // its length; three samples
	for _, s := range []uint32{5, 70000, 1<<32 - 1} { // 4 bytes each
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 9) // one MinHash slot
	var fp Fingerprint
	if err := fp.DecodeBody(b); err != nil {
		t.Fatal(err)
	}
	want := Fingerprint{Chunks: []Chunk{{Hash: 42, Len: 100}}, Samples: []uint32{5, 70000, 1<<32 - 1}, MinHash: []uint32{9}}
	if !reflect.DeepEqual(fp, want) {
		t.Fatalf("got %+v, want %+v", fp, want)
	}
}

// BenchmarkDecodeBody decodes the body of a 7 KB text's fingerprint (6
// chunks, 440 samples, 128 MinHash slots): every candidate a query or an
// analysis scores is decoded once.
func BenchmarkDecodeBody(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	fp := Fingerprint{MinHash: make([]uint32, 128)}
	for range 6 {
		fp.Chunks = append(fp.Chunks, Chunk{Hash: r.Uint64(), Len: 1200})
	}
	for range 440 {
		fp.Samples = append(fp.Samples, r.Uint32())
	}
	slices.Sort(fp.Samples)
	fp.Samples = slices.Compact(fp.Samples)
	body := fp.AppendBody(nil)
	var got Fingerprint
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := got.DecodeBody(body); err != nil {
			b.Fatal(err)
		}
	}
}
