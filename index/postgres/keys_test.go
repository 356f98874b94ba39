package postgres

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/simdex/simdex/index"
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

// FuzzAnchorPosting checks that an anchor posting gives back its content
// and anchor count (capped at maxAnchorCount), that postings sort as their
// contents do, and that any stored value decodes.
func FuzzAnchorPosting(f *testing.F) {
	f.Add(int64(1), 3, int64(2), 0)
	f.Add(int64(1)<<42, maxAnchorCount+5, int64(7), 1)
	f.Fuzz(func(t *testing.T, c int64, n int, d int64, m int) {
		c, d = c&(1<<42-1), d&(1<<42-1)
		n, m = max(n, 0), max(m, 0)
		gotC, gotN := fromAnchorPosting(anchorPosting(index.ContentID(c), n))
		if int64(gotC) != c || gotN != min(n, maxAnchorCount) {
			t.Fatalf("(%d, %d) gave (%d, %d)", c, n, gotC, gotN)
		}
		if c != d && (c < d) != (anchorPosting(index.ContentID(c), n) < anchorPosting(index.ContentID(d), m)) {
			t.Fatalf("postings of %d and %d sort otherwise", c, d)
		}
		if v := c ^ d<<anchorBits; v >= 0 { // any stored value decodes to a content and a count
			if c, n := fromAnchorPosting(v); c < 0 || n < 0 || n > maxAnchorCount {
				t.Fatalf("%d gave (%d, %d)", v, c, n)
			}
		}
	})
}

// FuzzPostingList checks that unpackIDs reads any stored bytes without
// failing silently: a whole number of 8-byte values, or errPostingList,
// and that it reads back what packIDs wrote.
func FuzzPostingList(f *testing.F) {
	f.Add([]byte{})
	f.Add(packIDs([]int64{1, 1 << 40, -1}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := unpackIDs(nil, b)
		if len(b)%8 != 0 {
			if !errors.Is(err, errPostingList) {
				t.Fatalf("%d bytes: got %v, want errPostingList", len(b), err)
			}
			return
		}
		if err != nil || len(vals) != len(b)/8 {
			t.Fatalf("%d bytes gave %d values, %v", len(b), len(vals), err)
		}
		if again := packIDs(vals); !bytes.Equal(again, b) {
			t.Fatalf("round trip of %x gave %x", b, again)
		}
	})
}
