package extract

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// RTF destinations: where the text of a group goes.
const (
	rtfText = iota
	rtfSkip
	rtfFonts
	rtfInfo
	rtfTitle
	rtfAuthor
	rtfSubject
	rtfKeywords
	rtfOperator
	rtfCompany
	rtfComment
	rtfCreated
	rtfRevised
)

// rtfSkipped lists destinations whose content is not visible text.
var rtfSkipped = map[string]bool{
	"colortbl": true, "stylesheet": true, "listtable": true, "listoverridetable": true, "revtbl": true,
	"rsidtbl": true, "generator": true, "pict": true, "object": true, "objdata": true, "themedata": true,
	"colorschememapping": true, "datastore": true, "latentstyles": true, "fldinst": true, "xmlnstbl": true,
	"mmathPr": true, "filetbl": true, "pgdsctbl": true, "bkmkstart": true, "bkmkend": true, "protusertbl": true,
	"userprops": true, "wgrffmtfilter": true, "nonshppict": true, "sp": true, "sn": true, "sv": true,
	"template": true, "docvar": true, "fchars": true, "lchars": true, "pntxta": true, "pntxtb": true,
	"falt": true, "panose": true, "fname": true, "atnid": true, "atnauthor": true, "annotation": true,
	"atrfstart": true, "atrfend": true, "atnref": true, "atndate": true, "xe": true, "tc": true, "txe": true,
	"private": true, "blipuid": true, "passwordhash": true, "password": true, "factoidname": true,
	"ftnsep": true, "ftnsepc": true, "aftnsep": true, "aftnsepc": true, "ftncn": true, "aftncn": true,
	"listpicture": true, "hl": true, "hlloc": true, "hlsrc": true, "hlfr": true, "printim": true, "buptim": true,
}

// rtfInfoDest maps \info sub-destinations to where their text goes.
var rtfInfoDest = map[string]int{
	"title": rtfTitle, "author": rtfAuthor, "subject": rtfSubject, "keywords": rtfKeywords,
	"operator": rtfOperator, "company": rtfCompany, "doccomm": rtfComment, "creatim": rtfCreated, "revtim": rtfRevised,
}

// rtfSymbols maps control words that stand for one character.
var rtfSymbols = map[string]string{
	"emdash": "—", "endash": "–", "bullet": "•", "lquote": "‘", "rquote": "’", "ldblquote": "“",
	"rdblquote": "”", "emspace": " ", "enspace": " ", "qmspace": " ", "zwj": "\u200d", "zwnj": "\u200c",
	"ltrmark": "\u200e", "rtlmark": "\u200f", "tab": "\t", "cell": "\t", "nestcell": "\t",
	"par": "\n", "line": "\n", "sect": "\n", "page": "\n", "row": "\n", "nestrow": "\n", "lbr": "\n",
}

type rtfState struct {
	dest int
	uc   int
	cp   int
}

type rtfParser struct {
	p       *parser
	data    []byte
	st      rtfState
	stack   []rtfState
	defCP   int
	fonts   map[int]int
	fontNum int
	// skip is the number of characters still to skip after \uN.
	skip int
	// pending holds \'hh bytes until a multi-byte sequence completes.
	pending   []byte
	pendingCP int
	high      rune
	starred   bool
	info      map[int]*strings.Builder
	date      map[int]*[5]int
}

// parseRTF extracts the text of an RTF document with a small state
// machine: groups, control words, \'hh and \uN escapes, skipped
// destinations (font and colour tables, stylesheet, pictures, field
// instructions...), and \info into the metadata.
func parseRTF(p *parser, data []byte) {
	r := &rtfParser{p: p, data: data, defCP: 1252, fonts: make(map[int]int),
		info: make(map[int]*strings.Builder), date: make(map[int]*[5]int)}
	r.st = rtfState{dest: rtfText, uc: 1, cp: 1252}
	err := r.run()
	r.flush()
	m := &p.d.Meta
	get := func(d int) string {
		if b := r.info[d]; b != nil {
			return strings.TrimSpace(b.String())
		}
		return ""
	}
	m.Title, m.Author, m.Subject = get(rtfTitle), get(rtfAuthor), get(rtfSubject)
	for d, k := range map[int]string{rtfKeywords: "keywords", rtfOperator: "last modified by", rtfCompany: "company", rtfComment: "comment"} {
		if v := get(d); v != "" {
			p.d.setExtra(k, v)
		}
	}
	if t := r.date[rtfCreated]; t != nil {
		m.Created = rtfTime(t)
	}
	if t := r.date[rtfRevised]; t != nil {
		m.Modified = rtfTime(t)
	}
	if err != nil {
		p.fail("parse", err)
	}
}

