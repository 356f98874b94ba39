package extract

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// pdfFont maps the character codes of one font to text and widths.
type pdfFont struct {
	simple bool
	enc    [256]string // simple fonts: code -> text by encoding
	toUni  *pdfCMap    // the ToUnicode CMap, if any
	codes  *pdfCMap    // a composite font's embedded encoding CMap
	utf16  bool        // composite font whose codes are UTF-16BE
	utf8   bool        // composite font whose codes are UTF-8
	twoMin bool        // Identity and UCS2 CMaps: two-byte codes
	first  int
	widths []float64 // simple fonts, from FirstChar
	cidW   map[uint32]float64
	cidWR  []cidWidth
	dw     float64 // default width, glyph units
	scale  float64 // glyph units -> text space (0.001 or Type3 matrix)
	cache  map[uint32]string
}

type cidWidth struct {
	lo, hi uint32
	w      float64
}

// next splits the first character code off s.
func (f *pdfFont) next(s []byte) (uint32, int) {
	if f.simple {
		return uint32(s[0]), 1
	}
	if f.utf8 {
		_, n := utf8.DecodeRune(s)
		return bytesCode(s[:n]), n
	}
	if f.codes != nil && len(f.codes.space) > 0 {
		return f.codes.split(s)
	}
	if f.toUni != nil && len(f.toUni.space) > 0 && !f.twoMin {
		return f.toUni.split(s)
	}
	if len(s) < 2 {
		return uint32(s[0]), 1
	}
	c := uint32(s[0])<<8 | uint32(s[1])
	if f.utf16 && c >= 0xD800 && c < 0xDC00 && len(s) >= 4 {
		return c<<16 | uint32(s[2])<<8 | uint32(s[3]), 4
	}
	return c, 2
}

func bytesCode(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 | uint32(x)
	}
	return c
}

// text returns the Unicode text of a code ("" if unknown).
func (f *pdfFont) text(code uint32, n int) string {
	if s, ok := f.cache[code]; ok {
		return s
	}
	var s string
	if f.toUni != nil {
		s = f.toUni.unicode(code)
	}
	if s == "" {
		switch {
		case f.simple:
			s = f.enc[code&0xFF]
		case f.utf16:
			units := []uint16{uint16(code)}
			if n == 4 {
				units = []uint16{uint16(code >> 16), uint16(code)}
			}
			s = string(utf16.Decode(units))
		case f.utf8:
			var b [4]byte
			k := 0
			for sh := (n - 1) * 8; sh >= 0; sh -= 8 {
				b[k] = byte(code >> sh)
				k++
			}
			s = string(b[:k])
		}
	}
	s = expandLigature(s)
	if len(f.cache) < 1<<16 {
		f.cache[code] = s
	}
	return s
}

// expandLigature spells out presentation-form ligatures and drops
// control characters.
func expandLigature(s string) string {
	switch s {
	case "\ufb00":
		return "ff"
	case "\ufb01":
		return "fi"
	case "\ufb02":
		return "fl"
	case "\ufb03":
		return "ffi"
	case "\ufb04":
		return "ffl"
	case "\ufb05", "\ufb06":
		return "st"
	case "\u00ad":
		return "-"
	}
	if len(s) == 1 && (s[0] < 0x20 && s[0] != '\t' || s[0] == 0x7F) {
		return ""
	}
	return s
}

// width returns the advance of a code in glyph units.
func (f *pdfFont) width(code uint32) float64 {
	if f.simple {
		i := int(code) - f.first
		if i >= 0 && i < len(f.widths) {
			return f.widths[i]
		}
		return f.dw
	}
	cid := code
	if f.codes != nil {
		if c, ok := f.codes.cid(code); ok {
			cid = c
		}
	}
	if w, ok := f.cidW[cid]; ok {
		return w
	}
	for _, r := range f.cidWR {
		if cid >= r.lo && cid <= r.hi {
			return r.w
		}
	}
	return f.dw
}

