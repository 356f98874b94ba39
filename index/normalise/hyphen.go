package normalise

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Hyphenation at line ends: a hyphen that ends a line, right after a
// letter (or a combining mark), is removed together with the line break,
// the blanks around it and the quote markers ('>') that start the next
// line, when the next line's text starts with a letter, so that
// "docu-\nment", "> docu-\n> ment" and "document" are the same word. A hyphen is U+002D,
// U+2010 HYPHEN, U+2011 NON-BREAKING HYPHEN or U+00AD SOFT HYPHEN; a line
// break is LF, CR, CR LF, VT, FF, U+0085, U+2028 or U+2029; blanks are
// spaces and tabs.
//
// What it does not join: a hyphen after a blank, a digit or another hyphen
// ("see -\nfoo", "pages 3-\n7", "----\n"), or before a line whose text
// starts with a digit or anything but a letter ("docu-\n* ment"), and a
// hyphen that does not end its line ("well-known"). A compound broken at
// its own hyphen ("well-\nknown") is joined too ("wellknown" where the
// unbroken text has "well known"): a line-end hyphen cannot tell the two
// apart, and broken words are the more common in wrapped text.

// hyphenForms are the encodings of the hyphens searched for; the last
// two share their first two bytes.
var hyphenForms = [...]string{"-", "\u00ad", "\u2010"}

// hyphens finds the line-end hyphens that join two parts of a word. It
// keeps the next candidate of each form, so that a text is searched once
// per form whatever the number of joins.
type hyphens struct {
	pos  [len(hyphenForms)]int // next occurrence, -1 if none, -2 before the first search
	init bool
}

// next returns the first join at or after i: the hyphen's offset and the
// offset of the letter that follows it on the next line, or -1, -1.
func (h *hyphens) next(src []byte, i int) (at, end int) {
	if !h.init {
		h.init = true
		for f := range hyphenForms {
			h.pos[f] = -2 // not searched yet
		}
	}
	for {
		best := -1
		for f, form := range hyphenForms {
			if h.pos[f] == -2 || (h.pos[f] >= 0 && h.pos[f] < i) {
				h.pos[f] = find(src, i, form)
			}
			if p := h.pos[f]; p >= 0 && (best < 0 || p < h.pos[best]) {
				best = f
			}
		}
		if best < 0 {
			return -1, -1
		}
		at = h.pos[best]
		size := len(hyphenForms[best])
		if best == 2 && (at+2 >= len(src) || src[at+2] != 0x90 && src[at+2] != 0x91) {
			i = at + 1 // E2 80 but neither U+2010 nor U+2011
			continue
		}
		if best == 2 {
			size = 3
		}
		if end := joinEnd(src, at, size); end > 0 {
			return at, end
		}
		i = at + 1
	}
}

// find returns the offset of the next form in src at or after i, or -1.
// The third form is searched by its first two bytes, E2 80.
func find(src []byte, i int, form string) int {
	if len(form) == 3 {
		form = form[:2]
	}
	if j := bytes.Index(src[i:], []byte(form)); j >= 0 {
		return i + j
	}
	return -1
}

// joinEnd returns the offset of the letter that starts the line after the
// hyphen src[at:at+size] if the hyphen joins a word, or 0.
func joinEnd(src []byte, at, size int) int {
	if at == 0 {
		return 0
	}
	if r, _ := utf8.DecodeLastRune(src[:at]); !unicode.IsLetter(r) && !unicode.IsMark(r) {
		return 0
	}
	p := skipBlanks(src, at+size)
	n := lineBreak(src[p:])
	if n == 0 {
		return 0
	}
	p = skipBlanks(src, p+n)
	for p < len(src) && src[p] == '>' {
		p = skipBlanks(src, p+1)
	}
	if r, _ := utf8.DecodeRune(src[p:]); !unicode.IsLetter(r) {
		return 0
	}
	return p
}

// skipBlanks returns the offset of the first byte at or after i that is
// neither a space nor a tab.
func skipBlanks(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// lineBreak returns the length of the line break at the start of b, or 0.
func lineBreak(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == '\r' && len(b) > 1 && b[1] == '\n':
		return 2
	case b[0] == '\n' || b[0] == '\r' || b[0] == '\v' || b[0] == '\f':
		return 1
	case len(b) > 1 && b[0] == 0xc2 && b[1] == 0x85:
		return 2
	case len(b) > 2 && b[0] == 0xe2 && b[1] == 0x80 && (b[2] == 0xa8 || b[2] == 0xa9):
		return 3
	}
	return 0
}

// join appends src to dst without each join's hyphen, blanks and line
// break, the first of which is src[at:end].
func (h *hyphens) join(dst, src []byte, at, end int) []byte {
	i := 0
	for at >= 0 {
		dst = append(dst, src[i:at]...)
		i = end
		at, end = h.next(src, end)
	}
	return append(dst, src[i:]...)
}