func rtfTime(t *[5]int) time.Time {
	if t[0] < 1 || t[1] < 1 || t[1] > 12 || t[2] < 1 || t[2] > 31 {
		return time.Time{}
	}
	return time.Date(t[0], time.Month(t[1]), t[2], t[3], t[4], 0, 0, time.UTC)
}

func (r *rtfParser) run() error {
	data := r.data
	for i, n := 0, 0; i < len(data); n++ {
		if n&65535 == 0 && r.p.cancelled() {
			return nil
		}
		if r.p.text.full() {
			return nil
		}
		c := data[i]
		switch c {
		case '{':
			r.flush()
			r.skip = 0
			if len(r.stack) >= 1<<16 {
				return fmt.Errorf("%w: groups nested deeper than %d", ErrMalformed, 1<<16)
			}
			r.stack = append(r.stack, r.st)
			i++
		case '}':
			r.flush()
			r.skip = 0
			if len(r.stack) > 0 {
				r.st = r.stack[len(r.stack)-1]
				r.stack = r.stack[:len(r.stack)-1]
			}
			i++
		case '\\':
			i = r.control(i + 1)
		case '\r', '\n':
			i++
		default:
			// A run of plain characters.
			j := i
			for j < len(data) && data[j] != '{' && data[j] != '}' && data[j] != '\\' && data[j] != '\r' && data[j] != '\n' {
				j++
			}
			run := data[i:j]
			if r.skip > 0 {
				k := min(r.skip, len(run))
				r.skip -= k
				run = run[k:]
			}
			r.bytes(run)
			i = j
		}
	}
	r.flush()
	if len(r.stack) > 0 {
		return fmt.Errorf("%w: %d groups not closed (truncated?)", ErrMalformed, len(r.stack))
	}
	return nil
}

// control handles the control word or symbol starting at data[i] (after
// the backslash) and returns the position after it.
func (r *rtfParser) control(i int) int {
	data := r.data
	if i >= len(data) {
		return i
	}
	c := data[i]
	if !isLetter(c) {
		// Control symbol.
		i++
		if c == '\'' {
			if i+2 > len(data) {
				return len(data)
			}
			b, ok := unhex2(data[i], data[i+1])
			i += 2
			if r.skip > 0 {
				r.skip--
				return i
			}
			if ok {
				if len(r.pending) == 0 {
					r.pendingCP = r.st.cp
				}
				r.pending = append(r.pending, b)
			}
			return i
		}
		if r.skip > 0 {
			r.skip--
			return i
		}
		switch c {
		case '*':
			r.starred = true
		case '~':
			r.emit("\u00a0")
		case '_':
			r.emit("\u2011")
		case '\\', '{', '}':
			r.emit(string(c))
		case '\r', '\n':
			r.emit("\n")
		case '\t':
			r.emit("\t")
		}
		return i
	}
	start := i
	for i < len(data) && isLetter(data[i]) && i-start < 32 {
		i++
	}
	word := string(data[start:i])
	param, hasParam := 0, false
	neg := false
	if i < len(data) && data[i] == '-' {
		neg = true
		i++
	}
	for d := 0; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
		if d < 10 {
			param = param*10 + int(data[i]-'0')
		}
		d++
		hasParam = true
	}
	if neg {
		param = -param
	}
	if i < len(data) && data[i] == ' ' {
		i++
	}
	if word == "bin" && hasParam && param > 0 {
		return min(len(data), i+param)
	}
	if r.skip > 0 {
		r.skip--
		return i
	}
	starred := r.starred
	r.starred = false
	r.word(word, param, hasParam, starred)
	return i
}

