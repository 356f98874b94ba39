package extract

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// FIB offsets and flags (MS-DOC 2.5).
const (
	docIdent      = 0xA5EC
	docEncrypted  = 0x0100
	docTable1     = 0x0200
	docObfuscated = 0x8000
	docClxIndex   = 33 // fcClx/lcbClx in FibRgFcLcb97
)

// readDOC extracts a Word 97–2003 document: the character positions of
// its piece table in order (main text, footnotes, headers, comments,
// endnotes, text boxes), with field instructions left out and only their
// results kept.
func readDOC(p *parser, f *cfb) {
	wd, _, err := f.streamNamed(f.root, "WordDocument")
	if err != nil {
		p.fail("read WordDocument", err)
		return
	}
	le := binary.LittleEndian
	if len(wd) >= 4 && le.Uint16(wd) == doc6Ident || len(wd) >= 4 && le.Uint16(wd[2:]) >= 101 && le.Uint16(wd[2:]) <= 105 {
		readDOC6(p, wd)
		return
	}
	if len(wd) < 154 || le.Uint16(wd) != docIdent {
		p.fail("read FIB", fmt.Errorf("%w: WordDocument stream without a Word 6, 95 or 97 FIB", ErrMalformed))
		return
	}
	if nFib := le.Uint16(wd[2:]); nFib < 106 {
		p.fail("read FIB", fmt.Errorf("%w: Word FIB version %d", ErrUnsupported, nFib))
		return
	}
	flags := le.Uint16(wd[0x0A:])
	if flags&(docEncrypted|docObfuscated) != 0 {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected Word document", ErrEncrypted))
		return
	}
	clx, err := docClx(f, wd, flags)
	if err != nil {
		p.fail("read piece table", err)
		return
	}
	pieces, err := parsePlcPcd(clx, len(wd))
	if err != nil {
		p.fail("read piece table", err)
		return
	}
	w := &docWriter{p: p}
	for _, pc := range pieces {
		if p.cancelled() || p.text.full() {
			return
		}
		w.piece(wd[pc.off:pc.end], pc.compressed)
	}
	w.flush()
}

// docClx returns the CLX (MS-DOC 2.9.38) from the table stream the FIB
// names.
func docClx(f *cfb, wd []byte, flags uint16) ([]byte, error) {
	le := binary.LittleEndian
	pos := 32
	csw := int(le.Uint16(wd[pos:]))
	pos += 2 + 2*csw
	if pos+2 > len(wd) {
		return nil, fmt.Errorf("%w: FIB truncated", ErrMalformed)
	}
	cslw := int(le.Uint16(wd[pos:]))
	pos += 2 + 4*cslw
	if pos+2 > len(wd) {
		return nil, fmt.Errorf("%w: FIB truncated", ErrMalformed)
	}
	cb := int(le.Uint16(wd[pos:]))
	pos += 2
	if cb <= docClxIndex || pos+8*(docClxIndex+1) > len(wd) {
		return nil, fmt.Errorf("%w: FIB without a piece table location", ErrMalformed)
	}
	fc := int64(le.Uint32(wd[pos+8*docClxIndex:]))
	lcb := int64(le.Uint32(wd[pos+8*docClxIndex+4:]))
	name := "0Table"
	if flags&docTable1 != 0 {
		name = "1Table"
	}
	tbl, ok, err := f.streamNamed(f.root, name)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%w: no %s stream", ErrMalformed, name)
	case lcb == 0 || fc+lcb > int64(len(tbl)):
		return nil, fmt.Errorf("%w: piece table at %d+%d outside the %d-byte table stream", ErrMalformed, fc, lcb, len(tbl))
	}
	return tbl[fc : fc+lcb], nil
}

// docPiece is a run of text in the WordDocument stream.
type docPiece struct {
	off, end   int
	compressed bool
}

// parsePlcPcd skips the CLX's property modifiers and reads its piece
// table; each piece must lie inside the WordDocument stream of size n and
// character positions must not go backwards.
func parsePlcPcd(clx []byte, n int) ([]docPiece, error) {
	plc, err := clxPlcPcd(clx)
	if err != nil {
		return nil, err
	}
	return pieces(plc, n)
}