// loadFont builds a pdfFont from a font dictionary.
func (d *pdfDoc) loadFont(v any) *pdfFont {
	ref, isRef := v.(pdfRef)
	if isRef {
		if f, ok := d.fonts[ref]; ok {
			return f
		}
	}
	f := d.buildFont(d.dict(v))
	if isRef && len(d.fonts) < 1<<14 {
		d.fonts[ref] = f
	}
	return f
}

func (d *pdfDoc) buildFont(fd pdfDict) *pdfFont {
	f := &pdfFont{scale: 0.001, cache: make(map[uint32]string), dw: 500}
	subtype := d.name(fd["Subtype"])
	if s, ok := d.resolve(fd["ToUnicode"]).(*pdfStream); ok {
		if data, err := d.decode(s); err == nil {
			f.toUni = parseCMap(data)
		}
	}
	if subtype == "Type0" {
		f.dw = 1000
		switch enc := d.resolve(fd["Encoding"]).(type) {
		case pdfName:
			name := string(enc)
			switch {
			case strings.HasPrefix(name, "Identity"):
				f.twoMin = true
			case strings.HasPrefix(name, "Uni") && (strings.Contains(name, "UCS2") || strings.Contains(name, "UTF16")):
				f.utf16, f.twoMin = true, true
			case strings.HasPrefix(name, "Uni") && strings.Contains(name, "UTF8"):
				f.utf8 = true
			}
		case *pdfStream:
			if data, err := d.decode(enc); err == nil {
				f.codes = parseCMap(data)
			}
		}
		if desc := d.array(fd["DescendantFonts"]); len(desc) > 0 {
			cf := d.dict(desc[0])
			if w, ok := d.num(cf["DW"]); ok {
				f.dw = w
			}
			f.cidWidths(d, d.array(cf["W"]))
		}
		return f
	}
	f.simple = true
	if subtype == "Type3" {
		if m := d.array(fd["FontMatrix"]); len(m) == 6 {
			if a, ok := d.num(m[0]); ok && a != 0 {
				f.scale = a
			}
		}
	}
	desc := d.dict(fd["FontDescriptor"])
	if w, ok := d.num(desc["MissingWidth"]); ok && w > 0 {
		f.dw = w
	}
	base := string(d.name(fd["BaseFont"]))
	if strings.Contains(strings.ToLower(base), "courier") {
		f.dw = 600
	}
	if first, ok := pdfInt(d.resolve(fd["FirstChar"])); ok && first >= 0 && first < 256 {
		f.first = int(first)
		for _, w := range d.array(fd["Widths"]) {
			x, _ := d.num(w)
			if x == 0 {
				x = f.dw
			}
			f.widths = append(f.widths, x)
			if len(f.widths) >= 256 {
				break
			}
		}
	}
	// Encoding: the base, then Differences.
	table := &standardEncoding
	var diffs pdfArray
	builtin := true
	switch enc := d.resolve(fd["Encoding"]).(type) {
	case pdfName:
		if t := namedEncoding(enc); t != nil {
			table, builtin = t, false
		}
	case pdfDict:
		if t := namedEncoding(d.name(enc["BaseEncoding"])); t != nil {
			table, builtin = t, false
		}
		diffs = d.array(enc["Differences"])
	}
	if builtin && subtype != "TrueType" {
		if t := d.type1Encoding(desc); t != nil {
			table = t
		}
	}
	f.enc = *table
	code := 0
	for _, x := range diffs {
		switch x := d.resolve(x).(type) {
		case int64:
			code = int(x)
		case float64:
			code = int(x)
		case pdfName:
			if code >= 0 && code < 256 {
				f.enc[code] = glyphText(string(x))
			}
			code++
		}
	}
	return f
}

// cidWidths reads a /W array: "c [w1 w2 ...]" and "cfirst clast w".
func (f *pdfFont) cidWidths(d *pdfDoc, w pdfArray) {
	f.cidW = make(map[uint32]float64)
	for i := 0; i < len(w); {
		c, ok := d.num(w[i])
		if !ok || c < 0 || i+1 >= len(w) {
			return
		}
		if arr := d.array(w[i+1]); arr != nil {
			for k, x := range arr {
				if v, ok := d.num(x); ok && len(f.cidW) < 1<<17 {
					f.cidW[uint32(c)+uint32(k)] = v
				}
			}
			i += 2
			continue
		}
		if i+2 >= len(w) {
			return
		}
		hi, ok1 := d.num(w[i+1])
		v, ok2 := d.num(w[i+2])
		if !ok1 || !ok2 || hi < c {
			return
		}
		f.cidWR = append(f.cidWR, cidWidth{uint32(c), uint32(hi), v})
		i += 3
	}
}

