package extract

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// PDF objects: nil, bool, int64, float64, pdfName, pdfString, pdfArray,
// pdfDict, pdfRef, *pdfStream, and (in content streams) pdfOp.
type (
	pdfName   string
	pdfString string
	pdfArray  []any
	pdfDict   map[pdfName]any
	pdfOp     string
	pdfRef    struct {
		num uint32
		gen uint16
	}
	pdfStream struct {
		dict     pdfDict
		ref      pdfRef
		off, end int // raw data in the file
	}
)

// maxPDFNesting bounds arrays and dictionaries nested in one object.
const maxPDFNesting = 64

var errPDFSyntax = errors.New("syntax error")

// pdfLexer reads PDF tokens and objects from b.
type pdfLexer struct {
	b   []byte
	pos int
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func (l *pdfLexer) skipSpace() {
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		switch {
		case isPDFSpace(c):
			l.pos++
		case c == '%':
			for l.pos < len(l.b) && l.b[l.pos] != '\n' && l.b[l.pos] != '\r' {
				l.pos++
			}
		default:
			return
		}
	}
}

// regular returns the run of regular characters at pos.
func (l *pdfLexer) regular() []byte {
	start := l.pos
	for l.pos < len(l.b) && !isPDFSpace(l.b[l.pos]) && !isPDFDelim(l.b[l.pos]) {
		l.pos++
	}
	return l.b[start:l.pos]
}

// object reads one object; refs ("1 0 R") are recognised when refs is
// true (files, not content streams). A bare keyword is returned as pdfOp.
func (l *pdfLexer) object(depth int, refs bool) (any, error) {
	if depth > maxPDFNesting {
		return nil, fmt.Errorf("%w: objects nested deeper than %d", ErrMalformed, maxPDFNesting)
	}
	l.skipSpace()
	if l.pos >= len(l.b) {
		return nil, io.ErrUnexpectedEOF
	}
	switch c := l.b[l.pos]; c {
	case '/':
		l.pos++
		return pdfName(decodeName(l.regular())), nil
	case '(':
		return l.literal(), nil
	case '<':
		if l.pos+1 < len(l.b) && l.b[l.pos+1] == '<' {
			l.pos += 2
			return l.dict(depth, refs)
		}
		return l.hex(), nil
	case '[':
		l.pos++
		var arr pdfArray
		for {
			l.skipSpace()
			if l.pos >= len(l.b) {
				return arr, io.ErrUnexpectedEOF
			}
			if l.b[l.pos] == ']' {
				l.pos++
				return arr, nil
			}
			v, err := l.object(depth+1, refs)
			if err != nil {
				return arr, err
			}
			if op, ok := v.(pdfOp); ok && (op == "endobj" || op == "stream") {
				return arr, fmt.Errorf("%w: unterminated array", errPDFSyntax)
			}
			arr = append(arr, v)
		}
	case ']', '>', ')', '{', '}':
		l.pos++
		return pdfOp(string(c)), nil
	}
	tok := l.regular()
	if len(tok) == 0 {
		l.pos++
		return nil, fmt.Errorf("%w: unexpected byte %q", errPDFSyntax, l.b[l.pos-1])
	}
	if n, ok := parseNumber(tok); ok {
		if i, isInt := n.(int64); isInt && refs && i >= 0 {
			if ref, ok := l.tryRef(i); ok {
				return ref, nil
			}
		}
		return n, nil
	}
	switch string(tok) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	return pdfOp(tok), nil
}

// tryRef completes "num gen R" after num, or leaves pos unchanged.
func (l *pdfLexer) tryRef(num int64) (pdfRef, bool) {
	save := l.pos
	l.skipSpace()
	gen := l.regular()
	g, err := strconv.ParseUint(string(gen), 10, 16)
	if err != nil || num > 1<<31 {
		l.pos = save
		return pdfRef{}, false
	}
	l.skipSpace()
	if l.pos < len(l.b) && l.b[l.pos] == 'R' && (l.pos+1 == len(l.b) || isPDFSpace(l.b[l.pos+1]) || isPDFDelim(l.b[l.pos+1])) {
		l.pos++
		return pdfRef{uint32(num), uint16(g)}, true
	}
	l.pos = save
	return pdfRef{}, false
}

