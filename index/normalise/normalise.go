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
// fingerprints made by different versions are never compared.
const Version = 1

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

// Append appends the normalised form of src to dst and returns the extended
// slice (see the package documentation for the normal form). Invalid UTF-8
// returns dst unchanged and an *InvalidUTF8Error, which wraps
// [ErrInvalidUTF8] and names the byte offset. Append does not retain src or
// dst. The output of ASCII input is never longer than the input.
//
// Append allocates when dst lacks capacity, and once per call whose text is
// not already in NFKC, for the scratch state of the Unicode normaliser; use a
// [Normaliser] to reuse that state.
func Append(dst, src []byte) ([]byte, error) {
	return appendNormal(nil, dst, src)
}

// Normaliser holds the scratch state of the Unicode path so that repeated
// calls allocate nothing once dst is large enough. The zero value is ready to
// use. A Normaliser must not be used by two goroutines at once.
type Normaliser struct {
	it norm.Iter
}

// Append is like the package function [Append] but reuses n's state.
func (n *Normaliser) Append(dst, src []byte) ([]byte, error) {
	return appendNormal(n, dst, src)
}

// appendNormal implements Append. nz may be nil: it is allocated when first
// needed.
func appendNormal(nz *Normaliser, dst, src []byte) ([]byte, error) {
	start := len(dst)
	space := true // nothing emitted yet: a leading space is dropped
	for i := 0; i < len(src); {
		k := i + asciiPrefix(src[i:])
		// Hold back the ASCII character just before a non-ASCII one: a
		// combining mark may compose with it.
		e := k
		if k < len(src) && k > i {
			e = k - 1
		}
		if e > i {
			dst = slices.Grow(dst, e-i)
			var n int
			n, space = foldASCII(dst[len(dst):len(dst)+e-i], src[i:e], space)
			dst = dst[:len(dst)+n]
		}
		if e == len(src) {
			break
		}
		m := unicodeSegmentEnd(src, k)
		if err := validUTF8(src[e:m]); err != nil {
			err.Offset += e
			return dst[:start], err
		}
		if seg := src[e:m]; latin1Letters(seg) {
			dst = slices.Grow(dst, len(seg))
			var n int
			n, space = foldLatin1(dst[len(dst):len(dst)+len(seg)], seg, space)
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

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// asciiPrefix returns the length of the longest prefix of b made of ASCII
// bytes.
func asciiPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:i+8:i+8])&msb != 0 { // see foldASCII
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
// or len(src); short ASCII runs are absorbed into the segment.
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

// foldASCII writes the normalised form of the ASCII text src to out, which
// must be at least as long as src, and returns the number of bytes written.
// space reports whether the last byte emitted before src was a space (or
// nothing has been emitted); the updated value is returned.
func foldASCII(out, src []byte, space bool) (int, bool) {
	o := 0
	i := 0
	for ; i+8 <= len(src); i += 8 {
		// Three-index slices of constant length let the compiler drop the
		// bounds checks of the 8-byte load and store and skip the pointer
		// masking of a possibly empty slice.
		w := binary.LittleEndian.Uint64(src[i : i+8 : i+8])
		// Every byte is below 0x80, so no addition carries into the next
		// byte: the top bit of each byte holds the comparison's result.
		upper := (w + lsb*(0x80-'A')) &^ (w + lsb*(0x80-'Z'-1)) & msb
		del := ^((w ^ lsb*0x7f) + lsb*0x7f) & msb
		sp := ^(w+lsb*(0x80-0x21))&msb | del
		var prev uint64
		if space {
			prev = 0x80
		}
		if sp&(sp<<8|prev) == 0 {
			// No two spaces in a row: translate the eight bytes at once.
			w |= upper >> 2
			w = w&^((sp>>7)*0xff) | sp>>2
			binary.LittleEndian.PutUint64(out[o:o+8:o+8], w)
			o += 8
			space = sp>>63 != 0
			continue
		}
		if space && sp == msb { // eight spaces after a space
			continue
		}
		o, space = foldBytes(out, o, src[i:i+8], space)
	}
	o, space = foldBytes(out, o, src[i:], space)
	return o, space
}

// foldBytes is foldASCII one byte at a time, writing at out[o:].
func foldBytes(out []byte, o int, src []byte, space bool) (int, bool) {
	for _, c := range src {
		switch {
		case c <= ' ' || c == 0x7f:
			if !space {
				out[o] = ' '
				o++
				space = true
			}
			continue
		case c-'A' < 26:
			c += 'a' - 'A'
		}
		out[o] = c
		o++
		space = false
	}
	return o, space
}

// latin1Letters reports whether b holds only ASCII and the Latin-1 letters
// U+00C0..U+00FF (with × and ÷). Such text is already in NFKC, and has no
// combining mark that could compose with a letter, so it can be folded one
// character at a time.
func latin1Letters(b []byte) bool {
	for j := 0; j < len(b); j++ {
		if b[j] < utf8.RuneSelf {
			continue
		}
		if b[j] != 0xc3 || j+1 == len(b) || b[j+1]&0xc0 != 0x80 {
			return false
		}
		j++
	}
	return true
}

// foldLatin1 is foldASCII for text accepted by latin1Letters.
func foldLatin1(out, src []byte, space bool) (int, bool) {
	o := 0
	for j := 0; j < len(src); j++ {
		c := src[j]
		if c < utf8.RuneSelf {
			o, space = foldBytes(out, o, src[j:j+1], space)
			continue
		}
		j++
		c = src[j]
		switch {
		case c == 0x9f: // ß folds to "ss"
			out[o], out[o+1] = 's', 's'
		case c >= 0x80 && c < 0x9f && c != 0x97: // À..Þ but not ×
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

// appendUnicode appends the normalised form of the valid UTF-8 text seg,
// which starts and ends at normalisation boundaries, to dst. It uses dst's
// spare capacity as scratch space, and returns nz, allocated if it was nil
// and needed.
func appendUnicode(nz *Normaliser, dst, seg []byte, space bool) ([]byte, bool, *Normaliser) {
	// Scratch layout in dst's tail: [n0,n1) NFKC, [n1,n2) folded and
	// filtered, [n2,n3) NFKC again. The final pass writes at n0, never
	// overtaking its read position.
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

	o := n0
	for j := n2; j < n3; {
		c := dst[j]
		if c < utf8.RuneSelf {
			j++
			switch {
			case c <= ' ' || c == 0x7f:
				if !space {
					dst[o] = ' '
					o++
					space = true
				}
				continue
			case c-'A' < 26:
				c += 'a' - 'A'
			}
			dst[o] = c
			o++
			space = false
			continue
		}
		r, size := utf8.DecodeRune(dst[j:n3])
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			if !space {
				dst[o] = ' '
				o++
				space = true
			}
		} else {
			copy(dst[o:], dst[j:j+size])
			o += size
			space = false
		}
		j += size
	}
	return dst[:o], space, nz
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
