package extract

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// PowerPoint record types (MS-PPT 2.13.24).
const (
	pptSlide             = 0x03EE
	pptNotes             = 0x03F0
	pptEnvironment       = 0x03F2
	pptSlidePersistAtom  = 0x03F3
	pptMainMaster        = 0x03F8
	pptHandout           = 0x0FC9
	pptTextCharsAtom     = 0x0FA0
	pptTextBytesAtom     = 0x0FA8
	pptSlideListWithText = 0x0FF0
	pptCryptSession      = 0x2F14
)

// pptMaxDepth bounds the nesting of containers.
const pptMaxDepth = 64

// readPPT extracts a PowerPoint 97–2003 presentation: the slides in
// presentation order from the live persist directory (MS-PPT 2.1.2), each
// with the text atoms of its entry in the slides' text list and of its
// shapes. Without a persist directory it walks the records of the
// "PowerPoint Document" stream in order. Masters, notes and handouts are
// left out, as parsePPTX leaves them out.
func readPPT(p *parser, f *cfb) {
	b, _, err := f.streamNamed(f.root, "PowerPoint Document")
	if err != nil {
		p.fail("read PowerPoint Document", err)
		return
	}
	if f.lookup(f.root, "EncryptedSummary") >= 0 {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected PowerPoint presentation", ErrEncrypted))
		return
	}
	w := &pptWalker{p: p}
	defer func() { p.d.setExtra("slides", strconv.Itoa(w.slides)) }()
	_, slides, err := pptLive(f, b)
	if err == nil && len(slides) > 0 {
		w.live(slides)
		return
	}
	if err != nil {
		// The text may still all be there: walk the records.
		p.fail("read persist directory", err)
	}
	if err := w.walk(b, 0); err != nil {
		p.fail("parse", err)
	}
}

// live writes the slides in presentation order: for each, the text its
// entry in the text list holds, then the text of its shapes.
func (w *pptWalker) live(slides []pptSlideRef) {
	for _, s := range slides {
		if w.p.cancelled() || w.p.text.full() {
			return
		}
		for _, a := range s.atoms {
			if err := w.walk(a, 1); err != nil {
				w.p.fail("parse", err)
			}
		}
		if err := w.walk(s.body, 1); err != nil {
			w.p.fail("parse slide", err)
		}
		w.slides++
		w.endSlide()
	}
}

type pptWalker struct {
	p      *parser
	slides int
	// listSlide is set inside the slides' SlideListWithText, where each
	// SlidePersistAtom starts a slide.
	listSlide bool
	// dirty is set when text was written since the last slide ended.
	dirty bool
	steps int
}

// walk reads the records of b, descending into containers.
func (w *pptWalker) walk(b []byte, depth int) error {
	le := binary.LittleEndian
	if depth > pptMaxDepth {
		return fmt.Errorf("%w: records nested deeper than %d", ErrMalformed, pptMaxDepth)
	}
	for off := 0; off+8 <= len(b); {
		if w.steps++; w.steps&4095 == 0 && w.p.cancelled() || w.p.text.full() {
			return nil
		}
		verInst, typ, n := le.Uint16(b[off:]), le.Uint16(b[off+2:]), int64(le.Uint32(b[off+4:]))
		if int64(off)+8+n > int64(len(b)) {
			return fmt.Errorf("%w: record 0x%04x at %d runs past its container", ErrMalformed, typ, off)
		}
		body := b[off+8 : off+8+int(n)]
		off += 8 + int(n)
		switch {
		case typ == pptCryptSession:
			w.p.d.setExtra("encrypted", "true")
			return fmt.Errorf("%w: encrypted PowerPoint presentation", ErrEncrypted)
		case typ == pptMainMaster || typ == pptNotes || typ == pptHandout || typ == pptEnvironment:
		case typ == pptSlideListWithText:
			if verInst>>4 == 0 { // instance 0: the slides' list
				w.listSlide = true
				err := w.walk(body, depth+1)
				w.endSlide()
				w.listSlide = false
				if err != nil {
					return err
				}
			}
		case typ == pptSlidePersistAtom && w.listSlide:
			w.endSlide()
		case typ == pptTextCharsAtom:
			w.chars(body)
		case typ == pptTextBytesAtom:
			w.bytes(body)
		case verInst&0xF == 0xF: // a container
			if err := w.walk(body, depth+1); err != nil {
				return err
			}
			if typ == pptSlide {
				w.slides++
				w.endSlide()
			}
		}
	}
	return nil
}

