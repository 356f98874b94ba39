package normalise_test

import (
	"fmt"

	"github.com/simdex/simdex/index/normalise"
)

// Quote markers, at any depth, and punctuation are not words: a reply's
// quotation has the form of the text it quotes.
func ExampleAppend_quotes() {
	for _, s := range []string{
		"Dear all,\nthe schedule is 7 years.",
		"> Dear all,\n> the schedule is 7 years.",
		">> Dear all,\n>> the schedule is 7 years.",
		"> > > Dear all,\n> > > the schedule is 7 years.",
	} {
		out, _ := normalise.Append(nil, []byte(s))
		fmt.Printf("%q\n", out)
	}
	// Output:
	// "dear all the schedule is 7 years"
	// "dear all the schedule is 7 years"
	// "dear all the schedule is 7 years"
	// "dear all the schedule is 7 years"
}

// Punctuation, footnote marks, bullets and underlines become one space.
func ExampleAppend_punctuation() {
	for _, s := range []string{
		`He said: "Stop!" [4]`,
		"Title\n=====\n* one\n- two",
		"Ça coûte 5 € — ½ prix",
	} {
		out, _ := normalise.Append(nil, []byte(s))
		fmt.Printf("%q\n", out)
	}
	// Output:
	// "he said stop 4"
	// "title one two"
	// "ça coûte 5 1 2 prix"
}

// A word hyphenated at a line end is joined when a letter follows on the
// next line; other hyphens separate words.
func ExampleAppend_hyphenation() {
	for _, s := range []string{
		"docu-\n  ment",
		"well-known e-mail",
		"pages 3-\n7",
		"> docu-\n> > ment",
		"docu-\n* ment",
	} {
		out, _ := normalise.Append(nil, []byte(s))
		fmt.Printf("%q\n", out)
	}
	// Output:
	// "document"
	// "well known e mail"
	// "pages 3 7"
	// "document"
	// "docu ment"
}

// Each Han, Hiragana and Katakana character is a word, so punctuation and
// line breaks between them do not matter; other scripts keep their words.
func ExampleAppend_spaceless() {
	for _, s := range []string{
		"日本語の\nテキスト。",
		"ＳＴＲＡＳＳＥ Straße",
		"한국어 텍스트",
	} {
		out, _ := normalise.Append(nil, []byte(s))
		fmt.Printf("%q\n", out)
	}
	// Output:
	// "日 本 語 の テ キ ス ト"
	// "strasse strasse"
	// "한국어 텍스트"
}
