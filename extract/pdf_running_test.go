package extract

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/corpustest"
)

// pagesOf joins pages as parsePDF leaves them, with their start offsets.
func pagesOf(pages []string) ([]byte, []int) {
	var text []byte
	var starts []int
	for _, p := range pages {
		starts = append(starts, len(text))
		text = append(text, p+"\n\n"...)
	}
	return text, starts
}

func TestDropRunning(t *testing.T) {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")
	body := func(i int) string {
		return fmt.Sprintf("The %s clause starts the page.\nThen %s and %s follow.", words[i], words[i+1], words[i+2])
	}
	tests := []struct {
		name  string
		page  func(i int) string // of page index i, from 0
		want  func(i int) string
		pages int
	}{
		{"header and bare number", func(i int) string {
			return fmt.Sprintf("ACME Handbook, Release 2.1\n%s\n%d", body(i), i+1)
		}, body, 6},
		{"page n of m", func(i int) string { return fmt.Sprintf("%s\nPage %d of 6", body(i), i+1) }, body, 6},
		{"dashed numbers", func(i int) string { return fmt.Sprintf("— %d —\n%s", i+3, body(i)) }, body, 6},
		{"numbered section footers", func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf("%s\n%d Chapter %d. Scope", body(i), i+11, i/3+1)
			}
			return fmt.Sprintf("%s\n%d.%d. Section title number %d %d", body(i), i, i, i, i+11)
		}, body, 8},
		{"roman numerals", func(i int) string {
			return fmt.Sprintf("%s\n%s", body(i), []string{"i", "ii", "iii", "iv", "v", "vi"}[i])
		}, body, 6},
		{"too few pages", func(i int) string { return fmt.Sprintf("Header\n%s", body(i)) },
			func(i int) string { return fmt.Sprintf("Header\n%s", body(i)) }, 2},
		{"body lines are kept", func(i int) string {
			return fmt.Sprintf("%s\nThe %s total is %d", body(i), words[i+3], i*5)
		}, func(i int) string {
			return fmt.Sprintf("%s\nThe %s total is %d", body(i), words[i+3], i*5)
		}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in, want []string
			for i := range tt.pages {
				in = append(in, tt.page(i))
				want = append(want, tt.want(i))
			}
			text, starts := pagesOf(in)
			wantText, _ := pagesOf(want)
			if got := dropRunning(text, starts); string(got) != string(wantText) {
				t.Errorf("got\n%s\nwant\n%s", got, wantText)
			}
		})
	}
}

func TestDropRunningJoinsHyphenAcrossPages(t *testing.T) {
	text, starts := pagesOf([]string{"Header\nthe docu-", "Header\nment goes on", "Header\nthe end.", "Header\nAnd more"})
	want := "the document goes on\n\nthe end.\n\nAnd more\n\n"
	if got := dropRunning(text, starts); string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestPDFRunningLinesPolicy extracts the Debian policy manual's PDF and
// checks that its running header, footers and page numbers are gone, and
// that its words are found in the TXT edition.
func TestPDFRunningLinesPolicy(t *testing.T) {
	full := corpustest.Suite(t)
	x := newTestExtractor(t, DefaultLimits())
	dir := filepath.Join(full, "debian-docs", "raw/debian-policy/usr/share/doc/debian-policy")
	pdf := extractFile(t, x, filepath.Join(dir, "policy.pdf")).Text
	txt := extractFile(t, x, filepath.Join(dir, "policy.txt")).Text
	if n := strings.Count(pdf, "Debian Policy Manual, Release"); n > 1 {
		t.Errorf("the running header is left %d times", n)
	}
	for _, footer := range []string{"\n2 CONTENTS\n", "\nCONTENTS 1\n", "\nviii\n", "\n4 Chapter 1. About this manual\n"} {
		if strings.Contains(pdf, footer) {
			t.Errorf("footer %q is left", footer)
		}
	}
	p, q := wordGrams(pdf), wordGrams(txt)
	c := containment(p, q)
	t.Logf("PDF in TXT %.3f, TXT in PDF %.3f (word 5-grams)", c, containment(q, p))
	if c < 0.85 {
		t.Errorf("PDF in TXT containment %.3f < 0.85", c)
	}
}

// wordGrams returns the word 5-grams of s, a word being a maximal run of
// letters and digits, lower-cased (the truth of issue 28).
func wordGrams(s string) map[string]struct{} {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 0x7f)
	})
	out := make(map[string]struct{})
	for i := 0; i+5 <= len(words); i++ {
		out[strings.Join(words[i:i+5], " ")] = struct{}{}
	}
	return out
}

// FuzzDropRunning splits the fuzzer's text into pages at form feeds and
// checks that dropRunning never panics nor adds a line.
func FuzzDropRunning(f *testing.F) {
	f.Add("Header\nbody one\n1\fHeader\nbody two\n2\fHeader\nbody-\fthree\n3\fHeader\n- 4 -")
	f.Add("Page 1 of 3\fPage 2 of 3\fPage 3 of 3\fiv\f\f\f")
	f.Fuzz(func(t *testing.T, s string) {
		text, starts := pagesOf(strings.Split(s, "\f"))
		got := dropRunning(text, starts)
		if strings.Count(string(got), "\n") > strings.Count(string(text), "\n") {
			t.Fatalf("dropRunning(%q) = %q: more lines", text, got)
		}
	})
}