func (l *pdfLexer) dict(depth int, refs bool) (pdfDict, error) {
	d := make(pdfDict)
	for {
		l.skipSpace()
		if l.pos >= len(l.b) {
			return d, io.ErrUnexpectedEOF
		}
		if l.b[l.pos] == '>' {
			l.pos++
			if l.pos < len(l.b) && l.b[l.pos] == '>' {
				l.pos++
			}
			return d, nil
		}
		k, err := l.object(depth+1, refs)
		if err != nil {
			return d, err
		}
		key, ok := k.(pdfName)
		if !ok {
			if op, isOp := k.(pdfOp); isOp && (op == "endobj" || op == "stream") {
				return d, fmt.Errorf("%w: unterminated dictionary", errPDFSyntax)
			}
			continue // tolerate junk between entries
		}
		v, err := l.object(depth+1, refs)
		if err != nil {
			return d, err
		}
		if op, isOp := v.(pdfOp); isOp {
			if op == ">" {
				l.pos--
			}
			continue
		}
		d[key] = v
	}
}

// literal reads a (string) with escapes and balanced parentheses.
func (l *pdfLexer) literal() pdfString {
	l.pos++
	var out []byte
	depth := 1
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return pdfString(out)
			}
		case '\\':
			if l.pos >= len(l.b) {
				return pdfString(out)
			}
			c = l.b[l.pos]
			l.pos++
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if l.pos < len(l.b) && l.b[l.pos] == '\n' {
					l.pos++
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(c - '0')
				for k := 0; k < 2 && l.pos < len(l.b) && l.b[l.pos] >= '0' && l.b[l.pos] <= '7'; k++ {
					v = v*8 + int(l.b[l.pos]-'0')
					l.pos++
				}
				c = byte(v)
			}
		case '\r':
			// An end of line in a string is a line feed.
			if l.pos < len(l.b) && l.b[l.pos] == '\n' {
				l.pos++
			}
			c = '\n'
		}
		out = append(out, c)
	}
	return pdfString(out)
}

// hex reads a <hex string>.
func (l *pdfLexer) hex() pdfString {
	out, n := hexDecode(l.b[l.pos+1:])
	l.pos += 1 + n
	return pdfString(out)
}

