package postgres

import (
	"slices"
	"testing"
)

// FuzzKeys checks that decodeKeys reads any stored bytes without failing,
// a whole number of keys, and that it reads back what encodeKeys wrote.
func FuzzKeys(f *testing.F) {
	f.Add([]byte{})
	f.Add(encodeKeys([]uint64{1, 1 << 63, 42}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := decodeKeys(b)
		if len(keys) != len(b)/8 {
			t.Fatalf("%d bytes gave %d keys", len(b), len(keys))
		}
		if again := decodeKeys(encodeKeys(keys)); !slices.Equal(again, keys) {
			t.Fatalf("round trip of %v gave %v", keys, again)
		}
	})
}