func (r *rtfParser) word(word string, param int, hasParam, starred bool) {
	st := &r.st
	switch {
	case word == "u" && hasParam:
		if param < 0 {
			param += 65536
		}
		r.unicode(rune(param))
		r.skip = st.uc
		return
	case word == "uc" && hasParam:
		st.uc = max(0, min(param, 16))
		return
	case word == "fonttbl":
		st.dest = rtfFonts
		return
	case word == "info":
		st.dest = rtfInfo
		return
	}
	switch st.dest {
	case rtfFonts:
		switch word {
		case "f":
			r.fontNum = param
		case "fcharset":
			if cp := charsetCodepage(param); cp != 0 {
				r.fonts[r.fontNum] = cp
			}
		case "cpg":
			r.fonts[r.fontNum] = param
		}
		return
	case rtfInfo:
		if d, ok := rtfInfoDest[word]; ok {
			st.dest = d
		}
		return
	case rtfCreated, rtfRevised:
		t := r.date[st.dest]
		if t == nil {
			t = new([5]int)
			r.date[st.dest] = t
		}
		switch word {
		case "yr":
			t[0] = param
		case "mo":
			t[1] = param
		case "dy":
			t[2] = param
		case "hr":
			t[3] = param
		case "min":
			t[4] = param
		}
		return
	}
	switch word {
	case "ansicpg":
		r.flush()
		r.defCP, st.cp = param, param
	case "ansi":
		r.defCP, st.cp = 1252, 1252
	case "mac":
		r.defCP, st.cp = 10000, 10000
	case "pc":
		r.defCP, st.cp = 437, 437
	case "pca":
		r.defCP, st.cp = 850, 850
	case "f":
		r.flush()
		if cp, ok := r.fonts[param]; ok {
			st.cp = cp
		} else {
			st.cp = r.defCP
		}
	default:
		if s, ok := rtfSymbols[word]; ok {
			if s == "\n" {
				r.flush()
				r.newline()
				return
			}
			r.emit(s)
			return
		}
		if starred || rtfSkipped[word] {
			st.dest = rtfSkip
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func unhex2(a, b byte) (byte, bool) {
	h, ok1 := unhex(a)
	l, ok2 := unhex(b)
	return h<<4 | l, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unicode emits \uN, joining surrogate pairs.
func (r *rtfParser) unicode(u rune) {
	r.flush()
	switch {
	case u >= 0xD800 && u < 0xDC00:
		r.high = u
		return
	case u >= 0xDC00 && u < 0xE000 && r.high != 0:
		u = (r.high-0xD800)<<10 + (u - 0xDC00) + 0x10000
	case u >= 0xDC00 && u < 0xE000:
		u = utf8.RuneError
	}
	r.high = 0
	r.emit(string(u))
}

// bytes emits raw 8-bit text in the current code page.
func (r *rtfParser) bytes(b []byte) {
	if len(b) == 0 {
		return
	}
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii && len(r.pending) == 0 {
		r.write(b)
		return
	}
	if len(r.pending) == 0 {
		r.pendingCP = r.st.cp
	}
	r.pending = append(r.pending, b...)
	r.flush()
}

// flush decodes pending \'hh bytes.
func (r *rtfParser) flush() {
	if len(r.pending) == 0 {
		return
	}
	b := r.pending
	r.pending = r.pending[:0]
	if e := codepage(r.pendingCP); e != nil {
		if out, err := e.NewDecoder().Bytes(b); err == nil {
			r.write(out)
			return
		}
	}
	if utf8.Valid(b) {
		r.write(b)
		return
	}
	out, _ := charmap.Windows1252.NewDecoder().Bytes(b)
	r.write(out)
}

func (r *rtfParser) emit(s string) {
	r.flush()
	r.write([]byte(s))
}

func (r *rtfParser) newline() {
	if r.st.dest == rtfText {
		r.p.text.newline()
	}
}

func (r *rtfParser) write(b []byte) {
	switch d := r.st.dest; d {
	case rtfText:
		r.p.text.add(b)
	case rtfTitle, rtfAuthor, rtfSubject, rtfKeywords, rtfOperator, rtfCompany, rtfComment:
		sb := r.info[d]
		if sb == nil {
			sb = new(strings.Builder)
			r.info[d] = sb
		}
		if sb.Len() < 4096 {
			sb.Write(b)
		}
	}
}

// charsetCodepage maps an RTF \fcharset to a Windows code page.
func charsetCodepage(cs int) int {
	switch cs {
	case 0, 1, 2:
		return 1252
	case 77:
		return 10000
	case 128:
		return 932
	case 129:
		return 949
	case 134:
		return 936
	case 136:
		return 950
	case 161:
		return 1253
	case 162:
		return 1254
	case 163:
		return 1258
	case 177:
		return 1255
	case 178:
		return 1256
	case 186:
		return 1257
	case 204:
		return 1251
	case 222:
		return 874
	case 238:
		return 1250
	case 254:
		return 437
	}
	return 0
}

// codepage returns the encoding of a Windows code page, nil if unknown.
func codepage(cp int) encoding.Encoding {
	switch cp {
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 852:
		return charmap.CodePage852
	case 866:
		return charmap.CodePage866
	case 874:
		return charmap.Windows874
	case 932:
		return japanese.ShiftJIS
	case 936:
		return simplifiedchinese.GBK
	case 949:
		return korean.EUCKR
	case 950:
		return traditionalchinese.Big5
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 1252:
		return charmap.Windows1252
	case 1253:
		return charmap.Windows1253
	case 1254:
		return charmap.Windows1254
	case 1255:
		return charmap.Windows1255
	case 1256:
		return charmap.Windows1256
	case 1257:
		return charmap.Windows1257
	case 1258:
		return charmap.Windows1258
	case 10000:
		return charmap.Macintosh
	case 65001:
		return encoding.Nop
	}
	return nil
}