// clxPlcPcd skips the CLX's property modifiers and returns its PlcPcd,
// whose size it checks.
func clxPlcPcd(clx []byte) ([]byte, error) {
	le := binary.LittleEndian
	for i := 0; i < len(clx); {
		switch clx[i] {
		case 1: // Prc: cbGrpprl, grpprl
			if i+3 > len(clx) {
				return nil, fmt.Errorf("%w: property modifier truncated", ErrMalformed)
			}
			i += 3 + int(int16(le.Uint16(clx[i+1:])))
			if i < 0 {
				return nil, fmt.Errorf("%w: negative property modifier size", ErrMalformed)
			}
		case 2: // Pcdt
			if i+5 > len(clx) {
				return nil, fmt.Errorf("%w: piece table truncated", ErrMalformed)
			}
			lcb := int64(le.Uint32(clx[i+1:]))
			if lcb < 4 || (lcb-4)%12 != 0 || int64(i+5)+lcb > int64(len(clx)) {
				return nil, fmt.Errorf("%w: piece table of %d bytes", ErrMalformed, lcb)
			}
			return clx[i+5 : i+5+int(lcb)], nil
		default:
			return nil, fmt.Errorf("%w: unknown CLX entry 0x%02x", ErrMalformed, clx[i])
		}
	}
	return nil, fmt.Errorf("%w: CLX without a piece table", ErrMalformed)
}

func pieces(plc []byte, n int) ([]docPiece, error) {
	le := binary.LittleEndian
	count := (len(plc) - 4) / 12
	out := make([]docPiece, 0, count)
	for k := range count {
		cp0, cp1 := int64(le.Uint32(plc[4*k:])), int64(le.Uint32(plc[4*k+4:]))
		if cp1 < cp0 {
			return out, fmt.Errorf("%w: piece %d: character positions go backwards (%d, %d)", ErrMalformed, k, cp0, cp1)
		}
		fcv := le.Uint32(plc[4*(count+1)+8*k+2:])
		pc := docPiece{compressed: fcv&0x40000000 != 0}
		fc := int64(fcv & 0x3FFFFFFF)
		size := (cp1 - cp0) * 2
		if pc.compressed {
			fc, size = fc/2, cp1-cp0
		}
		if fc+size > int64(n) {
			return out, fmt.Errorf("%w: piece %d at %d+%d outside the %d-byte WordDocument stream", ErrMalformed, k, fc, size, n)
		}
		pc.off, pc.end = int(fc), int(fc+size)
		out = append(out, pc)
	}
	return out, nil
}

// docWriter turns Word characters into text: paragraph, cell and break
// marks become line ends, field instructions (between 0x13 and 0x14) are
// skipped, other control characters are dropped.
type docWriter struct {
	p     *parser
	buf   []byte
	field []bool // open fields: true while in their instructions
	instr int    // open fields in their instructions
}

func (w *docWriter) piece(b []byte, compressed bool) {
	if compressed {
		for _, c := range b {
			r := rune(c)
			if c >= 0x80 {
				r = charmap.Windows1252.DecodeByte(c)
			}
			w.char(r)
		}
	} else {
		for i := 0; i+1 < len(b); i += 2 {
			u := rune(binary.LittleEndian.Uint16(b[i:]))
			if u >= 0xD800 && u < 0xDC00 && i+3 < len(b) {
				if lo := rune(binary.LittleEndian.Uint16(b[i+2:])); lo >= 0xDC00 && lo < 0xE000 {
					u = 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00)
					i += 2
				}
			}
			w.char(u)
		}
	}
	if len(w.buf) > 32<<10 {
		w.flush()
	}
}

func (w *docWriter) char(r rune) {
	switch r {
	case 0x13:
		w.field = append(w.field, true)
		w.instr++
		return
	case 0x14:
		if n := len(w.field); n > 0 && w.field[n-1] {
			w.field[n-1] = false
			w.instr--
		}
		return
	case 0x15:
		if n := len(w.field); n > 0 {
			if w.field[n-1] {
				w.instr--
			}
			w.field = w.field[:n-1]
		}
		return
	}
	if w.instr > 0 {
		return
	}
	switch {
	case r == 0x0D || r == 0x0B || r == 0x0C || r == 0x07:
		w.flush()
		w.p.text.newline()
	case r == '\t':
		w.buf = append(w.buf, '\t')
	case r == 0x1E:
		w.buf = append(w.buf, '-')
	case r < 0x20 || r == 0x1F || r >= 0xD800 && r < 0xE000:
	default:
		w.buf = utf8.AppendRune(w.buf, r)
	}
}

func (w *docWriter) flush() {
	w.p.text.add(w.buf)
	w.buf = w.buf[:0]
}
