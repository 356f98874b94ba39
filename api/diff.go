package api

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// MaxDiffText bounds how much of each text a diff compares: reviewers
// compare documents, not whole mailboxes, and the diff must answer fast.
const MaxDiffText = 1 << 20

// DiffOp is one run of a word diff: text found in both documents (equal),
// only in the first (delete) or only in the second (insert).
type DiffOp struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// DiffWords compares a and b word by word: words, runs of spaces and
// single punctuation marks are the units, so an edit highlights whole
// words, and the ops' texts put together give back a (equal and delete)
// and b (equal and insert) exactly. Texts longer than MaxDiffText are
// compared up to it (at a character boundary) and reported truncated.
func DiffWords(a, b string) (ops []DiffOp, truncated bool) {
	a, ta := truncateText(a, MaxDiffText)
	b, tb := truncateText(b, MaxDiffText)
	// Each distinct token becomes one rune, so that the Myers diff of
	// diffmatchpatch runs over tokens, as its line mode does over lines.
	ids := map[string]rune{}
	var tokens []string
	encode := func(s string) []rune {
		var out []rune
		for _, tok := range tokenize(s) {
			r, ok := ids[tok]
			if !ok {
				r = tokenRune(len(tokens))
				ids[tok] = r
				tokens = append(tokens, tok)
			}
			out = append(out, r)
		}
		return out
	}
	ra, rb := encode(a), encode(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // exact; the inputs are bounded
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		var sb strings.Builder
		for _, r := range d.Text {
			sb.WriteString(tokens[runeToken(r)])
		}
		op := "equal"
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = "delete"
		case diffmatchpatch.DiffInsert:
			op = "insert"
		}
		if n := len(ops); n > 0 && ops[n-1].Op == op {
			ops[n-1].Text += sb.String()
		} else if sb.Len() > 0 {
			ops = append(ops, DiffOp{Op: op, Text: sb.String()})
		}
	}
	if ops == nil {
		ops = []DiffOp{}
	}
	return ops, ta || tb
}

// tokenRune maps a token number to a rune, skipping the surrogates, which
// are not valid in strings.
func tokenRune(i int) rune {
	if i >= 0xD800 {
		i += 0x800
	}
	return rune(i)
}

func runeToken(r rune) int {
	if r >= 0xE000 {
		return int(r) - 0x800
	}
	return int(r)
}

// tokenize splits s into words (letters and digits), runs of white space,
// and single other characters. Two texts of MaxDiffText bytes hold fewer
// distinct tokens than tokenRune can number (about 1.1 million): a
// distinct token is a new character or a word beside a separator.
func tokenize(s string) []string {
	var out []string
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n := size
		class := tokenClass(r)
		if class != 0 {
			for n < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[n:])
				if tokenClass(r2) != class {
					break
				}
				n += sz
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// tokenClass is 1 for word characters, 2 for white space, 0 for anything
// else (a token on its own).
func tokenClass(r rune) int {
	switch {
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
		return 1
	case unicode.IsSpace(r):
		return 2
	}
	return 0
}

// truncateText cuts s to at most max bytes at a character boundary.
func truncateText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