// hexDecode decodes hex digits up to '>' (white space and junk skipped)
// and returns the bytes and the input consumed, '>' included.
func hexDecode(b []byte) ([]byte, int) {
	end := bytes.IndexByte(b, '>')
	if end < 0 {
		end = len(b)
	}
	out := make([]byte, 0, end/2+1)
	var hi byte
	half := false
	i := 0
	for i < len(b) {
		c := b[i]
		i++
		if c == '>' {
			break
		}
		v, ok := unhex(c)
		if !ok {
			continue
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return out, i
}

// decodeName undoes #xx escapes in a name.
func decodeName(b []byte) string {
	if bytes.IndexByte(b, '#') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			if v, ok := unhex2(b[i+1], b[i+2]); ok {
				out = append(out, v)
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

// parseNumber parses an integer or real; PDF reals have no exponent.
func parseNumber(tok []byte) (any, bool) {
	if len(tok) == 0 {
		return nil, false
	}
	c := tok[0]
	if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') {
		return nil, false
	}
	i, neg := 0, false
	if c == '-' || c == '+' {
		neg = c == '-'
		i++
		// Some producers write "--5" or "-+5".
		for i < len(tok) && (tok[i] == '-' || tok[i] == '+') {
			i++
		}
	}
	if i == len(tok) {
		return nil, false
	}
	var n int64
	j := i
	for ; j < len(tok) && tok[j] >= '0' && tok[j] <= '9'; j++ {
		if n < 1<<55 {
			n = n*10 + int64(tok[j]-'0')
		}
	}
	if j == len(tok) {
		if neg {
			n = -n
		}
		return n, true
	}
	if tok[j] != '.' {
		return nil, false
	}
	f := float64(n)
	scale := 0.1
	for j++; j < len(tok); j++ {
		if tok[j] < '0' || tok[j] > '9' {
			if tok[j] == '-' || tok[j] == '.' { // "1.5-" and "1..5" exist in the wild
				break
			}
			return nil, false
		}
		f += float64(tok[j]-'0') * scale
		scale /= 10
	}
	if neg {
		f = -f
	}
	return f, true
}

// Typed accessors that tolerate anything.

func pdfNum(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func pdfInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	}
	return 0, false
}

// pdfDoc is a parsed PDF file.
type pdfDoc struct {
	p        *parser
	data     []byte
	xref     map[uint32]pdfXref
	trailer  pdfDict
	cache    map[uint32]any
	loading  map[uint32]bool
	objstms  map[uint32]bool
	scanned  map[uint32]int // object offsets found by scanning the file
	crypt    *pdfCrypt
	encRef   pdfRef
	repaired bool
	forms    map[pdfRef][]byte
	fonts    map[pdfRef]*pdfFont
}

type pdfXref struct {
	off  int    // byte offset, for kind 1
	stm  uint32 // object stream number, for kind 2
	gen  uint16
	kind byte
}

// resolve follows references (bounded; a cycle or missing object is nil).
func (d *pdfDoc) resolve(v any) any {
	for range 16 {
		ref, ok := v.(pdfRef)
		if !ok {
			return v
		}
		v = d.object(ref)
	}
	return nil
}

func (d *pdfDoc) dict(v any) pdfDict {
	switch v := d.resolve(v).(type) {
	case pdfDict:
		return v
	case *pdfStream:
		return v.dict
	}
	return nil
}

func (d *pdfDoc) array(v any) pdfArray {
	a, _ := d.resolve(v).(pdfArray)
	return a
}

func (d *pdfDoc) name(v any) pdfName {
	n, _ := d.resolve(v).(pdfName)
	return n
}

func (d *pdfDoc) num(v any) (float64, bool) { return pdfNum(d.resolve(v)) }

func (d *pdfDoc) str(v any) string {
	s, _ := d.resolve(v).(pdfString)
	return string(s)
}

// object loads indirect object ref.
func (d *pdfDoc) object(ref pdfRef) any {
	if v, ok := d.cache[ref.num]; ok {
		return v
	}
	if d.loading[ref.num] || len(d.cache) > 1<<22 {
		return nil
	}
	d.loading[ref.num] = true
	defer delete(d.loading, ref.num)
	var v any
	x, ok := d.xref[ref.num]
	switch {
	case ok && x.kind == 2:
		d.loadObjStm(x.stm)
		if v, ok := d.cache[ref.num]; ok {
			return v
		}
	case ok && x.kind == 1:
		var err error
		v, err = d.objectAt(x.off, ref.num)
		if err == nil {
			d.cache[ref.num] = v
			return v
		}
	}
	// Missing or wrong offset: look where a scan of the file found it.
	if off, ok := d.scan()[ref.num]; ok {
		if v, err := d.objectAt(off, ref.num); err == nil {
			d.repaired = true
			d.cache[ref.num] = v
			return v
		}
	}
	d.cache[ref.num] = nil
	return nil
}

// objectAt parses "num gen obj ... endobj" at off.
func (d *pdfDoc) objectAt(off int, num uint32) (any, error) {
	if off < 0 || off >= len(d.data) {
		return nil, fmt.Errorf("%w: object %d offset %d out of range", ErrMalformed, num, off)
	}
	l := &pdfLexer{b: d.data, pos: off}
	n, err := l.object(0, false)
	if err != nil {
		return nil, err
	}
	g, err := l.object(0, false)
	if err != nil {
		return nil, err
	}
	kw, _ := l.object(0, false)
	nn, _ := n.(int64)
	gg, _ := g.(int64)
	if kw != pdfOp("obj") || nn != int64(num) {
		return nil, fmt.Errorf("%w: object %d not at offset %d", ErrMalformed, num, off)
	}
	v, err := l.object(0, true)
	if err != nil {
		return nil, err
	}
	ref := pdfRef{num, uint16(gg)}
	if dict, ok := v.(pdfDict); ok {
		save := l.pos
		l.skipSpace()
		if bytes.HasPrefix(d.data[l.pos:], []byte("stream")) {
			return d.streamAt(dict, ref, l.pos+len("stream")), nil
		}
		l.pos = save
	}
	if d.crypt != nil && ref != d.encRef {
		v = d.crypt.decryptStrings(v, ref)
	}
	return v, nil
}

// streamAt finds the data of a stream whose "stream" keyword ends at pos.
func (d *pdfDoc) streamAt(dict pdfDict, ref pdfRef, pos int) *pdfStream {
	if pos < len(d.data) && d.data[pos] == '\r' {
		pos++
	}
	if pos < len(d.data) && d.data[pos] == '\n' {
		pos++
	}
	s := &pdfStream{dict: dict, ref: ref, off: pos}
	if n, ok := pdfInt(dict["Length"]); ok && n >= 0 && int64(pos)+n <= int64(len(d.data)) {
		end := pos + int(n)
		rest := d.data[end:min(len(d.data), end+32)]
		if bytes.HasPrefix(bytes.TrimLeft(rest, " \r\n\t\f\x00"), []byte("endstream")) {
			s.end = end
			return s
		}
	}
	if ref, ok := dict["Length"].(pdfRef); ok && !d.loading[ref.num] {
		if n, ok := pdfInt(d.object(ref)); ok && n >= 0 && int64(pos)+n <= int64(len(d.data)) {
			end := pos + int(n)
			rest := d.data[end:min(len(d.data), end+32)]
			if bytes.HasPrefix(bytes.TrimLeft(rest, " \r\n\t\f\x00"), []byte("endstream")) {
				s.end = end
				return s
			}
		}
	}
	// Wrong or missing Length: up to the next "endstream".
	i := bytes.Index(d.data[pos:], []byte("endstream"))
	if i < 0 {
		s.end = len(d.data)
		return s
	}
	end := pos + i
	if end > pos && d.data[end-1] == '\n' {
		end--
	}
	if end > pos && d.data[end-1] == '\r' {
		end--
	}
	s.end = end
	return s
}

// loadObjStm parses object stream num into the cache.
func (d *pdfDoc) loadObjStm(num uint32) {
	if d.objstms[num] {
		return
	}
	d.objstms[num] = true
	s, ok := d.object(pdfRef{num: num}).(*pdfStream)
	if !ok {
		return
	}
	data, err := d.decode(s)
	if err != nil {
		return
	}
	n, _ := pdfInt(s.dict["N"])
	first, _ := pdfInt(s.dict["First"])
	if first < 0 || first > int64(len(data)) {
		return
	}
	l := &pdfLexer{b: data[:first]}
	type entry struct {
		num uint32
		off int64
	}
	var entries []entry
	for i := int64(0); i < n; i++ {
		a, err1 := l.object(0, false)
		b, err2 := l.object(0, false)
		on, ok1 := a.(int64)
		oo, ok2 := b.(int64)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || on < 0 || on > 1<<31 || oo < 0 {
			break
		}
		entries = append(entries, entry{uint32(on), oo})
	}
	for _, e := range entries {
		if _, done := d.cache[e.num]; done {
			continue
		}
		if x, ok := d.xref[e.num]; ok && (x.kind != 2 || x.stm != num) {
			continue // a newer version lives elsewhere
		}
		if first+e.off >= int64(len(data)) {
			continue
		}
		ol := &pdfLexer{b: data, pos: int(first + e.off)}
		if v, err := ol.object(0, true); err == nil {
			d.cache[e.num] = v
		}
	}
}

// scan finds every "num gen obj" in the file (the last one of a number
// wins), for files whose cross-reference data is damaged.
func (d *pdfDoc) scan() map[uint32]int {
	if d.scanned != nil {
		return d.scanned
	}
	d.scanned = make(map[uint32]int)
	data := d.data
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("obj"))
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		if i < len(data) && !isPDFSpace(data[i]) && !isPDFDelim(data[i]) {
			continue
		}
		// Walk back over "num gen ".
		k := at - 1
		for k >= 0 && isPDFSpace(data[k]) {
			k--
		}
		ge := k
		for k >= 0 && data[k] >= '0' && data[k] <= '9' {
			k--
		}
		if k == ge {
			continue
		}
		for k >= 0 && isPDFSpace(data[k]) {
			k--
		}
		ne := k
		for k >= 0 && data[k] >= '0' && data[k] <= '9' && ne-k < 10 {
			k--
		}
		if k == ne || (k >= 0 && !isPDFSpace(data[k]) && !isPDFDelim(data[k])) {
			continue
		}
		num, err := strconv.ParseUint(string(data[k+1:ne+1]), 10, 32)
		if err != nil {
			continue
		}
		d.scanned[uint32(num)] = k + 1
	}
	return d.scanned
}

