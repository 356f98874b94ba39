package normalise

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// sameFoldVec fails unless foldASCII gives the same output, lengths and
// space with foldVec as without.
func sameFoldVec(t *testing.T, src []byte, space bool) {
	t.Helper()
	got, want := make([]byte, len(src)), make([]byte, len(src))
	n, e, k, sp := foldASCII(got, src, space)
	haveFoldVec = false
	wn, we, wk, wsp := foldASCII(want, src, space)
	haveFoldVec = true
	if n != wn || e != we || k != wk || sp != wsp || !bytes.Equal(got[:n], want[:wn]) {
		t.Fatalf("foldASCII(%q, %v) = %q, %d, %d, %v with foldVec; %q, %d, %d, %v without",
			src, space, got[:n], e, k, sp, want[:wn], we, wk, wsp)
	}
}

// runAlphabet maps fuzz bytes to text such as foldVec meets: mostly
// letters of both cases, digits and single spaces, punctuation and runs of
// separators, the edges of its ranges, and now and then a non-ASCII byte.
func runAlphabet(data []byte) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzAZ@[`{/:09 .,> -\t\n\x00\x7f"
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

// TestFoldVec compares foldASCII with and without foldVec around its
// 64-byte steps: what changes its course (a separator run, a separator at
// a step's edge, a non-ASCII byte) at every position of texts up to four
// steps long.
func TestFoldVec(t *testing.T) {
	if !haveFoldVec {
		t.Skip("no AVX-512 VBMI2: foldVec is not used")
	}
	base := bytes.Repeat([]byte("The quick Brown fox, (jumps) over the LAZY dog. > "), 8)[:280]
	for n := 60; n <= len(base); n += 7 {
		for _, space := range []bool{false, true} {
			sameFoldVec(t, base[:n], space)
			for i := 0; i < n; i += 3 {
				for _, ins := range []string{" ", "  ", "\n", "\x7f", "\xc3\xa9", "\x80", "\x00", "@[`{", "09/:"} {
					src := append(append(append([]byte(nil), base[:i]...), ins...), base[i:n]...)
					sameFoldVec(t, src, space)
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
		sameFoldVec(t, runAlphabet(data), r.IntN(2) == 0)
	}
}

// FuzzFoldVec compares foldASCII with and without foldVec on the fuzzer's
// bytes as they are and mapped to long ASCII runs.
func FuzzFoldVec(f *testing.F) {
	f.Add(bytes.Repeat([]byte("Lorem Ipsum dolor sit amet, "), 10), false)
	f.Add([]byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 abcdefghij  k > > quoted -- text"), true)
	f.Fuzz(func(t *testing.T, data []byte, space bool) {
		if !haveFoldVec {
			t.Skip("no AVX-512 VBMI2: foldVec is not used")
		}
		sameFoldVec(t, data, space)
		sameFoldVec(t, runAlphabet(data), space)
	})
}
