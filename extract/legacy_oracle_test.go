package extract

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/simdex/simdex/index/normalise"
)

// word6Fixtures are the Word 6.0 and 95 fixtures of testdata/legacy: no
// program of Debian writes that format, so TestWriteWord6Fixtures writes
// them from the text of their Word 97 twin (make.sh runs it), and
// antiword, which reads them in TestLegacyOracles, is the independent
// check.
var word6Fixtures = []struct {
	file, twin string
	nFib, lid  uint16
	pieces     int
}{
	{"faq-choosing.word6.doc", "faq-choosing.doc", 101, 0x0409, 0},
	{"maint-guide-start.fr.word95.doc", "maint-guide-start.fr.doc", 104, 0x040C, 7},
}

// TestWriteWord6Fixtures writes the Word 6.0/95 fixtures when
// SIMDEX_WRITE_FIXTURES is set (by make.sh); otherwise it checks that the
// committed files are what it would write.
func TestWriteWord6Fixtures(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	for _, fx := range word6Fixtures {
		twin := extractBytes(t, x, fx.twin, "", readLegacy(t, fx.twin))
		// Characters outside Windows-1252 become '?', as Word 6 saved them.
		var b strings.Builder
		for _, r := range strings.ReplaceAll(twin.Text, "\n", "\r") {
			if _, ok := charmap.Windows1252.EncodeRune(r); !ok {
				r = '?'
			}
			b.WriteRune(r)
		}
		text := b.String()
		wd := doc6Streams(t, text, fx.nFib, fx.lid, charmap.Windows1252, fx.pieces)
		created := time.Date(1999, 6, 1, 9, 30, 0, 0, time.UTC)
		data := buildCFB([]*cfbNode{{name: "WordDocument", data: wd},
			{name: "\x05SummaryInformation", data: summaryStream(twin.Meta.Title, twin.Meta.Author, created, created.Add(time.Hour))}}, nil)
		path := filepath.Join("testdata", "legacy", fx.file)
		if os.Getenv("SIMDEX_WRITE_FIXTURES") != "" {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, data) {
			t.Errorf("%s is not what make.sh writes (%v): run it", path, err)
		}
	}
}

// oracle runs a Debian reader of legacy Office files on a fixture:
// antiword for Word, xls2csv (catdoc) for Excel. They are installed by
// scripts/install-oracles.sh (make unit); missing, the test fails.
func oracle(t *testing.T, path string) string {
	t.Helper()
	var cmd *exec.Cmd
	switch {
	case strings.HasSuffix(path, ".doc"):
		cmd = exec.Command("antiword", "-w", "0", "-m", "UTF-8.txt", path)
	case strings.HasSuffix(path, ".xls"):
		cmd = exec.Command("xls2csv", "-q", "0", "-d", "utf-8", "-c", "\t", path)
	default:
		t.Fatalf("no oracle for %s", path)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s (scripts/install-oracles.sh installs it)", cmd, err, stderr.String())
	}
	return string(out)
}

// fiveGrams is the set of word 5-grams of a text: its normalised words
// (lowercase letters and digits, as the index sees them) in order.
func fiveGrams(t *testing.T, text string) map[string]bool {
	t.Helper()
	norm, err := normalise.Append(nil, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(norm))
	set := make(map[string]bool)
	for i := 0; i+5 <= len(words); i++ {
		set[strings.Join(words[i:i+5], " ")] = true
	}
	return set
}

// gramShare is |A∩B| / min(|A|,|B|): how much of the shorter text the
// other one has, so that text one reader adds (antiword's footnote
// markers, xls2csv's sheet breaks) does not count against the other.
func gramShare(a, b map[string]bool) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	n := 0
	for g := range a {
		if b[g] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// oracleTwin names, for a fixture the oracle misreads, the twin it reads
// instead: xls2csv takes the UTF-16 strings that Gnumeric writes into
// BIFF5 under CODEPAGE 1200 for 8-bit ones, so it reads the BIFF8 file
// the BIFF5 one was made from.
var oracleTwin = map[string]string{"policy-scope.biff5.xls": "policy-scope.xls"}

// minOracleShare is the share of word 5-grams simdex's text and the
// oracle's must have in common.
const minOracleShare = 0.9

// TestLegacyOracles runs antiword or xls2csv on every DOC and XLS fixture,
// old and new: simdex reads each without error, and its text and the
// oracle's share at least minOracleShare of their word 5-grams.
func TestLegacyOracles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.doc"))
	if err != nil {
		t.Fatal(err)
	}
	xls, _ := filepath.Glob(filepath.Join("testdata", "legacy", "*.xls"))
	files = append(files, xls...)
	x := newTestExtractor(t, DefaultLimits())
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := oracle(t, path)
			if twin, ok := oracleTwin[filepath.Base(path)]; ok {
				want = oracle(t, filepath.Join("testdata", "legacy", twin))
			}
			d := extractBytes(t, x, filepath.Base(path), "", readLegacy(t, filepath.Base(path)))
			if d.Err != nil {
				t.Fatalf("the oracle reads it, simdex: %v", d.Err)
			}
			share := gramShare(fiveGrams(t, d.Text), fiveGrams(t, want))
			t.Logf("share of word 5-grams with the oracle: %.3f", share)
			if share < minOracleShare {
				t.Errorf("share %.3f < %.1f\nsimdex: %.300q\noracle: %.300q", share, minOracleShare, d.Text, want)
			}
		})
	}
}

