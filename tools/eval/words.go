package eval

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The truth's words are defined here, apart from the engine's normal form
// (index/normalise), so that whatever the engine keeps between words
// cannot change the truth it is measured against:
//
//   - the text is put in Unicode compatibility form (NFKC: a ligature "ﬁ"
//     reads "fi", a full-width "Ａ" reads "A") and case folded (full
//     folding: "Straße" and "STRASSE" are the same word);
//   - a word is a maximal run of letters and digits (unicode.IsLetter,
//     unicode.IsDigit); combining marks (Mn, Mc, Me) belong to the word
//     they follow and are dropped elsewhere;
//   - in scripts written without spaces between words (Han, Hiragana,
//     Katakana, Thai, Lao, Khmer, Myanmar), every letter is a word on its
//     own, as full-text search engines tokenise them; Hangul is written
//     with spaces between words, so its syllables form words like Latin
//     letters do;
//   - everything else separates words: white space, punctuation, symbols,
//     quote markers ("> > "), bullets, underlines and markup remnants.

// unspaced are the scripts whose letters are words on their own.
var unspaced = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

// canonical returns text in NFKC form, case folded, as the truth reads it.
func canonical(text []byte) []byte {
	return cases.Fold().Bytes(norm.NFKC.Bytes(text))
}

// TruthWords calls emit with each word of text, in order (see the rules
// above). The word's bytes are valid only during the call.
func TruthWords(text []byte, emit func(word []byte)) {
	text = canonical(text)
	start, end := -1, -1 // the current word is text[start:end]
	single := false      // the current word is a letter of an unspaced script
	flush := func() {
		if start >= 0 {
			emit(text[start:end])
		}
		start = -1
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		switch runeKind(r) {
		case inWord:
			if start >= 0 && single {
				flush()
			}
			if start < 0 {
				start, single = i, false
			}
			end = i + size
		case ownWord:
			flush()
			start, end, single = i, i+size, true
		case mark:
			if start >= 0 {
				end = i + size
			}
		default:
			flush()
		}
		i += size
	}
	flush()
}

// Kinds of runes for TruthWords.
const (
	separator = iota
	inWord    // a letter or digit, part of a run
	ownWord   // a letter of an unspaced script, a word on its own
	mark      // a combining mark, part of the word it follows
)

// runeKind classifies r for TruthWords.
func runeKind(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' {
			return inWord
		}
		return separator
	case unicode.IsLetter(r):
		if unicode.In(r, unspaced...) {
			return ownWord
		}
		return inWord
	case unicode.IsDigit(r):
		return inWord
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return mark
	}
	return separator
}
