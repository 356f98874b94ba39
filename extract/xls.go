package extract

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// BIFF8 record types (MS-XLS 2.3).
const (
	biffFormula    = 0x0006
	biffEOF        = 0x000A
	biffFilePass   = 0x002F
	biffContinue   = 0x003C
	biffBoundSheet = 0x0085
	biffMulRK      = 0x00BD
	biffRString    = 0x00D6
	biffSST        = 0x00FC
	biffLabelSST   = 0x00FD
	biffNumber     = 0x0203
	biffLabel      = 0x0204
	biffBoolErr    = 0x0205
	biffString     = 0x0207
	biffRK         = 0x027E
	biffBOF        = 0x0809
)

// biffRecord is a record with the data of the CONTINUE records after it.
type biffRecord struct {
	typ  uint16
	segs [][]byte
}

// biffRecords splits a substream into records from off until its EOF
// record, joining CONTINUE records to the record they continue.
func biffRecords(b []byte, off int, fn func(r *biffRecord) bool) error {
	le := binary.LittleEndian
	var cur *biffRecord
	for off+4 <= len(b) {
		typ, n := le.Uint16(b[off:]), int(le.Uint16(b[off+2:]))
		if off+4+n > len(b) {
			return fmt.Errorf("%w: record 0x%04x at %d runs past the stream", ErrMalformed, typ, off)
		}
		data := b[off+4 : off+4+n]
		off += 4 + n
		if typ == biffContinue && cur != nil {
			cur.segs = append(cur.segs, data)
			continue
		}
		if cur != nil && !fn(cur) {
			return nil
		}
		cur = &biffRecord{typ: typ, segs: [][]byte{data}}
		if typ == biffEOF {
			fn(cur)
			return nil
		}
	}
	if cur != nil {
		fn(cur)
	}
	return fmt.Errorf("%w: substream without EOF record", ErrMalformed)
}

// biffReader reads across the segments of a record; at a segment
// boundary inside a string a new option byte is read (MS-XLS 2.5.294).
type biffReader struct {
	segs [][]byte
	seg  int
	pos  int
}

func (r *biffReader) avail() int {
	for r.seg < len(r.segs) && r.pos >= len(r.segs[r.seg]) {
		r.seg++
		r.pos = 0
	}
	if r.seg >= len(r.segs) {
		return 0
	}
	return len(r.segs[r.seg]) - r.pos
}

func (r *biffReader) bytes(n int) ([]byte, bool) {
	if r.avail() < n {
		return nil, false
	}
	b := r.segs[r.seg][r.pos : r.pos+n]
	r.pos += n
	return b, true
}

func (r *biffReader) skip(n int) bool {
	for n > 0 {
		a := r.avail()
		if a == 0 {
			return false
		}
		k := min(a, n)
		r.pos += k
		n -= k
	}
	return true
}

// str reads an XLUnicodeRichExtendedString with a 16-bit count (SST,
// LABEL, STRING), or with an 8-bit count when short is set.
func (r *biffReader) str(short bool) (string, bool) {
	cch, flags, runs, ext, ok := r.strHeader(short)
	if !ok {
		return "", false
	}
	out, ok := r.chars(cch, flags&0x01 != 0)
	if !ok || !r.skip(4*runs) || !r.skip(ext) {
		return "", false
	}
	return string(out), true
}

// uint reads a little-endian integer of n (1, 2 or 4) bytes.
func (r *biffReader) uint(n int) (int, bool) {
	b, ok := r.bytes(n)
	switch {
	case !ok:
		return 0, false
	case n == 1:
		return int(b[0]), true
	case n == 2:
		return int(binary.LittleEndian.Uint16(b)), true
	}
	return int(binary.LittleEndian.Uint32(b)), true
}

// strHeader reads a string's character count, option flags, and the
// counts of its rich-text runs and extended (phonetic) bytes.
func (r *biffReader) strHeader(short bool) (cch int, flags byte, runs, ext int, ok bool) {
	width := 2
	if short {
		width = 1
	}
	if cch, ok = r.uint(width); !ok {
		return
	}
	f, ok := r.uint(1)
	if !ok {
		return
	}
	flags = byte(f)
	if flags&0x08 != 0 {
		if runs, ok = r.uint(2); !ok {
			return
		}
	}
	if flags&0x04 != 0 {
		if ext, ok = r.uint(4); !ok {
			return
		}
	}
	return cch, flags, runs, ext, true
}