// readXref reads the cross-reference sections from startxref back along
// /Prev, newest entries first.
func (d *pdfDoc) readXref() error {
	tail := d.data[max(0, len(d.data)-2048):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return fmt.Errorf("%w: no startxref (truncated?)", ErrMalformed)
	}
	l := &pdfLexer{b: tail, pos: i + len("startxref")}
	v, _ := l.object(0, false)
	off, ok := v.(int64)
	if !ok {
		return fmt.Errorf("%w: bad startxref", ErrMalformed)
	}
	seen := make(map[int64]bool)
	for off > 0 || len(seen) == 0 {
		if seen[off] || len(seen) > 256 {
			break
		}
		seen[off] = true
		trailer, err := d.xrefSection(int(off))
		if err != nil {
			return err
		}
		if d.trailer == nil {
			d.trailer = trailer
		}
		if stm, ok := pdfInt(trailer["XRefStm"]); ok {
			_, _ = d.xrefSection(int(stm))
		}
		prev, ok := pdfInt(trailer["Prev"])
		if !ok {
			break
		}
		off = prev
	}
	return nil
}

// xrefSection reads one xref table or stream at off and returns its
// trailer dictionary.
func (d *pdfDoc) xrefSection(off int) (pdfDict, error) {
	if off < 0 || off >= len(d.data) {
		return nil, fmt.Errorf("%w: xref offset %d out of range", ErrMalformed, off)
	}
	l := &pdfLexer{b: d.data, pos: off}
	l.skipSpace()
	if bytes.HasPrefix(d.data[l.pos:], []byte("xref")) {
		l.pos += 4
		for {
			a, err := l.object(0, false)
			if err != nil {
				return nil, fmt.Errorf("%w: xref table: %w", ErrMalformed, err)
			}
			if a == pdfOp("trailer") {
				t, err := l.object(0, true)
				td, ok := t.(pdfDict)
				if err != nil || !ok {
					return nil, fmt.Errorf("%w: bad trailer", ErrMalformed)
				}
				return td, nil
			}
			start, ok1 := a.(int64)
			b, _ := l.object(0, false)
			count, ok2 := b.(int64)
			if !ok1 || !ok2 || start < 0 || count < 0 || start > 1<<31 {
				return nil, fmt.Errorf("%w: bad xref subsection", ErrMalformed)
			}
			for k := int64(0); k < count; k++ {
				o, _ := l.object(0, false)
				g, _ := l.object(0, false)
				t, _ := l.object(0, false)
				oi, ok1 := o.(int64)
				gi, ok2 := g.(int64)
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("%w: bad xref entry", ErrMalformed)
				}
				num := uint32(start + k)
				if _, have := d.xref[num]; have {
					continue
				}
				switch t {
				case pdfOp("n"):
					if oi > 0 {
						d.xref[num] = pdfXref{kind: 1, off: int(oi), gen: uint16(gi)}
					}
				case pdfOp("f"):
					d.xref[num] = pdfXref{kind: 0}
				default:
					return nil, fmt.Errorf("%w: bad xref entry type", ErrMalformed)
				}
			}
		}
	}
	// A cross-reference stream.
	n, _ := l.object(0, false)
	num, _ := n.(int64)
	_, _ = l.object(0, false)
	if kw, _ := l.object(0, false); kw != pdfOp("obj") || num < 0 || num > 1<<31 {
		return nil, fmt.Errorf("%w: no xref at offset %d", ErrMalformed, off)
	}
	v, err := d.objectAt(off, uint32(num))
	s, ok := v.(*pdfStream)
	if err != nil || !ok || s.dict["Type"] != pdfName("XRef") {
		return nil, fmt.Errorf("%w: no xref stream at offset %d", ErrMalformed, off)
	}
	data, err := d.decode(s)
	if err != nil {
		return nil, fmt.Errorf("xref stream: %w", err)
	}
	var w [3]int
	wa, _ := s.dict["W"].(pdfArray)
	if len(wa) < 3 {
		return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
	}
	width := 0
	for k := range 3 {
		x, _ := pdfInt(wa[k])
		if x < 0 || x > 8 {
			return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
		}
		w[k] = int(x)
		width += int(x)
	}
	if width == 0 {
		return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
	}
	index, _ := s.dict["Index"].(pdfArray)
	if index == nil {
		size, _ := pdfInt(s.dict["Size"])
		index = pdfArray{int64(0), size}
	}
	field := func(b []byte, def int64) int64 {
		if len(b) == 0 {
			return def
		}
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v
	}
	pos := 0
	for k := 0; k+1 < len(index); k += 2 {
		start, _ := pdfInt(index[k])
		count, _ := pdfInt(index[k+1])
		if start < 0 || count < 0 || start > 1<<31 {
			break
		}
		for e := int64(0); e < count && pos+width <= len(data); e++ {
			b := data[pos : pos+width]
			pos += width
			typ := field(b[:w[0]], 1)
			f2 := field(b[w[0]:w[0]+w[1]], 0)
			f3 := field(b[w[0]+w[1]:], 0)
			num := uint32(start + e)
			if _, have := d.xref[num]; have {
				continue
			}
			switch typ {
			case 0:
				d.xref[num] = pdfXref{kind: 0}
			case 1:
				d.xref[num] = pdfXref{kind: 1, off: int(f2), gen: uint16(f3)}
			case 2:
				d.xref[num] = pdfXref{kind: 2, stm: uint32(f2), off: int(f3)}
			}
		}
	}
	return s.dict, nil
}