// endSlide ends a slide's text with a blank line, as parsePPTX does.
func (w *pptWalker) endSlide() {
	if w.dirty {
		w.p.text.newline()
		w.p.text.addByte('\n')
		w.dirty = false
	}
}

// chars writes a TextCharsAtom (UTF-16); paragraphs end with CR.
func (w *pptWalker) chars(b []byte) {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	w.text([]byte(string(utf16.Decode(u))))
}

// bytes writes a TextBytesAtom: UTF-16 code units without their high
// bytes (Latin-1).
func (w *pptWalker) bytes(b []byte) {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	w.text(out)
}

// text writes one text atom as its own paragraphs.
func (w *pptWalker) text(s []byte) {
	start := 0
	for i, c := range s {
		if c == '\r' || c == 0x0B {
			w.p.text.add(s[start:i])
			w.p.text.newline()
			start = i + 1
		}
	}
	w.p.text.add(s[start:])
	w.p.text.newline()
	w.dirty = true
}

// pptExOleObjStg is the record holding an embedded object's compound
// file (MS-PPT 2.10.34), compressed when its instance is 1.
const pptExOleObjStg = 0x1011

// pptEmbeddedObjects extracts the objects a presentation embeds: each
// ExOleObjStg among the top-level records of the PowerPoint Document
// stream b is a compound file, read as an ObjectPool storage is (see
// embeddedObject) and named "object N" in stream order.
func pptEmbeddedObjects(p *parser, b []byte) {
	n := 0
	for off := int64(0); ; {
		verInst, typ, body, ok := pptRecord(b, off)
		if !ok || p.cancelled() {
			return
		}
		off += 8 + int64(len(body))
		if typ != pptExOleObjStg {
			continue
		}
		n++
		if !p.admit() {
			return
		}
		pptEmbeddedObject(p, "object "+strconv.Itoa(n), verInst>>4 == 1, body)
	}
}

// pptEmbeddedObject extracts the compound file in an ExOleObjStg body:
// when compressed, a 4-byte decompressed size then a zlib stream,
// inflated within the ratio and decompression budgets and charged to the
// memory account. Damage is a child with the error; call admit first.
func pptEmbeddedObject(p *parser, name string, compressed bool, body []byte) {
	fail := func(err error) {
		p.failedChild(name, mediaCFB, int64(len(body)), nil, &Error{Format: p.format, Op: "read embedded object", Err: p.j.classify(err)})
	}
	data := body
	if compressed {
		b, err := pptInflate(p.j, body)
		defer p.j.release(int64(cap(b)))
		if err != nil {
			fail(fmt.Errorf("inflate ExOleObjStg: %w", err))
			return
		}
		data = b
	}
	f, err := openCFB(data)
	if err != nil {
		fail(err)
		return
	}
	embeddedObject(p, f, f.root, name)
}

// pptInflate decompresses a compressed ExOleObjStg body; the caller
// releases cap of what it returns.
func pptInflate(j *job, body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("%w: compressed object of %d bytes", ErrMalformed, len(body))
	}
	declared, packed := int64(binary.LittleEndian.Uint32(body)), int64(len(body)-4)
	if err := j.checkDeclared(declared, packed); err != nil {
		return nil, err
	}
	zr, err := zlib.NewReader(bytes.NewReader(body[4:]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	b, err := j.readAllHint(j.inflate(zr, packed), declared)
	if err != nil && !isSentinel(err) {
		err = fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return b, err
}
