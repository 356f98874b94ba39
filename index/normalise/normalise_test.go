package normalise

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/simdex/simdex/internal/corpustest"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"only space", " \t\r\n ", ""},
		{"only punctuation", " -- ... >> ", ""},
		{"ascii lower", "hello world", "hello world"},
		{"ascii upper", "HELLO World", "hello world"},
		{"all letters", "ABCDEFGHIJKLMNOPQRSTUVWXYZ@[`{", "abcdefghijklmnopqrstuvwxyz"},
		{"digits", "Version 2.0, 1,000 items", "version 2 0 1 000 items"},
		{"collapse runs", "a  b\t\tc\r\n\r\nd", "a b c d"},
		{"trim", "\n\n  leading and trailing \t\n", "leading and trailing"},
		{"controls", "a\x00b\x1fc\x7fd", "a b c d"},
		{"long space run", "a" + strings.Repeat(" ", 40) + "b", "a b"},
		{"punctuation", `He said: "Stop!" (twice) [4]; ok?`, "he said stop twice 4 ok"},
		{"apostrophe", "don't l'école", "don t l école"},
		{"quote depth 1", "> Quoted text\n> goes on.", "quoted text goes on"},
		{"quote depth 3", ">>> Quoted text\n> > > goes on.", "quoted text goes on"},
		{"bullets and underlines", "Title\n=====\n\n* one\n- two\n• three", "title one two three"},
		{"markup", "<p>Hello_world</p> #tag @user a/b\\c", "p hello world p tag user a b c"},
		{"hyphenated at line end", "docu-\nment", "document"},
		{"hyphenated crlf and indent", "docu- \r\n   ment", "document"},
		{"hyphenated unicode", "docu\u2010\nment docu\u00ad\nment docu\u2011\u2028ment", "document document document"},
		{"hyphen inside line", "well-known e-mail", "well known e mail"},
		{"hyphen before digit", "pages 3-\n7 and x-\n7", "pages 3 7 and x 7"},
		{"hyphen after blank", "see -\nfoo", "see foo"},
		{"dashes at line end", "rule ----\nnext", "rule next"},
		{"hyphen before quote marker", "docu-\n> ment", "document"},
		{"quoted hyphenation", ">> docu-\n> > ment", "document"},
		{"hyphen before bullet", "docu-\n* ment", "docu ment"},
		{"two hyphens", "a-\nb-\nc", "abc"},
		{"nfkc ligature", "ﬁle ﬂow", "file flow"},
		{"nfkc fullwidth", "ＡＢＣ１２３！", "abc123"},
		{"nfkc nbsp", "a\u00a0\u00a0b", "a b"},
		{"ideographic space", "a\u3000b", "a b"},
		{"unicode line separators", "a\u2028\u2029b\u0085c", "a b c"},
		{"c1 control", "a\u0080b", "a b"},
		{"full fold sharp s", "Straße STRASSE", "strasse strasse"},
		{"fold greek", "ΣΊΣΥΦΟΣ", "σίσυφοσ"},
		{"kelvin", "\u212a", "k"},
		{"compose after ascii", "e\u0301te\u0301", "été"},
		{"compose across fast path", "abcdefghijklmnopqrstuvwxyzE\u0301", "abcdefghijklmnopqrstuvwxyzé"},
		{"precomposed upper", "ÉCOLE", "école"},
		{"soft hyphen", "docu\u00adment", "document"},
		{"zero width", "zero\u200bwidth\ufeff", "zerowidth"},
		{"bom", "\ufeffText", "text"},
		{"ignorable between base and mark", "e\u200b\u0301", "é"},
		{"mark kept in word", "q\u0308b ब\u093fन", "q\u0308b ब\u093fन"},
		{"spacing diaeresis", "a\u00a8", "a \u0308"},
		{"leading mark", "\u00a8x", "\u0308x"},
		{"japanese", "日本語　テキスト、です。", "日 本 語 テ キ ス ト で す"},
		{"japanese wrapped", "日本\n語", "日 本 語"},
		{"han and latin", "Go言語で", "go 言 語 で"},
		{"prolonged sound mark", "コーヒー", "コ ー ヒ ー"},
		{"hangul keeps words", "한국어 텍스트", "한국어 텍스트"},
		{"halfwidth katakana", "ｶﾀｶﾅ", "カ タ カ ナ"},
		{"dotted capital i", "İ", "i\u0307"},
		{"latin-1 letters", "ÀÉÎÕÜ×÷ÿ Þß", "àéîõü ÿ þss"},
		{"latin-1 then mark", "Ê\u0301", "ế"},
		{"latin-1 and symbols", "Ça coûte 5\u00a0€ ½", "ça coûte 5 1 2"},
		{"inert punctuation", "“Quoted” — and ‘single’ © 2024", "quoted and single 2024"},
		{"cherokee capital", "Ꭰ", "Ꭰ"},
		{"cherokee small", "ꭰᏸ", "ᎠᏰ"},
		{"french", "Élève à l'école, où l'été est chaud.", "élève à l école où l été est chaud"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Append(nil, []byte(tt.in))
			if err != nil {
				t.Fatalf("Append(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Append(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if ref := reference(t, []byte(tt.in)); ref != tt.want {
				t.Errorf("reference(%q) = %q, want %q", tt.in, ref, tt.want)
			}
		})
	}
}