// rebuild recovers the trailer from a scan of the file when the
// cross-reference data is unusable.
func (d *pdfDoc) rebuild() {
	d.repaired = true
	d.xref = make(map[uint32]pdfXref)
	for num, off := range d.scan() {
		d.xref[num] = pdfXref{kind: 1, off: off}
	}
	// Object streams hold most objects of modern files: register their
	// members too.
	nums := make([]uint32, 0, len(d.xref))
	for num := range d.xref {
		nums = append(nums, num)
	}
	slices.Sort(nums)
	trailer := pdfDict{}
	for _, num := range nums {
		v := d.object(pdfRef{num: num})
		s, ok := v.(*pdfStream)
		if !ok {
			if dict, ok := v.(pdfDict); ok && dict["Type"] == pdfName("Catalog") {
				trailer["Root"] = pdfRef{num: num}
			}
			continue
		}
		switch s.dict["Type"] {
		case pdfName("XRef"):
			for _, k := range []pdfName{"Root", "Info", "Encrypt", "ID"} {
				if v, ok := s.dict[k]; ok {
					trailer[k] = v
				}
			}
		case pdfName("ObjStm"):
			d.loadObjStm(num)
		}
	}
	for num, v := range d.cache {
		if dict, ok := v.(pdfDict); ok && dict["Type"] == pdfName("Catalog") && trailer["Root"] == nil {
			trailer["Root"] = pdfRef{num: num}
		}
	}
	// Classic trailers win: the last one in the file is the newest.
	for i := len(d.data); ; {
		j := bytes.LastIndex(d.data[:i], []byte("trailer"))
		if j < 0 {
			break
		}
		l := &pdfLexer{b: d.data, pos: j + len("trailer")}
		if t, err := l.object(0, true); err == nil {
			if td, ok := t.(pdfDict); ok && td["Root"] != nil {
				for k, v := range td {
					trailer[k] = v
				}
				break
			}
		}
		i = j
	}
	d.trailer = trailer
}

