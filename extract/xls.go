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

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// BIFF8 record types (MS-XLS 2.3).
const (
	biffFormula    = 0x0006
	biffEOF        = 0x000A
	biffDateMode   = 0x0022
	biffFilePass   = 0x002F
	biffContinue   = 0x003C
	biffCodePage   = 0x0042
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
	biffInteger    = 0x0202 // not BIFF5/8: xls2csv reads it, as BIFF2's INTEGER
	biffFormat     = 0x041E
	biffXF         = 0x00E0
	biffBOF        = 0x0809
)

// BOF versions of the workbook streams read: BIFF5 (Excel 5.0 and 95, the
// "Book" stream) and BIFF8 (Excel 97–2003, "Workbook").
const (
	biff5Version = 0x0500
	biff8Version = 0x0600
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

// readXLS extracts an Excel workbook, BIFF8 (Excel 97–2003, the
// "Workbook" stream) or BIFF5 (Excel 5.0 and 95, the "Book" stream): each
// worksheet in workbook order, cells by row and column, tab-separated, as
// parseXLSX writes them.
func readXLS(p *parser, f *cfb) {
	b, ok, err := f.streamNamed(f.root, "Workbook")
	if !ok && err == nil {
		b, _, err = f.streamNamed(f.root, "Book")
	}
	if err != nil {
		p.fail("read Workbook", err)
		return
	}
	le := binary.LittleEndian
	if len(b) < 8 || le.Uint16(b) != biffBOF || le.Uint16(b[4:]) != biff8Version && le.Uint16(b[4:]) != biff5Version {
		p.fail("parse", fmt.Errorf("%w: workbook stream is neither BIFF5 nor BIFF8", ErrUnsupported))
		return
	}
	bk, err := xlsGlobals(b, le.Uint16(b[4:]) == biff5Version, p.j.lim.MaxTextSize)
	if bk.encrypted {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected Excel workbook", ErrEncrypted))
		return
	}
	if err != nil {
		p.fail("read workbook globals", err)
	}
	var names []string
	for _, sh := range bk.sheets {
		names = append(names, sh.name)
		if sh.kind != 0 || p.cancelled() || p.text.full() {
			continue // charts and macro sheets have no cells
		}
		if err := xlsSheet(p, b, sh.off, bk); err != nil {
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

// xlsBook is what the workbook globals substream tells: the sheets, the
// shared strings (BIFF8), the code page of byte strings (BIFF5), the
// number format of each XF, the format strings and the date system.
type xlsBook struct {
	biff5     bool
	sheets    []xlsSheetRef
	sst       []string
	encrypted bool
	cp        encoding.Encoding
	xfFormat  []uint16
	formats   map[uint16]string
	date1904  bool
}

// xlsGlobals reads the globals substream, stopping at FILEPASS
// (encryption).
func xlsGlobals(b []byte, biff5 bool, maxText int64) (*xlsBook, error) {
	bk := &xlsBook{biff5: biff5, cp: charmap.Windows1252, formats: map[uint16]string{}}
	var rawNames [][]byte
	le := binary.LittleEndian
	err := biffRecords(b, 0, func(r *biffRecord) bool {
		switch d := r.segs[0]; {
		case r.typ == biffFilePass:
			bk.encrypted = true
			return false
		case r.typ == biffBoundSheet && len(d) >= 8:
			ref := xlsSheetRef{off: int(le.Uint32(d)), kind: d[5]}
			if biff5 {
				rawNames = append(rawNames, d[7:min(len(d), 7+int(d[6]))])
			} else {
				br := &biffReader{segs: [][]byte{d[6:]}}
				ref.name, _ = br.str(true)
			}
			bk.sheets = append(bk.sheets, ref)
		case r.typ == biffCodePage && len(d) >= 2:
			bk.cp = xlsCodePage(int(le.Uint16(d)))
		case r.typ == biffDateMode && len(d) >= 2:
			bk.date1904 = le.Uint16(d) == 1
		case r.typ == biffXF && len(d) >= 4:
			bk.xfFormat = append(bk.xfFormat, le.Uint16(d[2:]))
		case r.typ == biffFormat && len(d) >= 3:
			bk.formats[le.Uint16(d)] = bk.formatString(r)
		case r.typ == biffSST && !biff5:
			bk.sst = readSST(r, bk.sst, maxText)
		}
		return true
	})
	for i, raw := range rawNames {
		bk.sheets[i].name = bk.bytesString(raw)
	}
	return bk, err
}

// formatString reads the format string of a FORMAT record.
func (bk *xlsBook) formatString(r *biffRecord) string {
	d := r.segs[0]
	if bk.biff5 {
		return bk.bytesString(d[3:min(len(d), 3+int(d[2]))])
	}
	br := &biffReader{segs: r.segs, pos: 2}
	s, _ := br.str(false)
	return s
}

// xlsCodePage is the encoding of a CODEPAGE record's value (MS-XLS
// 2.4.52): nil for UTF-16 (1200), Windows-1252 for unknown pages.
func xlsCodePage(cv int) encoding.Encoding {
	switch cv {
	case 1200:
		return nil
	case 0x8000:
		return charmap.Macintosh
	case 0x8001:
		return charmap.Windows1252
	}
	if e := codepage(cv); e != nil {
		return e
	}
	return charmap.Windows1252
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
func xlsSheet(p *parser, b []byte, off int, bk *xlsBook) error {
	if off < 0 || off+4 > len(b) || binary.LittleEndian.Uint16(b[off:]) != biffBOF {
		return fmt.Errorf("%w: sheet at %d does not start with BOF", ErrMalformed, off)
	}
	sc := &sheetCells{bk: bk, formula: -1}
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
	bk    *xlsBook
	cells []xlsCell
	size  int64
	// formula is the cell waiting for its STRING record, or -1.
	formula int
}

func (sc *sheetCells) add(row, col int, v string) {
	sc.cells = append(sc.cells, xlsCell{row, col, v})
	sc.size += int64(len(v)) + 24
}

// str reads a cell's string at pos of a record: an
// XLUnicodeRichExtendedString in BIFF8, a byte string with a 16-bit count
// in the workbook's code page in BIFF5.
func (sc *sheetCells) str(r *biffRecord, pos int) string {
	if !sc.bk.biff5 {
		br := &biffReader{segs: r.segs, pos: pos}
		s, _ := br.str(false)
		return s
	}
	d := r.segs[0]
	if pos+2 > len(d) {
		return ""
	}
	n := int(binary.LittleEndian.Uint16(d[pos:]))
	return sc.bk.bytesString(d[pos+2 : min(len(d), pos+2+n)])
}

// bytesString decodes a BIFF5 byte string in the workbook's code page.
// Under CODEPAGE 1200 (UTF-16), which Gnumeric writes in BIFF5, a string
// is UTF-16LE where half its odd bytes are zero, else 8-bit.
func (bk *xlsBook) bytesString(b []byte) string {
	if bk.cp != nil {
		return convert(b, bk.cp)
	}
	zeros := 0
	for i := 1; i < len(b); i += 2 {
		if b[i] == 0 {
			zeros++
		}
	}
	if len(b)%2 == 0 && len(b) > 0 && 4*zeros >= len(b) {
		return convert(b, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM))
	}
	return convert(b, charmap.Windows1252)
}

// number adds a number cell, formatted by its XF.
func (sc *sheetCells) number(row, col, xf int, x float64) {
	sc.add(row, col, sc.bk.format(xf, x))
}

// record adds the cells of one record.
func (sc *sheetCells) record(r *biffRecord) {
	le := binary.LittleEndian
	d := r.segs[0]
	if r.typ == biffString && sc.formula >= 0 {
		s := sc.str(r, 0)
		sc.cells[sc.formula].v = s
		sc.size += int64(len(s))
		sc.formula = -1
		return
	}
	if len(d) < 6 {
		return
	}
	row, col, xf := int(le.Uint16(d)), int(le.Uint16(d[2:])), int(le.Uint16(d[4:]))
	switch {
	case r.typ == biffLabelSST && len(d) >= 10:
		if i := int(le.Uint32(d[6:])); i < len(sc.bk.sst) {
			sc.add(row, col, sc.bk.sst[i])
		}
	case r.typ == biffLabel || r.typ == biffRString:
		sc.add(row, col, sc.str(r, 6))
	case isNumberRecord(r.typ) && len(d) >= 14:
		sc.number(row, col, xf, math.Float64frombits(le.Uint64(d[6:])))
	case r.typ == biffInteger && len(d) >= 9:
		sc.add(row, col, strconv.Itoa(int(le.Uint16(d[7:]))))
	case r.typ == biffRK && len(d) >= 10:
		sc.number(row, col, xf, rk(le.Uint32(d[6:])))
	case r.typ == biffMulRK:
		for i := 4; i+6 <= len(d)-2; i += 6 {
			sc.number(row, col, int(le.Uint16(d[i:])), rk(le.Uint32(d[i+2:])))
			col++
		}
	case r.typ == biffBoolErr && len(d) >= 8 && d[7] == 0:
		sc.add(row, col, strconv.Itoa(int(d[6])))
	case r.typ == biffFormula && len(d) >= 14:
		sc.formulaResult(row, col, xf, d)
	}
}

// isNumberRecord reports whether a record type is NUMBER, or one of the
// record types outside MS-XLS that xls2csv reads as a NUMBER (0x0003,
// BIFF2's NUMBER, and 0x0103, 0x0303), as report generators write them.
func isNumberRecord(typ uint16) bool {
	return typ == biffNumber || typ == 0x0003 || typ == 0x0103 || typ == 0x0303
}

// formulaResult adds the cached result of a FORMULA record: a number, a
// boolean, or a string that the STRING record after it holds (shared and
// array formulas, SHRFMLA and ARRAY, may come between them).
func (sc *sheetCells) formulaResult(row, col, xf int, d []byte) {
	le := binary.LittleEndian
	switch {
	case le.Uint16(d[12:]) != 0xFFFF:
		sc.number(row, col, xf, math.Float64frombits(le.Uint64(d[6:])))
	case d[6] == 0:
		sc.add(row, col, "")
		sc.formula = len(sc.cells) - 1
	case d[6] == 1:
		sc.add(row, col, strconv.Itoa(int(d[8])))
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

// xlsNumber formats a cell number as Excel's General format shows it in
// a wide enough column: an integer without a decimal point, else at most
// 15 significant digits (the precision Excel keeps), without an exponent
// below 1e15.
func xlsNumber(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	s := strconv.FormatFloat(x, 'g', 15, 64)
	if strings.ContainsAny(s, "e") && math.Abs(x) >= 1e-4 && math.Abs(x) < 1e15 {
		s = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return s
}
