package extract

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
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