// decode returns the decoded data of stream s, decrypted and unfiltered.
// Decompressed bytes count against the job's limits.
func (d *pdfDoc) decode(s *pdfStream) ([]byte, error) {
	if s.off > s.end || s.end > len(d.data) {
		return nil, fmt.Errorf("%w: stream out of range", ErrMalformed)
	}
	data := d.data[s.off:s.end]
	filters := pdfArray{}
	switch f := d.resolve(s.dict["Filter"]).(type) {
	case pdfName:
		filters = pdfArray{f}
	case pdfArray:
		filters = f
	}
	params := pdfArray{}
	switch pr := d.resolve(s.dict["DecodeParms"]).(type) {
	case pdfDict:
		params = pdfArray{pr}
	case pdfArray:
		params = pr
	}
	if d.crypt != nil && s.dict["Type"] != pdfName("XRef") && !(len(filters) > 0 && d.resolve(filters[0]) == pdfName("Crypt")) {
		data = d.crypt.decryptStream(data, s.ref, s.dict)
	}
	for i, f := range filters {
		var parm pdfDict
		if i < len(params) {
			parm = d.dict(params[i])
		}
		var err error
		data, err = d.filter(d.name(f), parm, data)
		if err != nil {
			return data, err
		}
	}
	return data, nil
}

