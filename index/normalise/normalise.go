package normalise

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Version is bumped whenever Append's output changes for any input, so
// fingerprints made by different versions are never compared. Version 1
// kept punctuation and symbols; version 2 keeps only words (see the
// package documentation).
const Version = 2

// UnicodeVersion is the Unicode edition of every table Append depends on:
// golang.org/x/text/unicode/norm, golang.org/x/text/cases and the standard
// library's unicode package must all agree with it.
const UnicodeVersion = "15.0.0"

// ErrInvalidUTF8 reports input that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// InvalidUTF8Error gives the position of the first byte that is not part of
// a valid UTF-8 sequence. It wraps [ErrInvalidUTF8].
type InvalidUTF8Error struct {
	// Offset is the index of the offending byte in the src given to Append.
	Offset int
}

// Error implements error.
func (e *InvalidUTF8Error) Error() string {
	return fmt.Sprintf("invalid UTF-8 at byte offset %d", e.Offset)
}

// Unwrap returns [ErrInvalidUTF8].
func (e *InvalidUTF8Error) Unwrap() error { return ErrInvalidUTF8 }

// Append appends the canonical form of src to dst and returns the extended
// slice (see the package documentation for the form). Invalid UTF-8
// returns dst unchanged and an *InvalidUTF8Error, which wraps
// [ErrInvalidUTF8] and names the byte offset. Append does not retain src or
// dst. The output of ASCII input is never longer than the input.
//
// Append allocates when dst lacks capacity, once per call whose text is
// not already in NFKC, for the scratch state of the Unicode normaliser,
// and once per call whose text has words hyphenated at line ends; use a
// [Normaliser] to reuse that state.
func Append(dst, src []byte) ([]byte, error) {
	return appendNormal(nil, dst, src)
}

// Normaliser holds the scratch state of the Unicode path and of the
// joining of hyphenated words, so that repeated calls allocate nothing
// once dst is large enough. The zero value is ready to use. A Normaliser
// must not be used by two goroutines at once.
type Normaliser struct {
	it     norm.Iter
	joined []byte
}

// Append is like the package function [Append] but reuses n's state.
func (n *Normaliser) Append(dst, src []byte) ([]byte, error) {
	return appendNormal(n, dst, src)
}

// appendNormal implements Append. nz may be nil: it is allocated when first
// needed.
func appendNormal(nz *Normaliser, dst, src []byte) ([]byte, error) {
	start := len(dst)
	var hy hyphens
	if at, end := hy.next(src, 0); at >= 0 {
		// Offsets of invalid bytes are of src, before any join.
		if err := validUTF8(src); err != nil {
			return dst, err
		}
		if nz == nil {
			nz = new(Normaliser)
		}
		nz.joined = hy.join(nz.joined[:0], src, at, end)
		src = nz.joined
	}
	space := true // nothing emitted yet: a leading space is dropped
	for i := 0; i < len(src); {
		// The ASCII prefix of src[i:] folds to at most its length.
		dst = slices.Grow(dst, len(src)-i)
		n, e, k, sp := foldASCII(dst[len(dst):cap(dst)], src[i:], space)
		dst, space = dst[:len(dst)+n], sp
		e, k = i+e, i+k
		if e == len(src) {
			break
		}
		m := unicodeSegmentEnd(src, k)
		if err := validUTF8(src[e:m]); err != nil {
			err.Offset += e
			return dst[:start], err
		}
		if seg := src[e:m]; simpleRunes(seg) {
			dst = slices.Grow(dst, len(seg))
			var n int
			n, space = foldSimple(dst[len(dst):len(dst)+len(seg)], seg, space)
			dst = dst[:len(dst)+n]
		} else {
			dst, space, nz = appendUnicode(nz, dst, seg, space)
		}
		i = m
	}
	if space && len(dst) > start {
		dst = dst[:len(dst)-1] // the trailing space
	}
	return dst, nil
}

const msb = 0x8080808080808080

// asciiPrefix returns the length of the longest prefix of b made of ASCII
// bytes.
func asciiPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:i+8:i+8])&msb != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// minASCIIRun is the shortest ASCII run worth leaving the Unicode path for:
// shorter runs between non-ASCII characters (accented Latin text) stay in
// the current segment, which saves the fixed cost of a segment.
const minASCIIRun = 32

// maxSegment bounds the scratch space a segment needs in dst's tail.
const maxSegment = 16 << 10