var type1Dup = regexp.MustCompile(`dup\s+(\d+)\s*/([^\s/\[\]{}()<>]+)\s+put`)

// type1Encoding reads the built-in encoding of an embedded Type 1 font
// program (its clear-text part), as TeX fonts use.
func (d *pdfDoc) type1Encoding(desc pdfDict) *[256]string {
	s, ok := d.resolve(desc["FontFile"]).(*pdfStream)
	if !ok {
		return nil
	}
	data, err := d.decode(s)
	if err != nil {
		return nil
	}
	if n, ok := pdfInt(d.resolve(s.dict["Length1"])); ok && n > 0 && n < int64(len(data)) {
		data = data[:n]
	}
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	if bytes.Contains(data, []byte("/Encoding StandardEncoding")) {
		return &standardEncoding
	}
	var t [256]string
	found := false
	for _, m := range type1Dup.FindAllSubmatch(data, 512) {
		code, err := strconv.Atoi(string(m[1]))
		if err != nil || code < 0 || code > 255 {
			continue
		}
		t[code] = glyphText(string(m[2]))
		found = true
	}
	if !found {
		return nil
	}
	return &t
}

// pdfCMap is a parsed CMap: code space, code -> Unicode (ToUnicode) and
// code -> CID (encoding CMaps).
type pdfCMap struct {
	space  []cmSpace
	chars  map[uint32]string
	ranges []cmRange
	cids   map[uint32]uint32
	cidR   []cmCIDRange
}

type cmSpace struct {
	lo, hi uint32
	n      int
}

type cmRange struct {
	lo, hi uint32
	base   []uint16 // destination of lo, UTF-16; the last unit counts up
	list   []string // or one destination per code
}

type cmCIDRange struct{ lo, hi, cid uint32 }

// parseCMap reads the mappings of a CMap stream; junk is skipped.
func parseCMap(data []byte) *pdfCMap {
	m := &pdfCMap{chars: make(map[uint32]string), cids: make(map[uint32]uint32)}
	l := &pdfLexer{b: data}
	var stack []any
	for n := 0; l.pos < len(data) && n < 1<<20; n++ {
		v, err := l.object(0, false)
		if err != nil {
			break
		}
		op, isOp := v.(pdfOp)
		if !isOp {
			if len(stack) < 1<<16 {
				stack = append(stack, v)
			}
			continue
		}
		switch op {
		case "endcodespacerange":
			for i := 0; i+1 < len(stack); i += 2 {
				lo, ok1 := stack[i].(pdfString)
				hi, ok2 := stack[i+1].(pdfString)
				if ok1 && ok2 && len(lo) > 0 && len(lo) <= 4 && len(lo) == len(hi) {
					m.space = append(m.space, cmSpace{bytesCode([]byte(lo)), bytesCode([]byte(hi)), len(lo)})
				}
			}
		case "endbfchar":
			for i := 0; i+1 < len(stack); i += 2 {
				src, ok := stack[i].(pdfString)
				if !ok || len(src) == 0 || len(src) > 4 {
					continue
				}
				m.chars[bytesCode([]byte(src))] = cmapDest(stack[i+1])
			}
		case "endbfrange":
			for i := 0; i+2 < len(stack); i += 3 {
				lo, ok1 := stack[i].(pdfString)
				hi, ok2 := stack[i+1].(pdfString)
				if !ok1 || !ok2 || len(lo) == 0 || len(lo) > 4 || len(hi) > 4 {
					continue
				}
				r := cmRange{lo: bytesCode([]byte(lo)), hi: bytesCode([]byte(hi))}
				if r.hi < r.lo {
					continue
				}
				switch dst := stack[i+2].(type) {
				case pdfString:
					r.base = utf16Units([]byte(dst))
					if len(r.base) == 0 {
						continue
					}
				case pdfArray:
					for _, x := range dst {
						r.list = append(r.list, cmapDest(x))
					}
				default:
					continue
				}
				m.ranges = append(m.ranges, r)
			}
		case "endcidchar":
			for i := 0; i+1 < len(stack); i += 2 {
				src, ok1 := stack[i].(pdfString)
				cid, ok2 := stack[i+1].(int64)
				if ok1 && ok2 && len(src) > 0 && len(src) <= 4 && cid >= 0 {
					m.cids[bytesCode([]byte(src))] = uint32(cid)
				}
			}
		case "endcidrange":
			for i := 0; i+2 < len(stack); i += 3 {
				lo, ok1 := stack[i].(pdfString)
				hi, ok2 := stack[i+1].(pdfString)
				cid, ok3 := stack[i+2].(int64)
				if ok1 && ok2 && ok3 && len(lo) > 0 && len(lo) <= 4 && len(hi) <= 4 && cid >= 0 {
					m.cidR = append(m.cidR, cmCIDRange{bytesCode([]byte(lo)), bytesCode([]byte(hi)), uint32(cid)})
				}
			}
		}
		stack = stack[:0]
	}
	return m
}