// filter applies one decoding filter.
func (d *pdfDoc) filter(name pdfName, parm pdfDict, in []byte) ([]byte, error) {
	j := d.p.j
	switch name {
	case "FlateDecode", "Fl":
		var r io.Reader
		if zr, err := zlib.NewReader(bytes.NewReader(in)); err == nil {
			r = zr
		} else {
			r = flate.NewReader(bytes.NewReader(in))
		}
		out, err := j.readAllHint(j.inflate(r, int64(len(in))), int64(len(in))*4)
		if err != nil {
			if isSentinel(err) && !errors.Is(err, ErrMalformed) {
				return nil, err
			}
			// Truncated or corrupt tails are common: keep what decoded.
			if len(out) == 0 {
				return nil, fmt.Errorf("%w: flate: %w", ErrMalformed, err)
			}
		}
		return predict(out, parm)
	case "LZWDecode", "LZW":
		early := true
		if v, ok := pdfInt(parm["EarlyChange"]); ok && v == 0 {
			early = false
		}
		out, err := lzwDecode(in, early, d.limit(len(in)))
		if err != nil {
			return nil, err
		}
		if err := d.charge(len(out)); err != nil {
			return nil, err
		}
		return predict(out, parm)
	case "ASCIIHexDecode", "AHx":
		out, _ := hexDecode(in)
		return out, nil
	case "ASCII85Decode", "A85":
		return ascii85Decode(in), nil
	case "RunLengthDecode", "RL":
		out, err := runLengthDecode(in, d.limit(len(in)))
		if err != nil {
			return nil, err
		}
		return out, d.charge(len(out))
	case "Crypt":
		return in, nil
	case "":
		return in, nil
	}
	return nil, fmt.Errorf("%w: filter %s", ErrUnsupported, name)
}

// limit is the most a stream of n compressed bytes may expand to.
func (d *pdfDoc) limit(n int) int {
	j := d.p.j
	lim := max(int64(float64(n)*j.lim.MaxCompressionRatio), ratioSlack)
	return int(min(lim, j.lim.MaxDecompressedSize-j.inflated.Load()+1))
}

// charge counts n decompressed bytes against the tree's budget.
func (d *pdfDoc) charge(n int) error {
	j := d.p.j
	if j.inflated.Add(int64(n)) > j.lim.MaxDecompressedSize {
		return fmt.Errorf("%w: tree decompresses to more than MaxDecompressedSize (%d bytes)", ErrBomb, j.lim.MaxDecompressedSize)
	}
	return nil
}