// numericWorkbook writes a BIFF8 Workbook stream of numbers only, as a
// report generator may: a worksheet of NUMBER records and the record
// types outside MS-XLS that xls2csv reads as numbers, RK and MULRK rows,
// formulas with cached numbers and a string result after SHRFMLA and
// ARRAY records; a chart sheet; and a second worksheet.
func numericWorkbook() []byte {
	bof := func(dt uint16) []byte { return append(append(u16(0x0600), u16(dt)...), make([]byte, 12)...) }
	var g []byte
	g = biff(g, biffBOF, bof(5))
	var at []int
	for _, sh := range []struct {
		name string
		dt   byte
	}{{"Day", 0}, {"Chart1", 2}, {"Week", 0}} {
		at = append(at, len(g)+4)
		g = biff(g, biffBoundSheet, u32(0), []byte{0, sh.dt, byte(len(sh.name)), 0}, []byte(sh.name))
	}
	g = biff(g, biffEOF)
	sheet := func(rows func(s []byte) []byte) []byte {
		s := biff(nil, biffBOF, bof(0x10))
		return biff(rows(s), biffEOF)
	}
	day := sheet(func(s []byte) []byte {
		s = biff(s, biffNumber, cell(0, 0), u64f(1250.5))
		s = biff(s, 0x0003, cell(0, 1), u64f(980))
		s = biff(s, 0x0103, cell(0, 2), u64f(17.25))
		s = biff(s, 0x0303, cell(0, 3), u64f(-3.5))
		s = biff(s, biffInteger, cell(1, 0), []byte{0}, u16(4321))
		s = biff(s, biffRK, cell(1, 1), u32(1430<<2|2))
		s = biff(s, biffMulRK, u16(2), u16(0), u16(0), u32(7<<2|2), u16(0), u32(1688<<2|3), u16(0), u32(99<<2|2), u16(2))
		s = biff(s, biffFormula, cell(3, 0), u64f(21562.5), make([]byte, 6))
		s = biff(s, biffFormula, cell(3, 1), []byte{0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
		s = biff(s, 0x04BC, make([]byte, 10)) // SHRFMLA
		s = biff(s, 0x0221, make([]byte, 14)) // ARRAY
		s = biff(s, biffString, u16(4), []byte{0}, []byte("5150"))
		return s
	})
	chart := sheet(func(s []byte) []byte { return biff(s, 0x1002, make([]byte, 16)) }) // a chart's CHART record
	week := sheet(func(s []byte) []byte { return biff(s, biffNumber, cell(0, 0), u64f(88000)) })
	for i, sub := range [][]byte{day, chart, week} {
		binary.LittleEndian.PutUint32(g[at[i]:], uint32(len(g)))
		g = append(g, sub...)
	}
	for len(g) < 4096 { // past the mini stream cutoff, as Excel pads it
		g = append(g, 0)
	}
	return g
}

// TestXLSNumericOracle checks a workbook of numbers only against
// xls2csv: simdex finds the same numbers (the same words, in the same
// order), none of them dropped.
func TestXLSNumericOracle(t *testing.T) {
	data := buildCFB([]*cfbNode{{name: "Workbook", data: numericWorkbook()}}, nil)
	path := filepath.Join(t.TempDir(), "numbers.xls")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := oracle(t, path)
	d := extractBytes(t, newTestExtractor(t, DefaultLimits()), "numbers.xls", "", data)
	norm := func(s string) string {
		b, err := normalise.Append(nil, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if d.Err != nil || norm(d.Text) != norm(want) || d.Meta.Extra["sheet names"] != "Day, Chart1, Week" {
		t.Errorf("%v %v\nsimdex: %q\noracle: %q", d.Err, d.Meta.Extra, d.Text, want)
	}
}
