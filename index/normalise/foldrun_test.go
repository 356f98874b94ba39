package normalise

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// sameFoldRun fails unless foldRun gives the same output, length and prev
// with foldRunVec as without.
func sameFoldRun(t *testing.T, src []byte, prev uint64) {
	t.Helper()
	if len(src) == 0 {
		return
	}
	got, want := make([]byte, len(src)), make([]byte, len(src))
	n, p := foldRun(got, src, prev)
	haveFoldVec = false
	wn, wp := foldRun(want, src, prev)
	haveFoldVec = true
	if n != wn || p != wp || !bytes.Equal(got[:n], want[:wn]) {
		t.Fatalf("foldRun(%q, %#x) = %q, prev %#x with foldRunVec; %q, %#x without", src, prev, got[:n], p, want[:wn], wp)
	}
}

// runAlphabet maps fuzz bytes to text that foldRun folds for long
// stretches: mostly letters of both cases and single spaces, and now and
// then what stops it (two spaces, a control, a non-ASCII byte).
func runAlphabet(data []byte) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzAZ@[`{ .,0189 \t"
	out := make([]byte, len(data))
	for i, c := range data {
		switch {
		case c >= 0xfc:
			out[i] = 0x80 | c&0x3f
		case c >= 0xf8:
			out[i] = "  \x7f\n"[c&3]
		default:
			out[i] = alphabet[int(c)%len(alphabet)]
		}
	}
	return out
}

// TestFoldRunVec compares foldRun with and without foldRunVec around its
// 64-byte steps: what stops it at every position of texts up to four
// steps long.
func TestFoldRunVec(t *testing.T) {
	if !haveFoldVec {
		t.Skip("no AVX-512: foldRunVec is not used")
	}
	base := bytes.Repeat([]byte("The quick Brown fox jumps over the LAZY dog. "), 8)[:280]
	for n := 60; n <= len(base); n += 7 {
		for _, prev := range []uint64{0, 0x80} {
			sameFoldRun(t, base[:n], prev)
			for i := 0; i < n; i += 3 {
				for _, ins := range []string{" ", "  ", "\n", "\x7f", "\xc3\xa9", "\x80", "\x00", "@[`{"} {
					src := append(append(append([]byte(nil), base[:i]...), ins...), base[i:n]...)
					sameFoldRun(t, src, prev)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(15, 16))
	for range 2000 {
		data := make([]byte, r.IntN(600))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		sameFoldRun(t, runAlphabet(data), uint64(r.IntN(2))<<7)
	}
}

// FuzzFoldRunVec compares foldRun with and without foldRunVec on the
// fuzzer's bytes as they are and mapped to long foldable runs.
func FuzzFoldRunVec(f *testing.F) {
	f.Add(bytes.Repeat([]byte("Lorem Ipsum dolor sit amet, "), 10), false)
	f.Add([]byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 abcdefghij  k"), true)
	f.Fuzz(func(t *testing.T, data []byte, space bool) {
		if !haveFoldVec {
			t.Skip("no AVX-512: foldRunVec is not used")
		}
		prev := uint64(0)
		if space {
			prev = 0x80
		}
		sameFoldRun(t, data, prev)
		sameFoldRun(t, runAlphabet(data), prev)
	})
}
