package extract

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/simdex/simdex/internal/corpustest"
	"golang.org/x/text/unicode/norm"
)

// corpusDir is the debian-docs part of the committed fixtures
// (testdata/corpora, see its README); the corpus suite's tests read the
// full corpus instead (corpustest.Suite).
var corpusDir = corpustest.Path("debian-docs")

// Thresholds for word 5-gram containment of one edition in another, set
// a little under what was measured on the debian-docs corpus (run with -v
// for the figures). Measured: TXT in PDF 0.795 (debian-reference, whose
// TXT edition draws tables as wrapped ASCII art) to 0.961; TXT in EPUB
// 0.986-0.989; HTML chapter in PDF 0.747-0.998; HTML chapter in TXT
// 0.685 (debian-reference tables again) to 0.998.
const (
	minTXTinPDF  = 0.75
	minTXTinEPUB = 0.95
	minHTMLinPDF = 0.70
	minHTMLinTXT = 0.65
)

type corpusEntry struct {
	file, work, lang, format, granularity string
}

func readCorpusIndex(t *testing.T, corpusDir string) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "index.tsv"))
	if err != nil {
		t.Fatalf("the debian-docs corpus is required: %v", err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 6 || c[0] == "file" {
			continue
		}
		out = append(out, corpusEntry{file: c[0], work: c[2], lang: c[3], format: c[4], granularity: c[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shingles returns the set of word 5-grams of s: NFKC, lower case, words
// of letters and digits, each CJK character a word of its own.
func shingles(s string) map[string]struct{} {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for _, r := range strings.ToLower(norm.NFKC.String(s)) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			words = append(words, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	out := make(map[string]struct{})
	for i := 0; i+5 <= len(words); i++ {
		out[strings.Join(words[i:i+5], " ")] = struct{}{}
	}
	return out
}

// containment is |a ∩ b| / |a|.
func containment(a, b map[string]struct{}) float64 {
	if len(a) == 0 {
		return 0
	}
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

func extractFile(t *testing.T, x *Extractor, path string) *Document {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := x.Extract(context.Background(), Object{Name: filepath.Base(path), Reader: f})
	if err != nil {
		t.Fatalf("extract %s: %v", path, err)
	}
	return d
}

// TestCrossFormat checks that the editions of each debian-docs work come
// out as near-copies of each other: the PDF (and EPUB) against the TXT
// edition, and each HTML chapter against the whole book.
func TestCrossFormat(t *testing.T) {
	corpusDir := filepath.Join(corpustest.Suite(t), "debian-docs")
	x := newTestExtractor(t, DefaultLimits())
	entries := readCorpusIndex(t, corpusDir)
	type key struct{ work, lang string }
	books := make(map[key]map[string][]string) // format -> files
	for _, e := range entries {
		if e.granularity != "whole" && e.format != "html" {
			continue
		}
		k := key{e.work, e.lang}
		if books[k] == nil {
			books[k] = make(map[string][]string)
		}
		f := e.format
		if f == "html" && e.granularity == "chapter" {
			f = "html-chapter"
		}
		books[k][f] = append(books[k][f], filepath.Join(corpusDir, e.file))
	}
	keys := make([]key, 0, len(books))
	for k := range books {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.work+a.lang, b.work+b.lang) })
	checked := 0
	for _, k := range keys {
		b := books[k]
		if len(b["pdf"]) == 0 && len(b["epub"]) == 0 || len(b["txt"]) == 0 && len(b["html-chapter"]) == 0 {
			continue
		}
		t.Run(k.work+"."+k.lang, func(t *testing.T) {
			var txt map[string]struct{}
			if len(b["txt"]) > 0 {
				txt = shingles(extractFile(t, x, b["txt"][0]).Text)
			}
			var pdf map[string]struct{}
			if len(b["pdf"]) > 0 {
				d := extractFile(t, x, b["pdf"][0])
				if d.MediaType != mediaPDF {
					t.Fatalf("%s sniffed as %s", b["pdf"][0], d.MediaType)
				}
				pdf = shingles(d.Text)
				if txt != nil {
					c := containment(txt, pdf)
					t.Logf("TXT in PDF %.3f, PDF in TXT %.3f (%s)", c, containment(pdf, txt), filepath.Base(b["pdf"][0]))
					if c < minTXTinPDF {
						t.Errorf("TXT in PDF containment %.3f < %.2f", c, minTXTinPDF)
					}
					checked++
				}
			}
			if len(b["epub"]) > 0 && txt != nil {
				epub := shingles(extractFile(t, x, b["epub"][0]).Text)
				c := containment(txt, epub)
				t.Logf("TXT in EPUB %.3f", c)
				if c < minTXTinEPUB {
					t.Errorf("TXT in EPUB containment %.3f < %.2f", c, minTXTinEPUB)
				}
			}
			var worstPDF, worstTXT = 1.0, 1.0
			for _, ch := range b["html-chapter"] {
				h := shingles(extractFile(t, x, ch).Text)
				switch base := filepath.Base(ch); {
				case len(h) < 50, strings.HasPrefix(base, "index."), base == "ap-flowcharts.html":
					continue // too short, a table of contents, or a diagram
				}
				if testing.Verbose() {
					t.Logf("%s: in PDF %.3f, in TXT %.3f", filepath.Base(ch), containment(h, pdf), containment(h, txt))
				}
				if pdf != nil {
					c := containment(h, pdf)
					worstPDF = min(worstPDF, c)
					if c < minHTMLinPDF {
						t.Errorf("%s in PDF: containment %.3f < %.2f", filepath.Base(ch), c, minHTMLinPDF)
					}
				}
				if txt != nil {
					c := containment(h, txt)
					worstTXT = min(worstTXT, c)
					if c < minHTMLinTXT {
						t.Errorf("%s in TXT: containment %.3f < %.2f", filepath.Base(ch), c, minHTMLinTXT)
					}
				}
			}
			if len(b["html-chapter"]) > 0 {
				t.Logf("HTML chapters: worst in PDF %.3f, worst in TXT %.3f", worstPDF, worstTXT)
			}
		})
	}
	if checked < 8 {
		t.Fatalf("only %d PDF/TXT pairs checked; the corpus is incomplete", checked)
	}
}

func newTestExtractor(t testing.TB, lim Limits) *Extractor {
	t.Helper()
	x, err := New(Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return x
}