func utf16Units(b []byte) []uint16 {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
	}
	if len(b)%2 == 1 {
		u = append(u, uint16(b[len(b)-1]))
	}
	return u
}

// cmapDest decodes a bfchar destination: UTF-16BE, or a glyph name.
func cmapDest(v any) string {
	switch v := v.(type) {
	case pdfString:
		s := string(utf16.Decode(utf16Units([]byte(v))))
		if s == "\x00" {
			return ""
		}
		return s
	case pdfName:
		return glyphText(string(v))
	}
	return ""
}

// split takes one code off s by the code space ranges.
func (m *pdfCMap) split(s []byte) (uint32, int) {
	for n := 1; n <= 4 && n <= len(s); n++ {
		c := bytesCode(s[:n])
		for _, r := range m.space {
			if r.n == n && c >= r.lo && c <= r.hi {
				return c, n
			}
		}
	}
	// No range matches: consume as many bytes as the shortest range.
	n := 4
	for _, r := range m.space {
		n = min(n, r.n)
	}
	n = min(n, len(s))
	return bytesCode(s[:n]), n
}

func (m *pdfCMap) unicode(code uint32) string {
	if s, ok := m.chars[code]; ok {
		return s
	}
	for _, r := range m.ranges {
		if code < r.lo || code > r.hi {
			continue
		}
		off := code - r.lo
		if r.list != nil {
			if int(off) < len(r.list) {
				return r.list[off]
			}
			return ""
		}
		u := append([]uint16(nil), r.base...)
		u[len(u)-1] += uint16(off)
		return string(utf16.Decode(u))
	}
	return ""
}

func (m *pdfCMap) cid(code uint32) (uint32, bool) {
	if c, ok := m.cids[code]; ok {
		return c, true
	}
	for _, r := range m.cidR {
		if code >= r.lo && code <= r.hi {
			return r.cid + code - r.lo, true
		}
	}
	return 0, false
}

