// Package normalise turns extracted document text into the canonical form
// that every simdex fingerprint is computed from, so that a document re-saved
// in another format, re-wrapped or re-cased still produces the same bytes.
//
// The normal form is, in order: Unicode NFKC; full Unicode case folding
// (golang.org/x/text/cases.Fold, the "F" mappings of CaseFolding.txt, so ß
// becomes "ss"); removal of default-ignorable code points (soft hyphens,
// zero-width spaces, byte-order marks); NFKC again, to recompose what folding
// and removal decomposed; and finally every run of Unicode white space and
// control characters collapsed to one ASCII space, with leading and trailing
// space dropped. The result is valid UTF-8, in NFKC, case-folded, and
// normalising it again changes nothing.
//
// Full folding was chosen over unicode.SimpleFold because simple folding
// keeps "Straße" and "STRASSE" apart, and because cases.Fold maps to a single
// canonical form (SimpleFold only walks an orbit and leaves choosing the
// representative to the caller).
//
// ASCII input takes a fast path that transforms sixteen bytes at a time and
// never calls the Unicode tables. Non-ASCII runs are normalised piecewise;
// every piece starts at an ASCII character that cannot combine with what
// precedes it, so the result equals normalising the whole text at once.
//
// The output depends on the Unicode tables of golang.org/x/text and of the Go
// standard library. [Version] is bumped whenever the output changes for any
// input, including through a Unicode upgrade; a test pins the Unicode
// versions so that an upgrade cannot slip through unnoticed.
//
// The package is pure: no I/O, no logging, no global state. [Append] is safe
// for concurrent use and allocates only when dst must grow.
package normalise
