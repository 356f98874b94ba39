package normalise

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// foldASCIIRef is foldASCII one byte at a time: the general path that the
// word-at-a-time fast path must match.
func foldASCIIRef(out, src []byte, space bool) (n, e, k int, _ bool) {
	k = asciiPrefix(src)
	e = k
	if k < len(src) && k > 0 {
		e = k - 1
	}
	n, space = foldBytes(out, 0, src[:e], space)
	return n, e, k, space
}

func sameFold(t *testing.T, src []byte, space bool) {
	t.Helper()
	got, want := make([]byte, len(src)), make([]byte, len(src))
	n, e, k, sp := foldASCII(got, src, space)
	wn, we, wk, wsp := foldASCIIRef(want, src, space)
	if n != wn || e != we || k != wk || sp != wsp || !bytes.Equal(got[:n], want[:wn]) {
		t.Fatalf("foldASCII(%q, %v) = %q, e %d, k %d, space %v; want %q, %d, %d, %v",
			src, space, got[:n], e, k, sp, want[:wn], we, wk, wsp)
	}
}

// foldAlphabet maps fuzz bytes to the bytes that matter to foldASCII:
// letters of both cases, the spaces and controls it collapses, the edges
// of its ranges, and now and then a non-ASCII byte.
func foldAlphabet(data []byte) []byte {
	const alphabet = "aZ AZ@[`{ \n\t\x00\x1f\x20\x21\x7e\x7f.,xyzXYZ   \n\n"
	out := make([]byte, len(data))
	for i, c := range data {
		switch {
		case c >= 0xf8:
			out[i] = 0x80 | c&0x3f
		default:
			out[i] = alphabet[int(c)%len(alphabet)]
		}
	}
	return out
}

// TestFoldASCII checks the fast path of foldASCII against the byte at a
// time one around every word boundary: a run of spaces, an upper-case
// letter or a non-ASCII byte at each position of texts of every length up
// to three 16-byte blocks.
func TestFoldASCII(t *testing.T) {
	base := []byte("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV")
	for n := 0; n <= 50; n++ {
		for _, space := range []bool{false, true} {
			sameFold(t, base[:n], space)
			for i := 0; i < n; i++ {
				for _, ins := range []string{" ", "  ", "\n\n\n", "\x7f", "Q", "\xc3\xa9", "\x80", "         "} {
					src := append(append(append([]byte(nil), base[:i]...), ins...), base[i:n]...)
					sameFold(t, src, space)
					sameFold(t, bytes.ReplaceAll(src, []byte("b"), []byte(" ")), space)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(13, 14))
	for range 2000 {
		data := make([]byte, r.IntN(300))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		sameFold(t, foldAlphabet(data), r.IntN(2) == 0)
	}
}

// FuzzFoldASCII compares foldASCII with the byte at a time reference, on
// the fuzzer's bytes as they are and mapped to the bytes that matter.
func FuzzFoldASCII(f *testing.F) {
	f.Add([]byte("The Quick  brown\tfox.\n\nover the lazy dog, it was not amused"), true)
	f.Add([]byte("abcdefghijklmnopQ        rstuvwxyz\xc3\xa9"), false)
	f.Fuzz(func(t *testing.T, data []byte, space bool) {
		sameFold(t, data, space)
		sameFold(t, foldAlphabet(data), space)
	})
}