// unicodeSegmentEnd returns the end of the segment of src that starts with
// the non-ASCII byte at k. The end is an ASCII byte (a normalisation boundary)
// or len(src); short ASCII runs are absorbed into the segment, which
// therefore always ends with a non-ASCII byte.
func unicodeSegmentEnd(src []byte, k int) int {
	m := k
	for {
		for m < len(src) && src[m] >= utf8.RuneSelf {
			m++
		}
		if m == len(src) || m-k >= maxSegment {
			return m
		}
		// src[m] is ASCII: a boundary. Absorb a short ASCII run.
		run := asciiPrefix(src[m:min(len(src), m+minASCIIRun)])
		if run == minASCIIRun || m+run == len(src) {
			return m
		}
		m += run
	}
}

// wordByte maps an ASCII letter to its lower case, a digit to itself and
// every other byte to 0: a separator.
var wordByte = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = byte(c), byte(c)
	}
	return t
}()

// foldASCII writes the canonical form of the ASCII prefix of src to out,
// which must be at least as long as that prefix. It holds back the last
// ASCII byte before a non-ASCII one, with which a combining mark may
// compose: it folds src[:e], where k is the length of the ASCII prefix and
// e is k-1 if 0 < k < len(src), k otherwise. It returns the number of bytes
// written, e and k. space reports whether the last byte emitted before src
// was a space (or nothing has been emitted); the updated value is
// returned.
//
// With AVX-512 (see haveFoldVec) it folds 64 bytes at a time for as long
// as they and the byte after them are ASCII, then a byte at a time.
func foldASCII(out, src []byte, space bool) (n, e, k int, _ bool) {
	i, o := 0, 0
	if haveFoldVec && len(src) > 64 && len(out) > 64 {
		var prev uint64
		if space {
			prev = 1
		}
		i, o, prev = foldVec(&out[0], &src[0], min(len(src), len(out)), prev)
		space = prev != 0
	}
	// The vector loop stops before a block only if the byte after it is
	// ASCII: k > i whenever i > 0, and e >= i.
	k = i + asciiPrefix(src[i:])
	e = k
	if k < len(src) && k > 0 {
		e = k - 1
	}
	o, space = foldBytes(out, o, src[i:e], space)
	return o, e, k, space
}

// foldBytes is foldASCII one byte at a time, writing at out[o:].
func foldBytes(out []byte, o int, src []byte, space bool) (int, bool) {
	for _, c := range src {
		if w := wordByte[c]; w != 0 {
			out[o] = w
			o++
			space = false
		} else if !space {
			out[o] = ' '
			o++
			space = true
		}
	}
	return o, space
}

// Punctuation and symbols that normalisation leaves alone wherever they
// stand: each is in NFKC, folds to itself, is neither a letter, a number,
// a mark, a control nor default-ignorable, and composes with nothing on
// either side, so each is a separator wherever it stands. English text is
// full of them (quotes, dashes, ©, €), and they would otherwise send the
// text around them through the Unicode normaliser. Bit b of inertC2 stands
// for U+0080+b (encoded C2 80+b), of inertE280 for U+2000+b (E2 80 80+b),
// and of inertE282 for U+2080+b (E2 82 80+b). TestInert checks every one
// of them against the reference form.
const (
	inertC2   uint64 = 0x88c35afe00000000 // ¡¢£¤¥¦§ © «¬ ® °± ¶· » ¿
	inertE280 uint64 = 0xaf27008fff7d0000 // ‐ ‒–—―‖ ‘’‚‛“”„‟†‡•‣ ‧ ‰‱′ ‵ ‸‹›※ ‽ ‿
	inertE282 uint64 = 0xfffffeff00000000 // ₠..₿ but ₨
)

// inertRune returns the length of the inert rune (see inertC2) at the
// start of b, or 0.
func inertRune(b []byte) int {
	switch {
	case len(b) >= 2 && b[0] == 0xc2 && b[1]&0xc0 == 0x80:
		return 2 * int(inertC2>>(b[1]&0x3f)&1)
	case len(b) >= 3 && b[0] == 0xe2 && b[2]&0xc0 == 0x80:
		switch b[1] {
		case 0x80:
			return 3 * int(inertE280>>(b[2]&0x3f)&1)
		case 0x82:
			return 3 * int(inertE282>>(b[2]&0x3f)&1)
		}
	}
	return 0
}

