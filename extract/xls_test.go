package extract

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/simdex/simdex/index/sketch"
)

// biff appends a BIFF record.
func biff(b []byte, typ uint16, data ...[]byte) []byte {
	var body []byte
	for _, d := range data {
		body = append(body, d...)
	}
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

func u16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// cell is the row, column and format index of a cell record.
func cell(row, col uint16) []byte { return append(append(u16(row), u16(col)...), 0, 0) }

// makeWorkbook writes a BIFF8 Workbook stream with one sheet "S" whose
// cells use every record the reader knows; the second shared string is
// split across a CONTINUE record, its second half in UTF-16.
func makeWorkbook(filepass bool) []byte {
	bof := append(u16(0x0600), make([]byte, 14)...)
	var g []byte
	g = biff(g, biffBOF, bof)
	if filepass {
		g = biff(g, biffFilePass, make([]byte, 6))
	}
	sheetName := append([]byte{1, 0}, 'S')
	boundAt := len(g)
	g = biff(g, biffBoundSheet, u32(0), []byte{0, 0}, sheetName)
	sst := append(u32(2), u32(2)...)
	sst = append(sst, append(u16(5), 0)...)
	sst = append(sst, "hello"...)
	sst = append(sst, append(u16(6), 0)...)
	sst = append(sst, "wor"...)
	g = biff(g, biffSST, sst)
	g = biff(g, biffContinue, []byte{1}, u16('l'), u16('d'), u16('é'))
	g = biff(g, biffEOF)
	binary.LittleEndian.PutUint32(g[boundAt+4:], uint32(len(g)))
	s := biff(nil, biffBOF, bof)
	s = biff(s, biffLabelSST, cell(0, 1), u32(1))
	s = biff(s, biffLabelSST, cell(0, 0), u32(0))
	s = biff(s, biffNumber, cell(1, 0), u64f(2.5))
	s = biff(s, biffRK, cell(1, 1), u32(42<<2|2))
	s = biff(s, biffMulRK, u16(2), u16(0), u16(0), u32(7<<2|2), u16(0), u32(150<<2|3), u16(1))
	s = biff(s, biffFormula, cell(3, 0), []byte{0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	s = biff(s, biffString, u16(3), []byte{0}, []byte("fx!"))
	s = biff(s, biffBoolErr, cell(3, 1), []byte{1, 0})
	s = biff(s, biffLabel, cell(4, 0), u16(5), []byte{0}, []byte("label"))
	s = biff(s, biffEOF)
	return append(g, s...)
}

func u64f(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }

func TestXLS(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Workbook", data: makeWorkbook(false)}}, nil))
	const want = "hello\tworldé\n2.5\t42\n7\t1.5\nfx!\t1\nlabel\n"
	if d.Err != nil || d.MediaType != mediaXLS || d.Text != want || d.Meta.Extra["sheet names"] != "S" {
		t.Errorf("%s %v %q %v", d.MediaType, d.Err, d.Text, d.Meta.Extra)
	}
	d = extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Workbook", data: makeWorkbook(true)}}, nil))
	if !errors.Is(d.Err, ErrEncrypted) {
		t.Errorf("FILEPASS: %v", d.Err)
	}
	wb := makeWorkbook(false)
	d = extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Workbook", data: wb[:len(wb)-10]}}, nil))
	if !errors.Is(d.Err, ErrMalformed) {
		t.Errorf("truncated: %v", d.Err)
	}
}

// TestXLSNumbers checks the numeric trading report of three sheets
// (make.sh): Calc's BIFF8 and Gnumeric's BIFF5 give the expected text
// (numbers, formula results with SHRFMLA and ARRAY records, a string
// result, dates by their format), and are near-copies of its XLSX twin.
func TestXLSNumbers(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	want := string(readLegacy(t, "trading-report.txt"))
	twin := extractBytes(t, x, "trading-report.xlsx", "", readLegacy(t, "trading-report.xlsx"))
	for _, name := range []string{"trading-report.xls", "trading-report.biff5.xls"} {
		d := extractBytes(t, x, name, "", readLegacy(t, name))
		if d.Err != nil || d.Text != want || d.Meta.Extra["sheet names"] != "Trades, Positions, Summary" {
			t.Errorf("%s: %v %v\n%s", name, d.Err, d.Meta.Extra, d.Text)
		}
		r := sketch.Resemblance(textSketch(t, d.Text).MinHash, textSketch(t, twin.Text).MinHash)
		t.Logf("%s: resemblance with the XLSX twin %.3f", name, r)
		if r < minLegacyResemblance {
			t.Errorf("%s: resemblance with the XLSX twin %.3f", name, r)
		}
	}
}

// biff5Workbook writes a BIFF5 Book stream in code page cp with a
// worksheet "Лист" of labels, an RSTRING, a date (custom format and
// built-in 14), a time, a number in the 1904 system when date1904, and a
// string formula result; sheetAt overrides the sheet's offset.
func biff5Workbook(date1904 bool, sheetAt int) []byte {
	bof := append(u16(0x0500), make([]byte, 6)...)
	cp1251 := func(s string) []byte { b, _ := charmap.Windows1251.NewEncoder().Bytes([]byte(s)); return b }
	var g []byte
	g = biff(g, biffBOF, bof)
	g = biff(g, biffCodePage, u16(1251))
	if date1904 {
		g = biff(g, biffDateMode, u16(1))
	}
	g = biff(g, biffFormat, u16(164), []byte{10}, []byte("yyyy-mm-dd"))
	for _, f := range []uint16{0, 164, 14, 21} {
		g = biff(g, biffXF, u16(0), u16(f), make([]byte, 12))
	}
	boundAt := len(g)
	g = biff(g, biffBoundSheet, u32(0), []byte{0, 0, 4}, cp1251("Лист"))
	g = biff(g, biffEOF)
	off := uint32(len(g))
	if sheetAt >= 0 {
		off = uint32(sheetAt)
	}
	binary.LittleEndian.PutUint32(g[boundAt+4:], off)
	xf := func(row, col, xf uint16) []byte { return append(append(u16(row), u16(col)...), u16(xf)...) }
	s := biff(nil, biffBOF, bof)
	s = biff(s, biffLabel, xf(0, 0, 0), u16(6), cp1251("Привет"))
	s = biff(s, biffRString, xf(0, 1, 0), u16(3), []byte("mir"), []byte{0})
	s = biff(s, biffNumber, xf(1, 0, 1), u64f(36955))
	s = biff(s, biffRK, xf(1, 1, 2), u32(36956<<2|2))
	s = biff(s, biffNumber, xf(1, 2, 3), u64f(0.6875))
	s = biff(s, biffFormula, xf(2, 0, 0), []byte{0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, make([]byte, 6))
	s = biff(s, biffString, u16(2), []byte("up"))
	s = biff(s, biffEOF)
	return append(g, s...)
}

// TestXLSBIFF5 checks an Excel 5.0/95 workbook: byte strings in its code
// page, dates by their format in both date systems, a string formula's
// result; and a BOUNDSHEET offset outside the stream is a recorded error.
func TestXLSBIFF5(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Book", data: biff5Workbook(false, -1)}}, nil))
	const want = "Привет\tmir\n2001-03-05\t3/6/2001\t16:30:00\nup\n"
	if d.Err != nil || d.MediaType != mediaXLS || d.Text != want || d.Meta.Extra["sheet names"] != "Лист" {
		t.Errorf("%s %v %q %v", d.MediaType, d.Err, d.Text, d.Meta.Extra)
	}
	d = extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Book", data: biff5Workbook(true, -1)}}, nil))
	if !strings.Contains(d.Text, "2005-03-06\t3/7/2005") {
		t.Errorf("1904 date system: %q", d.Text)
	}
	for _, at := range []int{1 << 30, 3} {
		d = extractBytes(t, x, "a.xls", "", buildCFB([]*cfbNode{{name: "Book", data: biff5Workbook(false, at)}}, nil))
		if !errors.Is(d.Err, ErrMalformed) || d.Meta.Extra["sheet names"] != "Лист" {
			t.Errorf("sheet at %d: %v %v", at, d.Err, d.Meta.Extra)
		}
	}
}

// TestXLSDateFormats checks the rendering of date and time formats.
func TestXLSDateFormats(t *testing.T) {
	tests := []struct {
		layout string
		x      float64
		want   string
	}{
		{"m/d/yyyy", 36955, "3/5/2001"},
		{"d-mmm-yy", 36955, "5-Mar-01"},
		{"dddd, mmmm dd, yyyy", 36955, "Monday, March 05, 2001"},
		{"h:mm AM/PM", 0.6875, "4:30 PM"},
		{"hh:mm:ss", 0.6875, "16:30:00"},
		{"[h]:mm:ss", 1.5, "36:00:00"},
		{"mm:ss.0", 0.00001, "00:00.9"},
		{`[$-409]yyyy\-mm\-dd "at" h:mm`, 36955.25, "2001-03-05 at 6:00"},
	}
	for _, tc := range tests {
		if !isDateFormat(tc.layout) {
			t.Errorf("%q is not a date format", tc.layout)
			continue
		}
		tm, _ := xlsTime(tc.x, false)
		if got := formatDate(tc.layout, tm, tc.x); got != tc.want {
			t.Errorf("%q of %v: %q, want %q", tc.layout, tc.x, got, tc.want)
		}
	}
	for _, f := range []string{"General", "0.00", "#,##0;(#,##0)", `0 "days"`, "[Red]0%"} {
		if isDateFormat(f) {
			t.Errorf("%q taken for a date format", f)
		}
	}
	if got := xlsNumber(17.208333333333332); got != "17.2083333333333" {
		t.Errorf("General: %q", got)
	}
}