// Encodings of simple fonts: code -> text.
var (
	standardEncoding = func() [256]string {
		var t [256]string
		for c := 0x20; c < 0x7F; c++ {
			t[c] = string(rune(c))
		}
		t[0x27], t[0x60] = "’", "‘"
		upper := map[int]string{
			0xA1: "¡", 0xA2: "¢", 0xA3: "£", 0xA4: "⁄", 0xA5: "¥", 0xA6: "ƒ", 0xA7: "§", 0xA8: "¤", 0xA9: "'",
			0xAA: "“", 0xAB: "«", 0xAC: "‹", 0xAD: "›", 0xAE: "fi", 0xAF: "fl", 0xB1: "–", 0xB2: "†", 0xB3: "‡",
			0xB4: "·", 0xB6: "¶", 0xB7: "•", 0xB8: "‚", 0xB9: "„", 0xBA: "”", 0xBB: "»", 0xBC: "…", 0xBD: "‰",
			0xBF: "¿", 0xC1: "`", 0xC2: "´", 0xC3: "ˆ", 0xC4: "˜", 0xC5: "¯", 0xC6: "˘", 0xC7: "˙", 0xC8: "¨",
			0xCA: "˚", 0xCB: "¸", 0xCD: "˝", 0xCE: "˛", 0xCF: "ˇ", 0xD0: "—", 0xE1: "Æ", 0xE3: "ª", 0xE8: "Ł",
			0xE9: "Ø", 0xEA: "Œ", 0xEB: "º", 0xF1: "æ", 0xF5: "ı", 0xF8: "ł", 0xF9: "ø", 0xFA: "œ", 0xFB: "ß",
		}
		for c, s := range upper {
			t[c] = s
		}
		return t
	}()
	winAnsiEncoding  = charmapEncoding(charmap.Windows1252)
	macRomanEncoding = charmapEncoding(charmap.Macintosh)
)

func charmapEncoding(cm *charmap.Charmap) [256]string {
	var t [256]string
	for c := 0x20; c < 256; c++ {
		r := cm.DecodeByte(byte(c))
		if r != utf8.RuneError && r != 0x7F {
			t[c] = string(r)
		}
	}
	return t
}

func namedEncoding(name pdfName) *[256]string {
	switch name {
	case "WinAnsiEncoding":
		return &winAnsiEncoding
	case "MacRomanEncoding":
		return &macRomanEncoding
	case "StandardEncoding":
		return &standardEncoding
	}
	return nil
}

// pdfDocSpecial lists PDFDocEncoding where it differs from Latin-1.
var pdfDocSpecial = map[byte]rune{
	0x18: '˘', 0x19: 'ˇ', 0x1A: 'ˆ', 0x1B: '˙', 0x1C: '˝', 0x1D: '˛', 0x1E: '˚', 0x1F: '˜',
	0x80: '•', 0x81: '†', 0x82: '‡', 0x83: '…', 0x84: '—', 0x85: '–', 0x86: 'ƒ', 0x87: '⁄', 0x88: '‹',
	0x89: '›', 0x8A: '−', 0x8B: '‰', 0x8C: '„', 0x8D: '“', 0x8E: '”', 0x8F: '‘', 0x90: '’', 0x91: '‚',
	0x92: '™', 0x93: 'ﬁ', 0x94: 'ﬂ', 0x95: 'Ł', 0x96: 'Œ', 0x97: 'Š', 0x98: 'Ÿ', 0x99: 'Ž', 0x9A: 'ı',
	0x9B: 'ł', 0x9C: 'œ', 0x9D: 'š', 0x9E: 'ž', 0xA0: '€',
}

// pdfTextString decodes a PDF text string: UTF-16BE or UTF-8 with a byte
// order mark, else PDFDocEncoding.
func pdfTextString(s string) string {
	switch {
	case strings.HasPrefix(s, "\xfe\xff"):
		return strings.TrimRight(string(utf16.Decode(utf16Units([]byte(s[2:])))), "\x00")
	case strings.HasPrefix(s, "\xff\xfe"):
		b := []byte(s[2:])
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
		return string(utf16.Decode(utf16Units(b)))
	case strings.HasPrefix(s, "\xef\xbb\xbf"):
		return strings.ToValidUTF8(s[3:], "\uFFFD")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if r, ok := pdfDocSpecial[s[i]]; ok {
			b.WriteRune(r)
		} else {
			b.WriteRune(rune(s[i]))
		}
	}
	return b.String()
}