// TestQuoteDepth checks that a text quoted at depths 1, 2 and 3, in the
// styles mail programs use, has the canonical form of the text itself.
func TestQuoteDepth(t *testing.T) {
	text := "Dear all,\nthe retention schedule for con-\ntracts is\nseven years; see section 4.2 (\"Records\").\n\n-- \nAlice"
	want, err := Append(nil, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"> ", ">> ", "> > ", ">>> ", "> > > ", " > ", ">"} {
		quoted := prefix + strings.ReplaceAll(text, "\n", "\n"+prefix)
		got, err := Append(nil, []byte(quoted))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("quoted with %q: %q, want %q", prefix, got, want)
		}
	}
}

// TestAppendEveryRune checks every code point alone and after a letter, where
// it may compose.
func TestAppendEveryRune(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	var nz Normaliser
	var once, twice []byte
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), "A" + string(r)} {
			var err error
			if once, err = nz.Append(once[:0], []byte(s)); err != nil {
				t.Fatalf("Append(%q): %v", s, err)
			}
			if twice, err = nz.Append(twice[:0], once); err != nil {
				t.Fatalf("Append(%q): %v", once, err)
			}
			if !bytes.Equal(once, twice) {
				t.Errorf("%U: not idempotent: %q, then %q", r, once, twice)
			}
		}
	}
}

// TestSpaceless checks spaceless's fast ranges against its definition.
func TestSpaceless(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
		if got := spaceless(r); got != want {
			t.Errorf("spaceless(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestAppendKeepsDst(t *testing.T) {
	dst := []byte("prefix|")
	got, err := Append(dst, []byte("  Hello  "))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "prefix|hello" {
		t.Errorf("got %q", got)
	}
	got, err = Append([]byte("keep"), []byte("ok\xffno"))
	if err == nil || string(got) != "keep" {
		t.Errorf("on error got %q, %v; want dst unchanged and an error", got, err)
	}
}

func TestAppendInvalidUTF8(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		offset int
	}{
		{"lone continuation", "abc\x80", 3},
		{"truncated", "héllo\xc3", 6},
		{"bad second byte", "\xc3\x28", 0},
		{"surrogate", "ab\xed\xa0\x80", 2},
		{"overlong", "\xc0\xaf", 0},
		{"after long ascii", strings.Repeat("x", 100) + "é\xff", 102},
		{"too large", "\xf4\x90\x80\x80", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Append(nil, []byte(tt.in))
			if !errors.Is(err, ErrInvalidUTF8) {
				t.Fatalf("err = %v, want ErrInvalidUTF8", err)
			}
			var e *InvalidUTF8Error
			if !errors.As(err, &e) || e.Offset != tt.offset {
				t.Errorf("err = %v, want offset %d", err, tt.offset)
			}
		})
	}
}

func TestIgnorable(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := ignorable(r), ignorableSlow(r); got != want {
			t.Errorf("ignorable(%U) = %v, want %v", r, got, want)
		}
		if ignorableSlow(r) {
			n++
		}
	}
	// DerivedCoreProperties.txt of Unicode 15.0 lists 4174 code points;
	// U+034F is kept on purpose.
	if n != 4173 {
		t.Errorf("%d ignorable code points, want 4173", n)
	}
}

// TestUnicodeVersion fails when a dependency or toolchain upgrade changes a
// Unicode table Append depends on. Check that the output is unchanged, or bump
// Version, before updating UnicodeVersion.
func TestUnicodeVersion(t *testing.T) {
	for name, v := range map[string]string{
		"unicode":                        unicode.Version,
		"golang.org/x/text/unicode/norm": norm.Version,
		"golang.org/x/text/cases":        cases.UnicodeVersion,
	} {
		if v != UnicodeVersion {
			t.Errorf("%s has Unicode %s, normalise.UnicodeVersion is %s: bump Version if the output changes", name, v, UnicodeVersion)
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	ascii := bytes.Repeat([]byte("The Quick  brown\tfox.\n"), 100)
	uni := bytes.Repeat([]byte("Élève à l'ÉCOLE, straße ﬁle 日本語\u00a0"), 100)
	var nz Normaliser
	tests := []struct {
		name   string
		append func(dst, src []byte) ([]byte, error)
		in     []byte
		max    float64
	}{
		{"ascii", Append, ascii, 0},
		{"unicode", Append, uni, 1},
		{"unicode with Normaliser", nz.Append, uni, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, 0, 8*len(tt.in))
			allocs := testing.AllocsPerRun(20, func() {
				var err error
				buf, err = tt.append(buf[:0], tt.in)
				if err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tt.max {
				t.Errorf("%v allocations per run, want at most %v", allocs, tt.max)
			}
		})
	}
}

func TestAppendCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpustest.Suite(t), "debian-docs/raw/maint-guide*/usr/share/doc/*/maint-guide.*.txt"))
	if len(files) == 0 {
		t.Fatal("no maint-guide TXT editions in the corpora")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstReference(t, src)
		})
	}
}

