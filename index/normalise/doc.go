// Package normalise turns extracted document text into the canonical form
// that every simdex fingerprint is computed from: the text's words, in
// order, and nothing else. A document re-saved in another format,
// re-wrapped, re-cased, quoted in a reply at any depth, or pasted between
// other punctuation produces the same bytes.
//
// The canonical form is, in order:
//
//   - words hyphenated at line ends are joined: a hyphen (-, U+2010,
//     U+2011, soft hyphen) after a letter, followed by blanks, one line
//     break, blanks and quote markers ('>'), is removed with them when the
//     next line's text starts with a letter ("docu-\nment" and "> docu-\n>
//     ment" are "document"; "pages 3-\n7", "see -\nfoo", "----\n" and
//     "well-known" are left to the next steps);
//   - Unicode NFKC, full case folding (golang.org/x/text/cases.Fold, the
//     "F" mappings of CaseFolding.txt, so ß becomes "ss"), removal of
//     default-ignorable code points (soft hyphens, zero-width spaces,
//     byte-order marks) and NFKC again, to recompose what folding and
//     removal decomposed;
//   - a word is a maximal run of letters, numbers and combining marks
//     (Unicode categories L, N and M: a mark stays inside its word, so
//     "naïve" written with U+0308 is one word); each character of the
//     scripts written without spaces between words (Han, Hiragana,
//     Katakana, with the prolonged sound mark ー) is a word of its own,
//     with the marks that follow it;
//   - everything between words (white space, line breaks, punctuation,
//     symbols, quote markers at any depth, bullets, underlines, markup
//     characters) becomes one ASCII space, and leading and trailing space
//     is dropped.
//
// Before and after:
//
//	"> Dear all,\n> the schedule is 7 years."   "dear all the schedule is 7 years"
//	">> Dear all,\n>> the schedule is 7 years." "dear all the schedule is 7 years"
//	`He said: "Stop!" [4]`                      "he said stop 4"
//	"Title\n=====\n* one\n- two"                "title one two"
//	"docu-\n  ment, Straße"                     "document strasse"
//	"日本語のテキスト。"                          "日 本 語 の テ キ ス ト"
//
// The result is valid UTF-8, in NFKC, case-folded, and canonicalising it
// again changes nothing. Separators are not words, so a text made only of
// them (a line of dashes, an emoji) is empty.
//
// Full folding was chosen over unicode.SimpleFold because simple folding
// keeps "Straße" and "STRASSE" apart, and because cases.Fold maps to a single
// canonical form (SimpleFold only walks an orbit and leaves choosing the
// representative to the caller).
//
// ASCII input takes a fast path that never calls the Unicode tables: a
// table maps each byte to its lower-case letter, its digit or a separator,
// and on processors with AVX-512 VBMI2 a kernel does the same 64 bytes at a
// time and drops the separators that follow another with VPCOMPRESSB.
// Non-ASCII runs are normalised piecewise; every piece starts at an ASCII
// character that cannot combine with what precedes it, so the result
// equals normalising the whole text at once.
//
// The output depends on the Unicode tables of golang.org/x/text and of the Go
// standard library. [Version] is bumped whenever the output changes for any
// input, including through a Unicode upgrade; a test pins the Unicode
// versions so that an upgrade cannot slip through unnoticed. Version 1 kept
// punctuation and symbols and collapsed only white space; version 2 is the
// form above.
//
// The package is pure: no I/O, no logging, no global state. [Append] is safe
// for concurrent use and allocates only when dst must grow.
package normalise