// glyphText maps a glyph name to text, by the Adobe Glyph List
// conventions: known names, uniXXXX, uXXXX[XX], ligatures joined with
// '_', and suffixes after '.' ignored.
func glyphText(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	if strings.Contains(name, "_") {
		var b strings.Builder
		for _, part := range strings.Split(name, "_") {
			b.WriteString(glyphText(part))
		}
		return b.String()
	}
	if s, ok := glyphNames()[name]; ok {
		return s
	}
	if len(name) == 1 && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return name
	}
	if strings.HasPrefix(name, "uni") && len(name) >= 7 && (len(name)-3)%4 == 0 {
		var b strings.Builder
		for i := 3; i+4 <= len(name); i += 4 {
			v, err := strconv.ParseUint(name[i:i+4], 16, 16)
			if err != nil || v >= 0xD800 && v < 0xE000 {
				return ""
			}
			b.WriteRune(rune(v))
		}
		return b.String()
	}
	if strings.HasPrefix(name, "u") && len(name) >= 5 && len(name) <= 7 {
		if v, err := strconv.ParseUint(name[1:], 16, 32); err == nil && v <= 0x10FFFF && !(v >= 0xD800 && v < 0xE000) {
			return string(rune(v))
		}
	}
	return ""
}

// glyphNames is the part of the Adobe Glyph List that text documents
// use: ASCII and Latin-1 punctuation and symbols, accented Latin letters
// (derived from their canonical decompositions), Greek, ligatures and
// common typographic and mathematical symbols.
var glyphNames = sync.OnceValue(func() map[string]string {
	m := map[string]string{
		"space": " ", "exclam": "!", "quotedbl": "\"", "numbersign": "#", "dollar": "$", "percent": "%",
		"ampersand": "&", "quotesingle": "'", "quoteright": "’", "parenleft": "(", "parenright": ")",
		"asterisk": "*", "plus": "+", "comma": ",", "hyphen": "-", "period": ".", "slash": "/",
		"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
		"eight": "8", "nine": "9", "colon": ":", "semicolon": ";", "less": "<", "equal": "=", "greater": ">",
		"question": "?", "at": "@", "bracketleft": "[", "backslash": "\\", "bracketright": "]",
		"asciicircum": "^", "underscore": "_", "grave": "`", "quoteleft": "‘", "braceleft": "{", "bar": "|",
		"braceright": "}", "asciitilde": "~", "exclamdown": "¡", "cent": "¢", "sterling": "£", "currency": "¤",
		"yen": "¥", "brokenbar": "¦", "section": "§", "dieresis": "¨", "copyright": "©", "ordfeminine": "ª",
		"guillemotleft": "«", "guillemetleft": "«", "logicalnot": "¬", "registered": "®", "macron": "¯",
		"degree": "°", "plusminus": "±", "twosuperior": "²", "threesuperior": "³", "acute": "´", "mu": "µ",
		"paragraph": "¶", "periodcentered": "·", "middot": "·", "cedilla": "¸", "onesuperior": "¹",
		"ordmasculine": "º", "guillemotright": "»", "guillemetright": "»", "onequarter": "¼", "onehalf": "½",
		"threequarters": "¾", "questiondown": "¿", "multiply": "×", "divide": "÷", "AE": "Æ", "ae": "æ",
		"OE": "Œ", "oe": "œ", "Oslash": "Ø", "oslash": "ø", "Lslash": "Ł", "lslash": "ł", "dotlessi": "ı",
		"dotlessj": "ȷ", "germandbls": "ß", "Eth": "Ð", "eth": "ð", "Thorn": "Þ", "thorn": "þ",
		"Dcroat": "Đ", "dcroat": "đ", "Hbar": "Ħ", "hbar": "ħ", "Tbar": "Ŧ", "tbar": "ŧ", "Eng": "Ŋ",
		"eng": "ŋ", "kgreenlandic": "ĸ", "napostrophe": "ŉ", "longs": "ſ", "IJ": "Ĳ", "ij": "ĳ",
		"Ldot": "Ŀ", "ldot": "ŀ", "florin": "ƒ", "circumflex": "ˆ", "caron": "ˇ", "breve": "˘",
		"dotaccent": "˙", "ring": "˚", "ogonek": "˛", "tilde": "˜", "hungarumlaut": "˝",
		"endash": "–", "emdash": "—", "figuredash": "‒", "horizontalbar": "―", "quotesinglbase": "‚",
		"quotedblleft": "“", "quotedblright": "”", "quotedblbase": "„", "dagger": "†", "daggerdbl": "‡",
		"bullet": "•", "ellipsis": "…", "perthousand": "‰", "minute": "′", "second": "″",
		"guilsinglleft": "‹", "guilsinglright": "›", "fraction": "⁄", "Euro": "€", "euro": "€",
		"trademark": "™", "minus": "−", "ff": "ff", "fi": "fi", "fl": "fl", "ffi": "ffi", "ffl": "ffl",
		"nbspace": "\u00a0", "nonbreakingspace": "\u00a0", "sfthyphen": "-", "softhyphen": "-",
		"visiblespace": "␣", "lozenge": "◊", "notequal": "≠", "infinity": "∞", "lessequal": "≤",
		"greaterequal": "≥", "partialdiff": "∂", "summation": "∑", "product": "∏", "radical": "√",
		"integral": "∫", "approxequal": "≈", "equivalence": "≡", "proportional": "∝", "element": "∈",
		"notelement": "∉", "intersection": "∩", "union": "∪", "propersubset": "⊂", "propersuperset": "⊃",
		"reflexsubset": "⊆", "reflexsuperset": "⊇", "logicaland": "∧", "logicalor": "∨", "universal": "∀",
		"existential": "∃", "emptyset": "∅", "gradient": "∇", "similar": "∼", "therefore": "∴",
		"angle": "∠", "perpendicular": "⊥", "arrowleft": "←", "arrowright": "→", "arrowup": "↑",
		"arrowdown": "↓", "arrowboth": "↔", "arrowdblleft": "⇐", "arrowdblright": "⇒", "arrowdblboth": "⇔",
		"dotmath": "⋅", "asteriskmath": "∗", "openbullet": "◦", "checkmark": "✓", "degreecentigrade": "℃",
		"numero": "№", "estimated": "℮", "Ohm": "Ω", "aleph": "ℵ", "weierstrass": "℘", "Ifraktur": "ℑ",
		"Rfraktur": "ℜ", "copyrightsans": "©", "registersans": "®", "trademarksans": "™",
		"Alpha": "Α", "Beta": "Β", "Gamma": "Γ", "Delta": "Δ", "Epsilon": "Ε", "Zeta": "Ζ", "Eta": "Η",
		"Theta": "Θ", "Iota": "Ι", "Kappa": "Κ", "Lambda": "Λ", "Mu": "Μ", "Nu": "Ν", "Xi": "Ξ",
		"Omicron": "Ο", "Pi": "Π", "Rho": "Ρ", "Sigma": "Σ", "Tau": "Τ", "Upsilon": "Υ", "Phi": "Φ",
		"Chi": "Χ", "Psi": "Ψ", "Omega": "Ω", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ",
		"epsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ",
		"nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π", "rho": "ρ", "sigma": "σ", "sigma1": "ς",
		"tau": "τ", "upsilon": "υ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "theta1": "ϑ",
		"phi1": "ϕ", "omega1": "ϖ", "Upsilon1": "ϒ",
	}
	accents := map[rune][]string{
		0x0300: {"grave"}, 0x0301: {"acute"}, 0x0302: {"circumflex"}, 0x0303: {"tilde"}, 0x0304: {"macron"},
		0x0306: {"breve"}, 0x0307: {"dotaccent"}, 0x0308: {"dieresis"}, 0x030A: {"ring"},
		0x030B: {"hungarumlaut"}, 0x030C: {"caron"}, 0x0327: {"cedilla", "commaaccent"}, 0x0328: {"ogonek"},
		0x0326: {"commaaccent"},
	}
	for _, span := range [][2]rune{{0x00C0, 0x024F}, {0x1E00, 0x1EFF}} {
		for r := span[0]; r <= span[1]; r++ {
			d := []rune(norm.NFD.String(string(r)))
			if len(d) != 2 || d[0] > 'z' || !(d[0] >= 'A' && d[0] <= 'Z' || d[0] >= 'a' && d[0] <= 'z') {
				continue
			}
			for _, acc := range accents[d[1]] {
				if _, dup := m[string(d[0])+acc]; !dup {
					m[string(d[0])+acc] = string(r)
				}
			}
		}
	}
	m["Idotaccent"] = "İ"
	return m
})
