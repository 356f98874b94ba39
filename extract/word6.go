package extract

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// Word 6.0 and 95 FIB (nFib 101–105): its identifier, and the offsets of
// the fields read (Word 6.0 binary file format, FIB).
const (
	doc6Ident   = 0xA5DC
	doc6Complex = 0x0004 // fComplex: the last save was a fast save
	doc6Lid     = 0x06
	doc6Chse    = 0x14 // character set: 0 Windows ANSI, 256 Macintosh
	doc6FcMin   = 0x18
	doc6FcMac   = 0x1C
	doc6CcpText = 0x34 // then ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn, ccpTxbx, ccpHdrTxbx
	doc6FcClx   = 0x160
	doc6FIBSize = 0x168
)

// readDOC6 extracts a Word 6.0 or 95 document: its text is 8-bit in the
// code page of its language (or Macintosh Roman), read through the piece
// table of the CLX in the WordDocument stream when the file was fast
// saved, else from the text range fcMin–fcMac. The text conventions are
// those of readDOC.
func readDOC6(p *parser, wd []byte) {
	le := binary.LittleEndian
	if len(wd) < doc6FIBSize {
		p.fail("read FIB", fmt.Errorf("%w: Word 6/95 FIB truncated (%d bytes)", ErrMalformed, len(wd)))
		return
	}
	flags := le.Uint16(wd[0x0A:])
	if flags&docEncrypted != 0 {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected Word document", ErrEncrypted))
		return
	}
	enc := doc6Encoding(le.Uint16(wd[doc6Lid:]), le.Uint16(wd[doc6Chse:]))
	pieces, err := doc6Pieces(wd, flags&doc6Complex != 0)
	if err != nil {
		p.fail("read piece table", err)
		if pieces == nil {
			return
		}
	}
	w := &docWriter{p: p}
	for _, pc := range pieces {
		if p.cancelled() || p.text.full() {
			return
		}
		for _, r := range convert(wd[pc.off:pc.end], enc) {
			w.char(r)
		}
		if len(w.buf) > 32<<10 {
			w.flush()
		}
	}
	w.flush()
}

// doc6Pieces returns the runs of text of a Word 6 document: the pieces of
// its piece table (complex), else the text range of the FIB, each inside
// the stream. Word 6 text is 8-bit: a piece's fc is a byte offset.
func doc6Pieces(wd []byte, complex bool) ([]docPiece, error) {
	le := binary.LittleEndian
	if !complex {
		fcMin, fcMac := int64(le.Uint32(wd[doc6FcMin:])), int64(le.Uint32(wd[doc6FcMac:]))
		var ccp int64
		for i := range 8 {
			ccp += int64(le.Uint32(wd[doc6CcpText+4*i:]))
		}
		end := min(fcMac, fcMin+ccp)
		if fcMin > end || end > int64(len(wd)) {
			return nil, fmt.Errorf("%w: text range %d–%d outside the %d-byte WordDocument stream", ErrMalformed, fcMin, end, len(wd))
		}
		return []docPiece{{off: int(fcMin), end: int(end), compressed: true}}, nil
	}
	fc, lcb := int64(le.Uint32(wd[doc6FcClx:])), int64(le.Uint32(wd[doc6FcClx+4:]))
	if lcb == 0 || fc+lcb > int64(len(wd)) {
		return nil, fmt.Errorf("%w: piece table at %d+%d outside the %d-byte WordDocument stream", ErrMalformed, fc, lcb, len(wd))
	}
	plc, err := clxPlcPcd(wd[fc : fc+lcb])
	if err != nil {
		return nil, err
	}
	count := (len(plc) - 4) / 12
	out := make([]docPiece, 0, count)
	for k := range count {
		cp0, cp1 := int64(le.Uint32(plc[4*k:])), int64(le.Uint32(plc[4*k+4:]))
		off := int64(le.Uint32(plc[4*(count+1)+8*k+2:]))
		switch {
		case cp1 < cp0:
			return out, fmt.Errorf("%w: piece %d: character positions go backwards (%d, %d)", ErrMalformed, k, cp0, cp1)
		case off+cp1-cp0 > int64(len(wd)):
			return out, fmt.Errorf("%w: piece %d at %d+%d outside the %d-byte WordDocument stream", ErrMalformed, k, off, cp1-cp0, len(wd))
		}
		out = append(out, docPiece{off: int(off), end: int(off + cp1 - cp0), compressed: true})
	}
	return out, nil
}

// doc6Encoding is the code page of a Word 6 document's text: Macintosh
// Roman for a Macintosh character set, else the Windows code page of its
// language (lid), Windows-1252 by default.
func doc6Encoding(lid, chse uint16) encoding.Encoding {
	if chse == 256 {
		return charmap.Macintosh
	}
	if e := codepage(lidCodePage(lid)); e != nil {
		return e
	}
	return charmap.Windows1252
}

// lidCodePage maps a Windows language identifier to its ANSI code page.
func lidCodePage(lid uint16) int {
	switch lid & 0x3FF { // the primary language
	case 0x05, 0x0E, 0x15, 0x18, 0x1A, 0x1B, 0x1C, 0x24: // Czech, Hungarian, Polish, Romanian, Croatian/Serbian, Slovak, Albanian, Slovenian
		if lid == 0x0C1A { // Serbian (Cyrillic)
			return 1251
		}
		return 1250
	case 0x02, 0x19, 0x22, 0x23, 0x2F: // Bulgarian, Russian, Ukrainian, Belarusian, Macedonian
		return 1251
	case 0x08:
		return 1253
	case 0x1F:
		return 1254
	case 0x0D:
		return 1255
	case 0x01, 0x20, 0x29:
		return 1256
	case 0x25, 0x26, 0x27:
		return 1257
	case 0x2A:
		return 1258
	case 0x1E:
		return 874
	case 0x11:
		return 932
	case 0x12:
		return 949
	case 0x04:
		if lid == 0x0404 || lid == 0x0C04 || lid == 0x1404 {
			return 950
		}
		return 936
	}
	return 1252
}