// chars reads cch characters, 8-bit (Latin-1) or UTF-16 as wide says,
// to UTF-8. Where a CONTINUE record splits them, the next one starts with
// a new option byte.
func (r *biffReader) chars(cch int, wide bool) ([]byte, bool) {
	out := make([]byte, 0, cch)
	var high rune // a high surrogate waiting for its pair
	for n := 0; n < cch; {
		if r.seg >= len(r.segs) {
			return nil, false
		}
		if r.pos >= len(r.segs[r.seg]) {
			if r.seg+1 >= len(r.segs) || len(r.segs[r.seg+1]) == 0 {
				return nil, false
			}
			r.seg, r.pos = r.seg+1, 1
			wide = r.segs[r.seg][0]&0x01 != 0
			continue
		}
		n++
		if !wide {
			out = utf8.AppendRune(out, rune(r.segs[r.seg][r.pos]))
			r.pos++
			continue
		}
		v, ok := r.uint(2)
		if !ok {
			return nil, false
		}
		u := rune(v)
		switch {
		case u >= 0xD800 && u < 0xDC00:
			high = u
			continue
		case u >= 0xDC00 && u < 0xE000 && high != 0:
			u = utf16.DecodeRune(high, u)
		}
		high = 0
		out = utf8.AppendRune(out, u)
	}
	return out, true
}

// xlsCell is one cell's value.
type xlsCell struct {
	row, col int
	v        string
}

// readXLS extracts an Excel 97–2003 workbook (BIFF8): each worksheet in
// workbook order, cells by row and column, tab-separated, as parseXLSX
// writes them.
func readXLS(p *parser, f *cfb) {
	b, ok, err := f.streamNamed(f.root, "Workbook")
	if !ok && err == nil {
		p.fail("parse", fmt.Errorf("%w: Excel 5/95 workbook (BIFF5)", ErrUnsupported))
		return
	}
	if err != nil {
		p.fail("read Workbook", err)
		return
	}
	le := binary.LittleEndian
	if len(b) < 8 || le.Uint16(b) != biffBOF || le.Uint16(b[4:]) != 0x0600 {
		p.fail("parse", fmt.Errorf("%w: Workbook stream is not BIFF8", ErrUnsupported))
		return
	}
	g, err := xlsGlobals(b, p.j.lim.MaxTextSize)
	if g.encrypted {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected Excel workbook", ErrEncrypted))
		return
	}
	if err != nil {
		p.fail("read workbook globals", err)
	}
	sheets, sst := g.sheets, g.sst
	var names []string
	for _, sh := range sheets {
		names = append(names, sh.name)
		if sh.kind != 0 || p.cancelled() || p.text.full() {
			continue // charts and macro sheets have no cells
		}
		if err := xlsSheet(p, b, sh.off, sst); err != nil {
			p.fail("read sheet "+sh.name, err)
		}
		p.text.newline()
	}
	if len(names) > 0 {
		p.d.setExtra("sheet names", strings.Join(names, ", "))
		p.d.setExtra("sheets", strconv.Itoa(len(names)))
	}
}

// xlsSheetRef is a sheet of the workbook: its name, the offset of its
// substream and its type (0 a worksheet).
type xlsSheetRef struct {
	name string
	off  int
	kind byte
}

// xlsGlobalsInfo is what the workbook globals substream tells.
type xlsGlobalsInfo struct {
	sheets    []xlsSheetRef
	sst       []string
	encrypted bool
}

// xlsGlobals reads the sheets and shared strings of the globals
// substream, stopping at FILEPASS (encryption).
func xlsGlobals(b []byte, maxText int64) (xlsGlobalsInfo, error) {
	var g xlsGlobalsInfo
	err := biffRecords(b, 0, func(r *biffRecord) bool {
		switch d := r.segs[0]; r.typ {
		case biffFilePass:
			g.encrypted = true
			return false
		case biffBoundSheet:
			if len(d) >= 8 {
				br := &biffReader{segs: [][]byte{d[6:]}}
				name, _ := br.str(true)
				g.sheets = append(g.sheets, xlsSheetRef{name, int(binary.LittleEndian.Uint32(d)), d[5]})
			}
		case biffSST:
			g.sst = readSST(r, g.sst, maxText)
		}
		return true
	})
	return g, err
}

// readSST appends the strings of the shared string table, up to max
// bytes of them (more could not be written as text anyway).
func readSST(r *biffRecord, sst []string, max int64) []string {
	if len(r.segs[0]) < 8 {
		return sst
	}
	n := int(binary.LittleEndian.Uint32(r.segs[0][4:]))
	br := &biffReader{segs: r.segs, pos: 8}
	var size int64
	for i := 0; i < n && size <= max; i++ {
		s, ok := br.str(false)
		if !ok {
			break
		}
		sst = append(sst, s)
		size += int64(len(s)) + 16
	}
	return sst
}

