package extract

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/saintfish/chardet"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// bomEncoding returns the UTF-16 or UTF-32 encoding a byte order mark
// names, or "".
func bomEncoding(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0}):
		return "utf-32le"
	case bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}):
		return "utf-32be"
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return "utf-16le"
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return "utf-16be"
	}
	return ""
}

// utf16NoBOM recognises UTF-16 without a byte order mark by its zero
// bytes: mostly-Latin text has a zero in every other byte.
func utf16NoBOM(data []byte) string {
	head := data[:min(len(data), 4096)&^1]
	if len(head) < 8 {
		return ""
	}
	var even, odd int
	for i := 0; i < len(head); i += 2 {
		if head[i] == 0 {
			even++
		}
		if head[i+1] == 0 {
			odd++
		}
	}
	pairs := len(head) / 2
	switch {
	case odd*10 >= pairs*4 && even*20 < pairs:
		return "utf-16le"
	case even*10 >= pairs*4 && odd*20 < pairs:
		return "utf-16be"
	}
	return ""
}

// lookupEncoding returns the encoding of a charset label (WHATWG labels,
// plus the names chardet reports).
func lookupEncoding(label string) (encoding.Encoding, string) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-16le", "utf-16":
		return unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), "utf-16le"
	case "utf-16be":
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM), "utf-16be"
	case "utf-32le", "utf-32":
		return utf32.UTF32(utf32.LittleEndian, utf32.UseBOM), "utf-32le"
	case "utf-32be":
		return utf32.UTF32(utf32.BigEndian, utf32.UseBOM), "utf-32be"
	case "gb-18030":
		label = "gb18030"
	case "iso-8859-8-i":
		label = "iso-8859-8"
	}
	return charset.Lookup(label)
}

// decodeHead decodes the first bytes of data from enc, for sniffing.
func decodeHead(data []byte, enc string) []byte {
	e, _ := lookupEncoding(enc)
	if e == nil {
		return nil
	}
	out, _ := e.NewDecoder().Bytes(data[:min(len(data), 16384)&^3])
	return out
}

// convert decodes data from e to valid UTF-8.
func convert(data []byte, e encoding.Encoding) string {
	out, err := e.NewDecoder().Bytes(data)
	if err != nil {
		// Decoders replace bad input; an error means a transformer bug
		// or a truncated multi-byte tail: keep what decodes.
		return strings.ToValidUTF8(string(data), "\uFFFD")
	}
	if !utf8.Valid(out) {
		return strings.ToValidUTF8(string(out), "\uFFFD")
	}
	return string(out)
}

// detectCharset guesses the charset of data that is not UTF-8.
func detectCharset(data []byte, html bool) string {
	sample := data[:min(len(data), 64<<10)]
	d := chardet.NewTextDetector()
	if html {
		d = chardet.NewHtmlDetector()
	}
	// chardet runs its recognizers concurrently and sorts their results by
	// confidence alone, so of two with the same confidence DetectBest
	// returned whichever finished first: the same file was read as
	// Shift JIS in one scan and as Big5 in the next. Ties go by name.
	all, err := d.DetectAll(sample)
	if err != nil || len(all) == 0 {
		return "windows-1252"
	}
	var tied []string
	for _, r := range all {
		if r.Confidence == all[0].Confidence && r.Charset != "" && !strings.EqualFold(r.Charset, "utf-8") {
			if e, _ := lookupEncoding(r.Charset); e != nil {
				tied = append(tied, r.Charset)
			}
		}
	}
	if len(tied) == 0 {
		return "windows-1252"
	}
	return slices.Min(tied)
}

// utf8Fragment reports whether data is UTF-8 cut out of a longer text: a
// carved file, or an excerpt cut at a byte count, may begin and end inside
// a character. What lies between must be valid and hold multi-byte
// characters, which another charset almost never is by chance.
func utf8Fragment(data []byte) bool {
	start := 0
	for start < len(data) && start < utf8.UTFMax-1 && !utf8.RuneStart(data[start]) {
		start++
	}
	end := len(data)
	for i := end - 1; i >= 0 && i >= end-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:end]) {
				end = i
			}
			break
		}
	}
	if start == 0 && end == len(data) {
		return false // nothing cut: the whole was not valid
	}
	mid := data[start:end]
	return utf8.Valid(mid) && slices.ContainsFunc(mid, func(b byte) bool { return b >= utf8.RuneSelf })
}

// decodeText returns data as UTF-8 and the charset it was in: a BOM wins,
// then the declared charset if the bytes fit it, then UTF-8 if valid, then
// detection.
func decodeText(data []byte, declared string) (string, string) {
	if bytes.HasPrefix(data, magicUTF8) {
		return strings.ToValidUTF8(string(data[3:]), "\uFFFD"), "utf-8"
	}
	if enc := bomEncoding(data); enc != "" {
		e, name := lookupEncoding(enc)
		return convert(data, e), name
	}
	cs := declaredCharset(declared)
	if strings.HasPrefix(strings.ToLower(cs), "utf-16") || strings.HasPrefix(strings.ToLower(cs), "utf-32") {
		e, name := lookupEncoding(cs)
		return convert(data, e), name
	}
	// UTF-16 without a BOM is valid UTF-8 too (NULs are ASCII).
	if enc := utf16NoBOM(data); enc != "" {
		e, name := lookupEncoding(enc)
		return convert(data, e), name
	}
	// Valid UTF-8 with multi-byte sequences is almost never another
	// charset by chance, whatever the declaration says.
	if utf8.Valid(data) {
		return string(data), "utf-8"
	}
	if utf8Fragment(data) {
		return strings.ToValidUTF8(string(data), "\uFFFD"), "utf-8"
	}
	if e, name := lookupEncoding(cs); e != nil && name != "utf-8" {
		return convert(data, e), name
	}
	if enc := utf16NoBOM(data); enc != "" {
		e, name := lookupEncoding(enc)
		return convert(data, e), name
	}
	e, name := lookupEncoding(detectCharset(data, false))
	if e == nil {
		e, name = lookupEncoding("windows-1252")
	}
	return convert(data, e), name
}

