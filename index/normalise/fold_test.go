package normalise

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// foldASCIIRef is foldASCII spelt out a byte at a time from the
// definition of the form: what the table-driven loop and foldVec must
// match.
func foldASCIIRef(src []byte, space bool) (out []byte, e, k int, _ bool) {
	k = asciiPrefix(src)
	e = k
	if k < len(src) && k > 0 {
		e = k - 1
	}
	for _, c := range src[:e] {
		switch {
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
			space = false
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
			space = false
		case !space:
			out = append(out, ' ')
			space = true
		}
	}
	return out, e, k, space
}

func sameFold(t *testing.T, src []byte, space bool) {
	t.Helper()
	got := make([]byte, len(src))
	n, e, k, sp := foldASCII(got, src, space)
	want, we, wk, wsp := foldASCIIRef(src, space)
	if n != len(want) || e != we || k != wk || sp != wsp || !bytes.Equal(got[:n], want) {
		t.Fatalf("foldASCII(%q, %v) = %q, e %d, k %d, space %v; want %q, %d, %d, %v",
			src, space, got[:n], e, k, sp, want, we, wk, wsp)
	}
}

// foldAlphabet maps fuzz bytes to the bytes that matter to foldASCII:
// letters of both cases, digits, the separators it collapses, the edges
// of its ranges, and now and then a non-ASCII byte.
func foldAlphabet(data []byte) []byte {
	const alphabet = "aZ AZ@[`{/:09 \n\t\x00\x1f\x20\x21\x7e\x7f.,xyzXYZ > -  \n\n"
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

// TestFoldASCII checks foldASCII against the definition around every
// word boundary: a run of separators, an upper-case letter or a non-ASCII
// byte at each position of texts of every length up to three 16-byte
// blocks, and random texts up to 300 bytes.
func TestFoldASCII(t *testing.T) {
	base := []byte("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV")
	for n := 0; n <= 50; n++ {
		for _, space := range []bool{false, true} {
			sameFold(t, base[:n], space)
			for i := 0; i < n; i++ {
				for _, ins := range []string{" ", "  ", "\n\n\n", "\x7f", "Q", "\xc3\xa9", "\x80", "         ", ", ", "> > "} {
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

// FuzzFoldASCII compares foldASCII with the definition, on the fuzzer's
// bytes as they are and mapped to the bytes that matter.
func FuzzFoldASCII(f *testing.F) {
	f.Add([]byte("The Quick  brown\tfox.\n\nover the lazy dog, it was not amused"), true)
	f.Add([]byte("abcdefghijklmnopQ        rstuvwxyz\xc3\xa9"), false)
	f.Fuzz(func(t *testing.T, data []byte, space bool) {
		sameFold(t, data, space)
		sameFold(t, foldAlphabet(data), space)
	})
}

// inertRunes lists the runes of the inert masks (see inertC2).
func inertRunes() []rune {
	var rs []rune
	for _, m := range []struct {
		base rune
		mask uint64
	}{{0x80, inertC2}, {0x2000, inertE280}, {0x2080, inertE282}} {
		for b := range 64 {
			if m.mask>>b&1 != 0 {
				rs = append(rs, m.base+rune(b))
			}
		}
	}
	return rs
}

// TestInert checks that every inert rune is what the fast path assumes:
// in NFKC, its own case fold, neither a letter, a number, a mark, a
// control nor ignorable,
// composing with nothing on either side, and that Append matches the
// reference around it, next to letters, spaces, combining marks and the
// non-ASCII text the fast path leaves to the Unicode path.
func TestInert(t *testing.T) {
	fold := cases.Fold()
	for _, r := range inertRunes() {
		s := string(r)
		if n := inertRune([]byte(s)); n != len(s) {
			t.Errorf("%U: inertRune = %d, want %d", r, n, len(s))
		}
		p := norm.NFKC.Properties([]byte(s))
		if norm.NFKC.String(s) != s || fold.String(s) != s || unicode.IsLetter(r) || unicode.IsNumber(r) ||
			unicode.IsMark(r) || unicode.IsControl(r) ||
			ignorable(r) || p.CCC() != 0 || !p.BoundaryBefore() || !p.BoundaryAfter() {
			t.Errorf("%U %q is not inert", r, s)
		}
		for _, ctx := range []string{
			"%s", "a%sb", "A%s", "%sZ", "e%s\u0301", "%s\u0301", "x  %s  Y", "%s%s%s",
			"The QUICK brown fox %s jumps over the lazy dog %s and more text beyond thirty-two bytes",
			"É%sÉ", "日本%s語", "\u00a0%s\u00a0", "a\u200b%s",
		} {
			in := strings.ReplaceAll(ctx, "%s", s)
			checkAgainstReference(t, []byte(in))
		}
	}
	// Runes next to the inert ones in their encodings are not inert.
	for _, r := range []rune{0xa0, 0xa8, 0xaa, 0xad, 0xb2, 0xb4, 0xb5, 0x2011, 0x2024, 0x2026, 0x202f, 0x20a8, 0x2100} {
		if n := inertRune([]byte(string(r))); n != 0 {
			t.Errorf("%U: inertRune = %d, want 0", r, n)
		}
	}
}

// FuzzAppendInert is FuzzAppend seeded with the inert runes of English
// text among letters, spaces and other non-ASCII text.
func FuzzAppendInert(f *testing.F) {
	for _, s := range []string{
		"“Quoted” — and ‘single’ – dashes © 2024 € 5",
		"It’s a\u00a0“test”\u0301 ‰ ₨ …",
		"A  ‘b’  C\n\n„d‟ †e‡ •f",
		"ÉCOLE « élève » ¿qué? ¡sí! ·",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstReference)
}