// simpleRunes reports whether b holds only ASCII, the Latin-1 letters
// U+00C0..U+00FF (with × and ÷) and inert runes (see inertC2). Such text
// is already in NFKC, and has no combining mark that could compose with a
// letter, so it can be folded one character at a time.
func simpleRunes(b []byte) bool {
	for j := 0; j < len(b); j++ {
		switch {
		case b[j] < utf8.RuneSelf:
		case b[j] == 0xc3 && j+1 < len(b) && b[j+1]&0xc0 == 0x80:
			j++
		default:
			n := inertRune(b[j:])
			if n == 0 {
				return false
			}
			j += n - 1
		}
	}
	return true
}

// foldSimple is foldASCII for text accepted by simpleRunes. The output is
// as long as src or shorter.
func foldSimple(out, src []byte, space bool) (int, bool) {
	o := 0
	for j := 0; j < len(src); j++ {
		c := src[j]
		if c < utf8.RuneSelf {
			o, space = foldBytes(out, o, src[j:j+1], space)
			continue
		}
		sep := c != 0xc3 // an inert rune
		if sep {
			j += inertRune(src[j:]) - 1
		} else {
			j++
			c = src[j]
			sep = c == 0x97 || c == 0xb7 // × and ÷
		}
		if sep {
			if !space {
				out[o] = ' '
				o++
				space = true
			}
			continue
		}
		switch {
		case c == 0x9f: // ß folds to "ss"
			out[o], out[o+1] = 's', 's'
		case c >= 0x80 && c < 0x9f: // À..Þ
			out[o], out[o+1] = 0xc3, c+0x20
		default:
			out[o], out[o+1] = 0xc3, c
		}
		o += 2
		space = false
	}
	return o, space
}

// validUTF8 returns the position of the first invalid byte of b, if any.
func validUTF8(b []byte) *InvalidUTF8Error {
	for j := 0; j < len(b); {
		if b[j] < utf8.RuneSelf {
			j++
			continue
		}
		r, size := utf8.DecodeRune(b[j:])
		if r == utf8.RuneError && size == 1 {
			return &InvalidUTF8Error{Offset: j}
		}
		j += size
	}
	return nil
}

// appendUnicode appends the canonical form of the valid UTF-8 text seg,
// which starts and ends at normalisation boundaries, to dst. It uses dst's
// spare capacity as scratch space, and returns nz, allocated if it was nil
// and needed.
func appendUnicode(nz *Normaliser, dst, seg []byte, space bool) ([]byte, bool, *Normaliser) {
	// Scratch layout in dst's tail: [n0,n1) NFKC, [n1,n2) folded and
	// filtered, [n2,n3) NFKC again, and the words from n3 on, which are
	// then moved to n0 (a text of Han characters grows by a third).
	n0 := len(dst)
	dst, nz = appendNFKC(nz, dst, seg)
	n1 := len(dst)
	dst = appendTransform(dst, dst[n0:n1], cases.Fold())
	n2 := filterFolded(dst, n1)
	n3 := n2
	if bytes.Equal(dst[n0:n1], dst[n1:n2]) {
		n2 = n1 // folding and filtering changed nothing: still in NFKC
	} else {
		dst, nz = appendNFKC(nz, dst[:n2], dst[n1:n2])
		n3 = len(dst)
	}
	dst = slices.Grow(dst[:n3], 2*(n3-n2)+1)
	var o int
	o, space = appendWords(dst[n3:cap(dst)], dst[n2:n3], space)
	return append(dst[:n0], dst[n3:n3+o]...), space, nz
}

// appendWords writes the words of the normalised text src to out, which
// must hold twice its length and a byte, each run of separators as one
// space, and returns the length written and space updated (see
// foldASCII).
func appendWords(out, src []byte, space bool) (int, bool) {
	o := 0
	for j := 0; j < len(src); {
		if c := src[j]; c < utf8.RuneSelf {
			o, space = foldBytes(out, o, src[j:j+1], space)
			j++
			continue
		}
		r, size := utf8.DecodeRune(src[j:])
		switch {
		case spaceless(r):
			// A word of its own, with the marks that follow it.
			if !space {
				out[o] = ' '
				o++
			}
			end := j + size
			for end < len(src) {
				m, n := utf8.DecodeRune(src[end:])
				if !unicode.IsMark(m) {
					break
				}
				end += n
			}
			o += copy(out[o:], src[j:end])
			out[o] = ' '
			o++
			space = true
			j = end
			continue
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r):
			o += copy(out[o:], src[j:j+size])
			space = false
		case !space:
			out[o] = ' '
			o++
			space = true
		}
		j += size
	}
	return o, space
}

