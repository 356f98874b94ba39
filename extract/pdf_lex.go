package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
