package index

import (
	"errors"
	"reflect"
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

func TestDecodeCorrupt(t *testing.T) {
	good := (&Fingerprint{Chunks: []Chunk{{Hash: 1, Len: 2}}, Samples: []uint32{1, 2}, MinHash: []uint32{1}}).AppendBody(nil)
	tests := map[string][]byte{
		"empty":       nil,
		"bad version": {9},
		"truncated":   good[:len(good)-2],
		"trailing":    append(append([]byte{}, good...), 0),
		"huge count":  {encodingVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"unsorted":    (&Fingerprint{Samples: []uint32{5, 1}}).AppendBody(nil),
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
	f.Fuzz(func(t *testing.T, b []byte) {
		var fp Fingerprint
		if err := fp.DecodeBody(b); err != nil {
			return
		}
		var again Fingerprint
		if err := again.DecodeBody(fp.AppendBody(nil)); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
