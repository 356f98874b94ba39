package extract

import (
	"bytes"
	"context"
	"errors"
	"math"
	"unicode"
	"unicode/utf8"
)

// pdfMatrix is [a b c d e f], the PDF affine transform.
type pdfMatrix [6]float64

var identity = pdfMatrix{1, 0, 0, 1, 0, 0}

// mul returns m × n.
func (m pdfMatrix) mul(n pdfMatrix) pdfMatrix {
	return pdfMatrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

type pdfGState struct {
	ctm                        pdfMatrix
	font                       *pdfFont
	size, tc, tw, th, tl, rise float64
}

// pdfInterp runs content streams, sending positioned text to a layout.
type pdfInterp struct {
	d      *pdfDoc
	lay    *pdfLayout
	gs     pdfGState
	stack  []pdfGState
	tm     pdfMatrix
	tlm    pdfMatrix
	ops    int
	active map[pdfRef]bool
	err    error
}

// maxFormDepth bounds form XObjects drawn inside each other.
const maxFormDepth = 12

var defaultFont = &pdfFont{simple: true, enc: standardEncoding, dw: 500, scale: 0.001, cache: map[uint32]string{}}

func newInterp(d *pdfDoc, lay *pdfLayout) *pdfInterp {
	return &pdfInterp{d: d, lay: lay, gs: pdfGState{ctm: identity, th: 1}, tm: identity, tlm: identity, active: make(map[pdfRef]bool)}
}

// run interprets one content stream with resources res. It returns early
// (with in.err set) on a limit breach or the deadline.
func (in *pdfInterp) run(content []byte, res pdfDict, depth int) {
	l := &pdfLexer{b: content}
	args := make([]any, 0, 8)
	for in.err == nil {
		l.skipSpace()
		if l.pos >= len(l.b) {
			return
		}
		v, err := l.object(0, false)
		if err != nil {
			args = args[:0]
			continue
		}
		op, isOp := v.(pdfOp)
		if !isOp {
			if len(args) < 64 {
				args = append(args, v)
			}
			continue
		}
		in.ops++
		if in.ops&4095 == 0 {
			if err := in.d.p.j.ctx.Err(); err != nil {
				in.err = in.d.p.j.ctxErr()
				return
			}
			if in.lay.t.full() {
				return
			}
		}
		in.op(op, args, res, depth, l)
		args = args[:0]
	}
}

func nums(args []any, n int) ([]float64, bool) {
	if len(args) < n {
		return nil, false
	}
	out := make([]float64, n)
	for i, a := range args[len(args)-n:] {
		v, ok := pdfNum(a)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func (in *pdfInterp) op(op pdfOp, args []any, res pdfDict, depth int, l *pdfLexer) {
	gs := &in.gs
	switch op {
	case "q":
		if len(in.stack) < 256 {
			in.stack = append(in.stack, *gs)
		}
	case "Q":
		if n := len(in.stack); n > 0 {
			*gs = in.stack[n-1]
			in.stack = in.stack[:n-1]
		}
	case "cm":
		if v, ok := nums(args, 6); ok {
			gs.ctm = pdfMatrix(v).mul(gs.ctm)
		}
	case "BT":
		in.tm, in.tlm = identity, identity
	case "Tf":
		if len(args) >= 2 {
			name, _ := args[len(args)-2].(pdfName)
			fonts := in.d.dict(res["Font"])
			if fv, ok := fonts[name]; ok {
				gs.font = in.d.loadFont(fv)
			} else {
				gs.font = nil
			}
			gs.size, _ = pdfNum(args[len(args)-1])
		}
	case "Tc", "Tw", "Tz", "TL", "Ts":
		if v, ok := nums(args, 1); ok {
			switch op {
			case "Tc":
				gs.tc = v[0]
			case "Tw":
				gs.tw = v[0]
			case "Tz":
				gs.th = v[0] / 100
			case "TL":
				gs.tl = v[0]
			case "Ts":
				gs.rise = v[0]
			}
		}
	case "Td", "TD":
		if v, ok := nums(args, 2); ok {
			if op == "TD" {
				gs.tl = -v[1]
			}
			in.tlm = pdfMatrix{1, 0, 0, 1, v[0], v[1]}.mul(in.tlm)
			in.tm = in.tlm
		}
	case "Tm":
		if v, ok := nums(args, 6); ok {
			in.tlm = pdfMatrix(v)
			in.tm = in.tlm
		}
	case "T*":
		in.nextLine()
	case "Tj":
		if len(args) > 0 {
			if s, ok := args[len(args)-1].(pdfString); ok {
				in.show([]byte(s))
			}
		}
	case "'":
		in.nextLine()
		if len(args) > 0 {
			if s, ok := args[len(args)-1].(pdfString); ok {
				in.show([]byte(s))
			}
		}
	case "\"":
		if len(args) >= 3 {
			gs.tw, _ = pdfNum(args[len(args)-3])
			gs.tc, _ = pdfNum(args[len(args)-2])
			in.nextLine()
			if s, ok := args[len(args)-1].(pdfString); ok {
				in.show([]byte(s))
			}
		}
	case "TJ":
		if len(args) == 0 {
			return
		}
		arr, _ := args[len(args)-1].(pdfArray)
		for _, x := range arr {
			switch x := x.(type) {
			case pdfString:
				in.show([]byte(x))
			case int64, float64:
				n, _ := pdfNum(x)
				tx := -n / 1000 * gs.size * gs.th
				in.tm[4] += tx * in.tm[0]
				in.tm[5] += tx * in.tm[1]
			}
		}
	case "Do":
		if len(args) > 0 {
			if name, ok := args[len(args)-1].(pdfName); ok {
				in.form(in.d.dict(res["XObject"])[name], res, depth)
			}
		}
	case "BI":
		skipInlineImage(l)
	}
}

func (in *pdfInterp) nextLine() {
	in.tlm = pdfMatrix{1, 0, 0, 1, 0, -in.gs.tl}.mul(in.tlm)
	in.tm = in.tlm
}

// form draws a form XObject.
func (in *pdfInterp) form(v any, res pdfDict, depth int) {
	ref, _ := v.(pdfRef)
	s, ok := in.d.resolve(v).(*pdfStream)
	if !ok || in.d.name(s.dict["Subtype"]) != "Form" || depth >= maxFormDepth || in.active[ref] {
		return
	}
	data, cached := in.d.forms[ref]
	if !cached || ref == (pdfRef{}) {
		var err error
		data, err = in.d.decode(s)
		if err != nil {
			if isLimit(err) {
				in.err = err
			}
			return
		}
		if ref != (pdfRef{}) {
			in.d.forms[ref] = data
		}
	}
	fres := in.d.dict(s.dict["Resources"])
	if fres == nil {
		fres = res
	}
	saved, savedStack := in.gs, len(in.stack)
	savedTm, savedTlm := in.tm, in.tlm
	if m := in.d.array(s.dict["Matrix"]); len(m) == 6 {
		if v, ok := nums(m, 6); ok {
			in.gs.ctm = pdfMatrix(v).mul(in.gs.ctm)
		}
	}
	in.active[ref] = true
	in.run(data, fres, depth+1)
	delete(in.active, ref)
	in.gs, in.stack = saved, in.stack[:min(savedStack, len(in.stack))]
	in.tm, in.tlm = savedTm, savedTlm
}

// isLimit reports the errors that stop the whole document.
func isLimit(err error) bool {
	return errors.Is(err, ErrBomb) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrTooLarge) || errors.Is(err, context.Canceled)
}

// skipInlineImage skips "BI ... ID <data> EI".
func skipInlineImage(l *pdfLexer) {
	i := bytes.Index(l.b[l.pos:], []byte("ID"))
	if i < 0 {
		l.pos = len(l.b)
		return
	}
	pos := l.pos + i + 3
	for pos < len(l.b) {
		j := bytes.Index(l.b[pos:], []byte("EI"))
		if j < 0 {
			l.pos = len(l.b)
			return
		}
		at := pos + j
		if at > 0 && isPDFSpace(l.b[at-1]) && (at+2 == len(l.b) || isPDFSpace(l.b[at+2]) || isPDFDelim(l.b[at+2])) {
			l.pos = at + 2
			return
		}
		pos = at + 2
	}
	l.pos = len(l.b)
}

// show draws a string with the current font.
func (in *pdfInterp) show(s []byte) {
	gs := &in.gs
	f := gs.font
	if f == nil {
		f = defaultFont
	}
	m := in.tm.mul(gs.ctm)
	ox, oy := gs.rise*m[2]+m[4], gs.rise*m[3]+m[5]
	ulen := math.Hypot(m[0], m[1])
	size := math.Abs(gs.size) * math.Hypot(m[2], m[3])
	if ulen == 0 || math.IsNaN(ulen) || math.IsInf(ulen, 0) {
		ulen = 1
	}
	ux, uy := m[0]/ulen, m[1]/ulen
	if gs.size*gs.th < 0 {
		ux, uy = -ux, -uy
	}
	acc := 0.0
	for len(s) > 0 {
		code, n := f.next(s)
		s = s[n:]
		w := f.width(code) * f.scale
		tx := (w*gs.size + gs.tc) * gs.th
		if n == 1 && code == 32 {
			tx += gs.tw * gs.th
		}
		x0, y0 := ox+acc*m[0], oy+acc*m[1]
		acc += tx
		x1, y1 := ox+acc*m[0], oy+acc*m[1]
		in.lay.glyph(x0, y0, x1, y1, ux, uy, size, f.text(code, n))
	}
	in.tm[4] += acc * in.tm[0]
	in.tm[5] += acc * in.tm[1]
}

// pdfLayout turns positioned glyphs into lines of words: a gap wider than
// a fraction of the font size is a space, a move across the baseline is a
// line break, and a word hyphenated at a line end is joined again.
type pdfLayout struct {
	t       *textBuf
	has     bool
	ex, ey  float64
	ux, uy  float64
	size    float64
	pending bool // a line break not yet written
}

// Layout thresholds, in units of the font size.
const (
	pdfSpaceGap  = 0.15
	pdfLineShift = 0.5
)

func (l *pdfLayout) glyph(x0, y0, x1, y1, ux, uy, size float64, text string) {
	if l.has {
		dx, dy := x0-l.ex, y0-l.ey
		along := dx*l.ux + dy*l.uy
		across := -dx*l.uy + dy*l.ux
		sz := max(size, l.size, 1e-6)
		switch {
		case ux*l.ux+uy*l.uy < 0.9, math.Abs(across) > pdfLineShift*sz:
			l.lineBreak()
		case along > pdfSpaceGap*sz || along < -sz:
			if text != "" {
				l.flush(text)
				l.t.space()
			}
		}
	}
	if text != "" {
		l.flush(text)
		if text == " " {
			l.t.space()
		} else {
			l.t.addString(text)
		}
	}
	l.ex, l.ey, l.ux, l.uy, l.size, l.has = x1, y1, ux, uy, size, true
}

func (l *pdfLayout) lineBreak() {
	if l.t.Len() > 0 {
		l.pending = true
	}
}

// flush writes a pending line break before text, or joins a word that
// was hyphenated at the end of the line.
func (l *pdfLayout) flush(next string) {
	if !l.pending {
		return
	}
	l.pending = false
	b := l.t.b
	if n := len(b); n >= 2 && b[n-1] == '-' {
		prev, _ := utf8.DecodeLastRune(b[:n-1])
		first, _ := utf8.DecodeRuneInString(next)
		if unicode.IsLower(prev) && unicode.IsLower(first) {
			l.t.b = b[:n-1]
			return
		}
	}
	l.t.newline()
}

// endPage ends the page's text with a blank line.
func (l *pdfLayout) endPage() {
	l.pending = false
	l.has = false
	if l.t.Len() > 0 {
		l.t.newline()
		l.t.addByte('\n')
	}
}
