package eval

import (
	"fmt"
	"strings"
	"testing"
)

func TestTruthWords(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       string // words joined by "|"
	}{
		{"empty", "", ""},
		{"separators only", " \t\n-- ** >>> ...", ""},
		{"punctuation separates", "Hello, world! (it's) \"quoted\" [4]", "hello|world|it|s|quoted|4"},
		{"quote markers at any depth", "> > > the same words\n>> here", "the|same|words|here"},
		{"quoted equals unquoted", "> a b\n> c", "a|b|c"},
		{"markup remnants", "<p>para</p> **bold** _under_ ----", "p|para|p|bold|under"},
		{"digits are words", "version 2.0.1, 10e6 Hz", "version|2|0|1|10e6|hz"},
		{"case folded", "MiXeD CASE Straße STRASSE", "mixed|case|strasse|strasse"},
		{"compatibility forms", "ﬁle ＡＢＣ ²", "file|abc|2"},
		{"combining marks stay with their letter", "cafe\u0301 nai\u0308ve", "café|naïve"},
		{"decomposed equals composed", "e\u0301t\u00e9", "été"},
		{"lone mark separates", " \u0301 x", "x"},
		{"each han and kana letter is a word", "日本語の文書", "日|本|語|の|文|書"},
		{"katakana", "パッケージ", "パ|ッ|ケ|ー|ジ"},
		{"latin around han", "use dpkg命令to build", "use|dpkg|命|令|to|build"},
		{"hangul is written with spaces", "한국어 문서", "한국어|문서"},
		{"thai letters are words", "ไทย", "ไ|ท|ย"},
		{"cyrillic and greek", "Привет ΚΟΣΜΕ", "привет|κοσμε"},
		{"underscores and symbols separate", "snake_case a+b=c €5", "snake|case|a|b|c|5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var words []string
			TruthWords([]byte(tc.text), func(w []byte) { words = append(words, string(w)) })
			got := strings.Join(words, "|")
			if got != tc.want {
				t.Errorf("words of %q = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestWordsHash(t *testing.T) {
	a := WordsHash([]byte("> Hello, World.\n> Second line"))
	b := WordsHash([]byte("hello world second LINE"))
	if a != b {
		t.Error("same words, different separators: hashes differ")
	}
	if a == WordsHash([]byte("hello world second")) {
		t.Error("different words: hashes equal")
	}
}

func TestWordShinglesIgnoreSeparators(t *testing.T) {
	plain := "the quick brown fox jumps over the lazy dog again and again"
	for _, v := range []string{
		"> > " + strings.ReplaceAll(plain, " ", "\n> > "),
		"The \"quick\" brown-fox; jumps over -- the lazy dog, again (and) again!",
		"*the* quick **brown** fox — jumps\nover\n\nthe lazy _dog_ again/and again",
	} {
		if fmt.Sprint(WordShingles([]byte(v), ShingleWords)) != fmt.Sprint(WordShingles([]byte(plain), ShingleWords)) {
			t.Errorf("shingles of %q differ from the plain text's", v)
		}
	}
}

func BenchmarkWordShingles(b *testing.B) {
	text := []byte(strings.Repeat("> On Tue, someone wrote: the quick brown fox jumps over the lazy dog.\n", 2000))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		WordShingles(text, ShingleWords)
	}
}