// spaceless reports whether r belongs to a script written without spaces
// between words whose characters are each taken as a word: Han, Hiragana
// and Katakana (with the prolonged sound mark ー, which is common to both
// kana).
func spaceless(r rune) bool {
	switch {
	case r < 0x2e80:
		return false
	case r >= 0x3041 && r <= 0x3096, r >= 0x309d && r <= 0x30ff && r != 0x30a0 && r != 0x30fb:
		return true // the kana blocks but their marks, ゠ and ・
	case r >= 0x4e00 && r <= 0x9fff:
		return true // CJK Unified Ideographs
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// appendNFKC appends the NFKC form of src to dst. src may be part of dst's
// backing array below len(dst). Text already in NFKC is copied; otherwise
// nz's iterator does the work, and nz is allocated if it is nil.
func appendNFKC(nz *Normaliser, dst, src []byte) ([]byte, *Normaliser) {
	q := norm.NFKC.QuickSpan(src) // src[:q] is in NFKC and q is a boundary
	dst = append(dst, src[:q]...)
	if q == len(src) {
		return dst, nz
	}
	if nz == nil {
		nz = new(Normaliser)
	}
	nz.it.Init(norm.NFKC, src[q:])
	for !nz.it.Done() {
		dst = append(dst, nz.it.Next()...)
	}
	return dst, nz
}

// appendTransform appends t applied to src to dst. src may be part of dst's
// backing array below len(dst). It is generic so that passing a Caser does
// not allocate an interface value.
func appendTransform[T transform.Transformer](dst, src []byte, t T) []byte {
	for len(src) > 0 {
		// Case folding expands a rune to at most three runes; the loop
		// copes with anything longer.
		dst = slices.Grow(dst, 3*len(src)+utf8.UTFMax)
		nd, ns, err := t.Transform(dst[len(dst):cap(dst)], src, true)
		dst = dst[:len(dst)+nd]
		src = src[ns:]
		if err == nil || !errors.Is(err, transform.ErrShortDst) {
			break
		}
	}
	return dst
}

// filterFolded removes default-ignorable code points from the case-folded
// text dst[from:] in place, repairs the folding of Cherokee, and returns the
// new length.
//
// golang.org/x/text/cases (v0.43.0) folds the Cherokee capitals
// U+13A0..U+13F5 to the small letters, while CaseFolding.txt folds the small
// letters U+AB70..U+ABBF and U+13F8..U+13FD to the capitals and leaves the
// capitals alone. Mapping every small letter in the output to its capital
// gives the right result for both and keeps the normal form idempotent.
func filterFolded(dst []byte, from int) int {
	o := from
	for j := from; j < len(dst); {
		r, size := rune(dst[j]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(dst[j:])
		}
		switch {
		case r >= 0xab70 && r <= 0xabbf:
			utf8.EncodeRune(dst[o:], r-0xab70+0x13a0) // three bytes either way
			o += size
		case r >= 0x13f8 && r <= 0x13fd:
			utf8.EncodeRune(dst[o:], r-8)
			o += size
		case !ignorable(r):
			copy(dst[o:], dst[j:j+size])
			o += size
		}
		j += size
	}
	return o
}

// ignorable reports whether r is a Default_Ignorable_Code_Point (Unicode
// DerivedCoreProperties.txt: Other_Default_Ignorable_Code_Point, Cf and
// Variation_Selector, less White_Space, U+FFF9..U+FFFB, U+13430..U+1343F and
// Prepended_Concatenation_Mark), except U+034F COMBINING GRAPHEME JOINER,
// which NFKC inserts itself into very long runs of combining marks.
func ignorable(r rune) bool {
	switch {
	case r == 0xad:
		return true
	case r < 0x600, r > 0x3164 && r < 0xfe00:
		// No default-ignorable code points here besides U+00AD and U+034F
		// (TestIgnorable checks the whole range).
		return false
	}
	return ignorableSlow(r)
}

// ignorableSlow is ignorable by the definition, for every rune.
func ignorableSlow(r rune) bool {
	switch {
	case r == 0x34f:
		return false
	case r >= 0xfff9 && r <= 0xfffb, r >= 0x13430 && r <= 0x1343f:
		return false
	}
	if !unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
		return false
	}
	return !unicode.In(r, unicode.White_Space, unicode.Prepended_Concatenation_Mark)
}