// xlsSheet writes the cells of the worksheet substream at off.
func xlsSheet(p *parser, b []byte, off int, sst []string) error {
	if off < 0 || off+4 > len(b) || binary.LittleEndian.Uint16(b[off:]) != biffBOF {
		return fmt.Errorf("%w: sheet at %d does not start with BOF", ErrMalformed, off)
	}
	sc := &sheetCells{sst: sst, formula: -1}
	err := biffRecords(b, off, func(r *biffRecord) bool {
		sc.record(r)
		if sc.size > p.j.lim.MaxTextSize {
			p.fail("read cells", fmt.Errorf("%w: cells exceed MaxTextSize (%d bytes), truncated", ErrTooLarge, p.j.lim.MaxTextSize))
			return false
		}
		return !p.cancelled()
	})
	sc.write(&p.text)
	return err
}

// sheetCells collects the cells of a sheet, up to MaxTextSize bytes of
// them (more could not be written as text anyway).
type sheetCells struct {
	sst   []string
	cells []xlsCell
	size  int64
	// formula is the cell waiting for its STRING record, or -1.
	formula int
}

func (sc *sheetCells) add(row, col int, v string) {
	sc.cells = append(sc.cells, xlsCell{row, col, v})
	sc.size += int64(len(v)) + 24
}

// record adds the cells of one record.
func (sc *sheetCells) record(r *biffRecord) {
	le := binary.LittleEndian
	d := r.segs[0]
	if len(d) < 6 {
		return
	}
	row, col := int(le.Uint16(d)), int(le.Uint16(d[2:]))
	switch {
	case r.typ == biffLabelSST && len(d) >= 10:
		if i := int(le.Uint32(d[6:])); i < len(sc.sst) {
			sc.add(row, col, sc.sst[i])
		}
	case r.typ == biffLabel || r.typ == biffRString:
		br := &biffReader{segs: r.segs, pos: 6}
		s, _ := br.str(false)
		sc.add(row, col, s)
	case r.typ == biffNumber && len(d) >= 14:
		sc.add(row, col, xlsNumber(math.Float64frombits(le.Uint64(d[6:]))))
	case r.typ == biffRK && len(d) >= 10:
		sc.add(row, col, xlsNumber(rk(le.Uint32(d[6:]))))
	case r.typ == biffMulRK:
		for i := 4; i+6 <= len(d)-2; i += 6 {
			sc.add(row, col, xlsNumber(rk(le.Uint32(d[i+2:]))))
			col++
		}
	case r.typ == biffBoolErr && len(d) >= 8 && d[7] == 0:
		sc.add(row, col, strconv.Itoa(int(d[6])))
	case r.typ == biffFormula && len(d) >= 14:
		switch {
		case le.Uint16(d[12:]) != 0xFFFF:
			sc.add(row, col, xlsNumber(math.Float64frombits(le.Uint64(d[6:]))))
		case d[6] == 0: // a string result: the STRING record follows
			sc.add(row, col, "")
			sc.formula = len(sc.cells) - 1
		case d[6] == 1:
			sc.add(row, col, strconv.Itoa(int(d[8])))
		}
	case r.typ == biffString && sc.formula >= 0:
		br := &biffReader{segs: r.segs}
		s, _ := br.str(false)
		sc.cells[sc.formula].v = s
		sc.size += int64(len(s))
		sc.formula = -1
	}
}

// write writes the cells as parseXLSX does: by row and column, tab
// between cells, a line per row.
func (sc *sheetCells) write(t *textBuf) {
	cells := sc.cells
	slices.SortStableFunc(cells, func(a, b xlsCell) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.col, b.col))
	})
	n := 0
	for i, c := range cells {
		if i > 0 && c.row != cells[i-1].row && n > 0 {
			t.addByte('\n')
			n = 0
		}
		if c.v == "" {
			continue
		}
		if n > 0 {
			t.addByte('\t')
		}
		t.addString(c.v)
		n++
	}
	if n > 0 {
		t.addByte('\n')
	}
}

// rk decodes an RK number (MS-XLS 2.5.217).
func rk(v uint32) float64 {
	var x float64
	if v&2 != 0 {
		x = float64(int32(v) >> 2)
	} else {
		x = math.Float64frombits(uint64(v&^3) << 32)
	}
	if v&1 != 0 {
		x /= 100
	}
	return x
}

// xlsNumber formats a cell number as a spreadsheet's XML stores it.
func xlsNumber(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