// predict undoes PNG (10-15) and TIFF (2) predictors.
func predict(data []byte, parm pdfDict) ([]byte, error) {
	pred, _ := pdfInt(parm["Predictor"])
	if pred < 2 {
		return data, nil
	}
	colors, bpc, columns := int64(1), int64(8), int64(1)
	if v, ok := pdfInt(parm["Colors"]); ok && v > 0 && v <= 32 {
		colors = v
	}
	if v, ok := pdfInt(parm["BitsPerComponent"]); ok && v > 0 && v <= 16 {
		bpc = v
	}
	if v, ok := pdfInt(parm["Columns"]); ok && v > 0 && v <= 1<<20 {
		columns = v
	}
	bpp := int(max(1, (colors*bpc+7)/8))
	rowLen := int((colors*bpc*columns + 7) / 8)
	if pred == 2 {
		if bpc != 8 {
			return data, nil
		}
		for r := 0; r+rowLen <= len(data); r += rowLen {
			row := data[r : r+rowLen]
			for i := bpp; i < len(row); i++ {
				row[i] += row[i-bpp]
			}
		}
		return data, nil
	}
	out := make([]byte, 0, len(data))
	prev := make([]byte, rowLen)
	for r := 0; r+1+rowLen <= len(data); r += 1 + rowLen {
		ft := data[r]
		row := data[r+1 : r+1+rowLen]
		for i := range row {
			var a, b, c byte
			if i >= bpp {
				a = row[i-bpp]
				c = prev[i-bpp]
			}
			b = prev[i]
			switch ft {
			case 1:
				row[i] += a
			case 2:
				row[i] += b
			case 3:
				row[i] += byte((int(a) + int(b)) / 2)
			case 4:
				row[i] += paeth(a, b, c)
			}
		}
		out = append(out, row...)
		copy(prev, row)
	}
	return out, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lzwDecode decodes PDF LZW data (MSB-first codes, 9-12 bits).
func lzwDecode(in []byte, early bool, limit int) ([]byte, error) {
	var out []byte
	type entry struct {
		prefix int
		c      byte
		length int
	}
	table := make([]entry, 258, 4096)
	for i := range 256 {
		table[i] = entry{-1, byte(i), 1}
	}
	var bitbuf uint32
	nbits, width := 0, 9
	prev := -1
	tmp := make([]byte, 0, 4096)
	emit := func(code int) byte {
		tmp = tmp[:0]
		for c := code; c >= 0; c = table[c].prefix {
			tmp = append(tmp, table[c].c)
		}
		for i := len(tmp) - 1; i >= 0; i-- {
			out = append(out, tmp[i])
		}
		return tmp[len(tmp)-1]
	}
	for _, b := range in {
		bitbuf = bitbuf<<8 | uint32(b)
		nbits += 8
		for nbits >= width {
			code := int(bitbuf>>(nbits-width)) & (1<<width - 1)
			nbits -= width
			switch {
			case code == 256:
				table = table[:258]
				width, prev = 9, -1
				continue
			case code == 257:
				return out, nil
			case prev < 0:
				if code > 255 {
					return out, fmt.Errorf("%w: lzw: bad first code", ErrMalformed)
				}
				emit(code)
			case code < len(table):
				first := emit(code)
				if len(table) < 4096 {
					table = append(table, entry{prev, first, table[prev].length + 1})
				}
			case code == len(table):
				// The KwKwK case: prev's string plus its own first byte.
				c := prev
				for table[c].prefix >= 0 {
					c = table[c].prefix
				}
				if len(table) < 4096 {
					table = append(table, entry{prev, table[c].c, table[prev].length + 1})
				}
				emit(code)
			default:
				return out, fmt.Errorf("%w: lzw: bad code", ErrMalformed)
			}
			prev = code
			if len(out) > limit {
				return nil, fmt.Errorf("%w: LZW stream expands past its limit", ErrBomb)
			}
			n := len(table)
			if early {
				n++
			}
			switch {
			case n > 2047:
				width = 12
			case n > 1023:
				width = 11
			case n > 511:
				width = 10
			}
		}
	}
	return out, nil
}

// ascii85Decode decodes ASCII85 leniently (white space skipped, 'z' for
// four zeros, '~>' ends).
func ascii85Decode(in []byte) []byte {
	out := make([]byte, 0, len(in)*4/5+4)
	var v uint32
	n := 0
	if bytes.HasPrefix(in, []byte("<~")) {
		in = in[2:]
	}
	for _, c := range in {
		switch {
		case c == '~':
			goto done
		case c == 'z' && n == 0:
			out = append(out, 0, 0, 0, 0)
		case c >= '!' && c <= 'u':
			v = v*85 + uint32(c-'!')
			n++
			if n == 5 {
				out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
				v, n = 0, 0
			}
		}
	}
done:
	if n > 1 {
		for k := n; k < 5; k++ {
			v = v*85 + 84
		}
		b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		out = append(out, b[:n-1]...)
	}
	return out
}

// runLengthDecode decodes the RunLengthDecode filter.
func runLengthDecode(in []byte, limit int) ([]byte, error) {
	var out []byte
	for i := 0; i < len(in); {
		n := int(in[i])
		i++
		switch {
		case n == 128:
			return out, nil
		case n < 128:
			end := min(len(in), i+n+1)
			out = append(out, in[i:end]...)
			i = end
		default:
			if i < len(in) {
				out = append(out, bytes.Repeat(in[i:i+1], 257-n)...)
				i++
			}
		}
		if len(out) > limit {
			return nil, fmt.Errorf("%w: run-length stream expands past its limit", ErrBomb)
		}
	}
	return out, nil
}
