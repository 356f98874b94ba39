package extract

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/index/sketch"
)

// legacyFixture is a legacy Office file of testdata/legacy, its OOXML
// twin there, and the Debian manual page both were made from (make.sh).
type legacyFixture struct {
	file, twin, source, media string
}

var legacyFixtures = []legacyFixture{
	{"faq-choosing.doc", "faq-choosing.docx", "debian-faq/usr/share/doc/debian/FAQ/choosing.en.html", mediaDOC},
	{"maint-guide-start.fr.doc", "maint-guide-start.fr.docx", "maint-guide-fr/usr/share/doc/maint-guide-fr/html/start.fr.html", mediaDOC},
	{"maint-guide-start.ja.doc", "maint-guide-start.ja.docx", "maint-guide-ja/usr/share/doc/maint-guide-ja/html/start.ja.html", mediaDOC},
	{"faq-choosing.word6.doc", "faq-choosing.docx", "debian-faq/usr/share/doc/debian/FAQ/choosing.en.html", mediaDOC},
	{"maint-guide-start.fr.word95.doc", "maint-guide-start.fr.docx", "maint-guide-fr/usr/share/doc/maint-guide-fr/html/start.fr.html", mediaDOC},
	{"policy-scope.xls", "policy-scope.xlsx", "debian-policy/usr/share/doc/debian-policy/policy.html/ch-scope.html", mediaXLS},
	{"policy-scope.biff5.xls", "policy-scope.xlsx", "debian-policy/usr/share/doc/debian-policy/policy.html/ch-scope.html", mediaXLS},
	{"devref-l10n.ppt.gz", "devref-l10n.pptx", "developers-reference/usr/share/developers-reference/l10n.html", mediaPPT},
}

// readLegacy reads a fixture of testdata/legacy, gunzipping a .gz.
func readLegacy(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "legacy", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	data, err = io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// textSketch sketches text as the index does: normalised, then MinHash
// and Mod-n samples with the default parameters.
func textSketch(t *testing.T, text string) sketch.Sketch {
	t.Helper()
	norm, err := normalise.Append(nil, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var s sketch.Sketch
	sketch.Compute(sketch.DefaultParams(), norm, &s)
	return s
}

// minLegacyResemblance is the resemblance every legacy fixture must reach
// with its OOXML twin and with its source.
const minLegacyResemblance = 0.8

// TestLegacyNearCopies checks that each legacy fixture is a near-copy of
// its OOXML twin and of the manual page it was made from, and that its
// document properties match its twin's.
func TestLegacyNearCopies(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	for _, fx := range legacyFixtures {
		t.Run(fx.file, func(t *testing.T) {
			d := extractBytes(t, x, strings.TrimSuffix(fx.file, ".gz"), "", readLegacy(t, fx.file))
			if d.MediaType != fx.media || d.Err != nil {
				t.Fatalf("%s: %v", d.MediaType, d.Err)
			}
			twin := extractBytes(t, x, fx.twin, "", readLegacy(t, fx.twin))
			src := extractFile(t, x, filepath.Join(corpusDir, "raw", fx.source))
			ls, ts, ss := textSketch(t, d.Text), textSketch(t, twin.Text), textSketch(t, src.Text)
			rt, rs := sketch.Resemblance(ls.MinHash, ts.MinHash), sketch.Resemblance(ls.MinHash, ss.MinHash)
			t.Logf("resemblance with twin %.3f, with source %.3f (twin with source %.3f)", rt, rs, sketch.Resemblance(ts.MinHash, ss.MinHash))
			if rt < minLegacyResemblance || rs < minLegacyResemblance {
				t.Errorf("resemblance with twin %.3f, with source %.3f, want >= %.1f", rt, rs, minLegacyResemblance)
			}
			if d.Meta.Title != twin.Meta.Title || d.Meta.Author != twin.Meta.Author {
				t.Errorf("properties: title %q author %q, twin %q %q", d.Meta.Title, d.Meta.Author, twin.Meta.Title, twin.Meta.Author)
			}
		})
	}
}