// declaredCharset returns the charset parameter of a content type.
func declaredCharset(contentType string) string {
	if contentType == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return params["charset"]
}

// parseText extracts plain text in any common charset.
func parseText(p *parser, data []byte) {
	s, cs := decodeText(data, p.declared)
	p.d.setExtra("charset", cs)
	p.setText(s)
}

// Markdown markup removed by parseMarkdown.
var (
	mdImage     = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink      = regexp.MustCompile(`\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])`)
	mdAutolink  = regexp.MustCompile(`<((?:https?|mailto|ftp):[^>\s]+)>`)
	mdRefDef    = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+\S`)
	mdHeading   = regexp.MustCompile(`^ {0,3}#{1,6}(?:\s+|$)`)
	mdHeadClose = regexp.MustCompile(`\s+#+\s*$`)
	mdList      = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?`)
	mdQuote     = regexp.MustCompile(`^\s*(?:>\s?)+`)
	mdRule      = regexp.MustCompile(`^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,}|=+)\s*$`)
	mdFence     = regexp.MustCompile("^ {0,3}(?:```|~~~)")
	mdEmphasis  = regexp.MustCompile(`(^|[^\p{L}\p{N}*_~])(?:\*{1,3}|_{1,3}|~~)|(?:\*{1,3}|_{1,3}|~~)($|[^\p{L}\p{N}*_~])`)
)

// parseMarkdown keeps the text of Markdown, stripping its markup minimally:
// heading, list and quote markers, emphasis, code fences, link targets.
func parseMarkdown(p *parser, data []byte) {
	s, cs := decodeText(data, p.declared)
	p.d.setExtra("charset", cs)
	inFence := false
	for line := range strings.Lines(s) {
		if p.text.full() {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		if mdFence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			p.text.addString(line)
			p.text.addByte('\n')
			continue
		}
		if mdRule.MatchString(line) || mdRefDef.MatchString(line) {
			continue
		}
		heading := mdHeading.MatchString(line)
		if heading {
			line = mdHeadClose.ReplaceAllString(mdHeading.ReplaceAllString(line, ""), "")
		}
		// Each pattern needs a character most lines lack: testing for it
		// first skips the regular expressions (most of the time spent on
		// Markdown) on plain lines, with the same result.
		if strings.ContainsAny(line, ">-*+0123456789") {
			line = mdQuote.ReplaceAllString(line, "")
			line = mdList.ReplaceAllString(line, "")
		}
		if strings.Contains(line, "]") {
			line = mdImage.ReplaceAllString(line, "$1")
			line = mdLink.ReplaceAllString(line, "$1")
		}
		if strings.Contains(line, "<") {
			line = mdAutolink.ReplaceAllString(line, "$1")
		}
		if strings.ContainsAny(line, "*_~") {
			line = mdEmphasis.ReplaceAllString(line, "$1$2")
		}
		line = strings.ReplaceAll(line, "`", "")
		if heading && p.d.Meta.Title == "" {
			p.d.Meta.Title = strings.TrimSpace(line)
		}
		p.text.addString(line)
		p.text.addByte('\n')
	}
}

// parseCSV extracts the cells of comma-, semicolon- or tab-separated
// values: cells joined by spaces, records by newlines.
func parseCSV(p *parser, data []byte) { parseDelimited(p, data, 0) }

// parseTSV extracts tab-separated values.
func parseTSV(p *parser, data []byte) { parseDelimited(p, data, '\t') }

func parseDelimited(p *parser, data []byte, comma rune) {
	s, cs := decodeText(data, p.declared)
	p.d.setExtra("charset", cs)
	if comma == 0 {
		comma = guessDelimiter(s)
	}
	r := csv.NewReader(strings.NewReader(s))
	r.Comma = comma
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	records := 0
	for !p.text.full() {
		if records%1024 == 0 && p.cancelled() {
			return
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Keep the rest as it is rather than lose it.
			off := r.InputOffset()
			p.text.newline()
			if off < int64(len(s)) {
				p.text.addString(s[off:])
			}
			p.fail("parse", err)
			break
		}
		records++
		for i, cell := range rec {
			if i > 0 {
				p.text.addByte(' ')
			}
			p.text.addString(cell)
		}
		p.text.addByte('\n')
	}
	p.d.setExtra("records", strconv.Itoa(records))
}

// guessDelimiter picks the most frequent of , ; tab | in the first line.
func guessDelimiter(s string) rune {
	line := s[:min(len(s), 4096)]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	best, bestN := ',', 0
	for _, c := range []rune{',', ';', '\t', '|'} {
		if n := strings.Count(line, string(c)); n > bestN {
			best, bestN = c, n
		}
	}
	return best
}