// reference is a direct, slow implementation of the canonical form over
// the whole input at once.
func reference(t testing.TB, src []byte) string {
	t.Helper()
	if !utf8.Valid(src) {
		t.Fatalf("reference given invalid UTF-8 %q", src)
	}
	s := norm.NFKC.String(joinRef(string(src)))
	s = cases.Fold().String(s)
	s = strings.Map(func(r rune) rune {
		switch {
		case ignorable(r):
			return -1
		case r >= 0xab70 && r <= 0xabbf: // see filterFolded
			return r - 0xab70 + 0x13a0
		case r >= 0x13f8 && r <= 0x13fd:
			return r - 8
		}
		return r
	}, s)
	s = norm.NFKC.String(s)
	var words []string
	var word []rune
	alone := false // word is a character of a script without spaces
	flush := func() {
		if len(word) > 0 {
			words = append(words, string(word))
		}
		word, alone = nil, false
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー':
			flush()
			word, alone = []rune{r}, true
		case unicode.IsMark(r):
			word = append(word, r)
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if alone {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return strings.Join(words, " ")
}

// joinRef joins the words hyphenated at line ends of s, as the package
// documentation of hyphens says, a rune at a time.
func joinRef(s string) string {
	rs := []rune(s)
	var out []rune
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if strings.ContainsRune("-\u00ad\u2010\u2011", r) && len(out) > 0 &&
			(unicode.IsLetter(out[len(out)-1]) || unicode.IsMark(out[len(out)-1])) {
			j := i + 1
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t') {
				j++
			}
			n := 0
			switch {
			case j+1 < len(rs) && rs[j] == '\r' && rs[j+1] == '\n':
				n = 2
			case j < len(rs) && strings.ContainsRune("\n\r\v\f\u0085\u2028\u2029", rs[j]):
				n = 1
			}
			if n > 0 {
				j += n
				for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t' || rs[j] == '>') {
					j++
				}
				if j < len(rs) && unicode.IsLetter(rs[j]) {
					i = j - 1
					continue
				}
			}
		}
		out = append(out, r)
	}
	return string(out)
}

func checkAgainstReference(t *testing.T, src []byte) {
	t.Helper()
	got, err := Append(nil, src)
	if !utf8.Valid(src) {
		if !errors.Is(err, ErrInvalidUTF8) {
			t.Fatalf("Append(%q) err = %v, want ErrInvalidUTF8", src, err)
		}
		var e *InvalidUTF8Error
		if !errors.As(err, &e) || utf8.Valid(src[:e.Offset]) == false || e.Offset >= len(src) {
			t.Fatalf("Append(%q) err = %v: offset is not the first invalid byte", src, err)
		}
		if r, _ := utf8.DecodeRune(src[e.Offset:]); r != utf8.RuneError {
			t.Fatalf("Append(%q) err = %v: offset does not start an invalid sequence", src, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Append(%q): %v", src, err)
	}
	if want := reference(t, src); string(got) != want {
		t.Fatalf("Append differs from the reference: %s", diff(got, []byte(want)))
	}
	again, err := Append(nil, got)
	if err != nil {
		t.Fatalf("Append(Append(%q)): %v", src, err)
	}
	if !bytes.Equal(again, got) {
		t.Fatalf("not idempotent: %s", diff(again, got))
	}
}

// diff describes where got and want first differ, with a little context.
func diff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-20)
	return fmt.Sprintf("at byte %d: got …%q…, want …%q…", i, got[lo:min(len(got), i+20)], want[lo:min(len(want), i+20)])
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		"", "Hello, World!", "a  b", "Straße", "e\u0301", "ﬁ", "\u00a8x", "日本語\u3000テキスト",
		"\xff", "abc\xc3", strings.Repeat("ab ", 20) + "É", "x\u200b\u0301",
		"ΣΊΣΥΦΟΣ ἈΙ ᾼ", "ÀÉÎ ß ×", "Ê\u0301", "Ꭰꭰ", "\u1100\u1160\u1161", "a" + strings.Repeat("\u0301", 40),
		"docu-\nment é-\r\n  té", "> > quoted\n> > text", "日本\u3099語ー。カ", "x-\u2028y\u00ad\nz",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstReference)
}

func benchInputs(b *testing.B) map[string][]byte {
	ascii := bytes.Repeat([]byte("The Quick brown fox jumps over the lazy dog; it was\nnot amused.  Indented:\n    more text here. "), 10000)
	in := map[string][]byte{"ascii": ascii}
	if norm, err := Append(nil, ascii); err == nil {
		in["normalised"] = norm
	}
	in["french"] = bytes.Repeat([]byte("Élève à l'école, où l'été est chaud et où les garçons jouent. "), 16000)
	in["japanese"] = bytes.Repeat([]byte("日本語のテキストは、空白で単語を区切りません。"), 16000)
	return in
}

func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"ascii", "normalised", "french", "japanese"} {
		src := benchInputs(b)[name]
		b.Run(name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(src))
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				var err error
				if dst, err = Append(dst[:0], src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
