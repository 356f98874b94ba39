package extract

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/net/html/charset"
)

// xmlPart streams the tokens of XML member name to fn until fn returns
// false; a missing member is not an error. Tokens are raw (prefixes are
// not resolved): callers match local names.
func (c *zipContainer) xmlPart(name string, fn func(tok xml.Token) bool) error {
	f := c.files[name]
	if f == nil {
		return nil
	}
	rc, err := c.open(f)
	if err != nil {
		return err
	}
	defer rc.Close()
	return c.xmlStream(name, rc, fn)
}

func (c *zipContainer) xmlStream(name string, r io.Reader, fn func(tok xml.Token) bool) error {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = charset.NewReaderLabel
	// RawToken does not check nesting: keep the stack of open elements.
	var open []xml.Name
	for n := 0; ; n++ {
		if n&4095 == 0 && c.p.j.ctx.Err() != nil {
			return c.p.j.ctxErr()
		}
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) && len(open) > 0 {
			err = fmt.Errorf("unexpected EOF: <%s> not closed", open[len(open)-1].Local)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &Error{Format: c.p.format, Op: "parse " + name, Err: c.p.j.classify(err)}
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(open) >= 1<<16 {
				return &Error{Format: c.p.format, Op: "parse " + name, Err: fmt.Errorf("%w: elements nested too deep", ErrMalformed)}
			}
			open = append(open, e.Name)
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != e.Name {
				return &Error{Format: c.p.format, Op: "parse " + name, Err: fmt.Errorf("%w: unexpected </%s>", ErrMalformed, e.Name.Local)}
			}
			open = open[:len(open)-1]
		}
		if !fn(tok) {
			return nil
		}
	}
}

// attr returns the value of the attribute with local name local.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// relID returns the r:id attribute (a prefixed "id", unlike a plain id).
func relID(e xml.StartElement) string {
	for _, a := range e.Attr {
		if a.Name.Local == "id" && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

// rels reads the relationships of part: Id -> target member name.
func (c *zipContainer) rels(part string) map[string]string {
	relsName := path.Join(path.Dir(part), "_rels", path.Base(part)+".rels")
	out := make(map[string]string)
	_ = c.xmlPart(relsName, func(tok xml.Token) bool {
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "Relationship" && attr(e, "TargetMode") != "External" {
			out[attr(e, "Id")] = resolvePart(part, attr(e, "Target"))
		}
		return true
	})
	return out
}

// resolvePart resolves a relationship target against its source part.
func resolvePart(source, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return strings.TrimPrefix(path.Clean("/"+path.Join(path.Dir(source), target)), "/")
}

// textRun collects text from the chardata inside elements named textEl,
// breaking lines at the end of paraEl elements; elements in skipEl are
// skipped with their content.
type textRun struct {
	t      *textBuf
	textEl string
	paraEl string
	skipEl map[string]bool
	in     int
	skip   int
}

func (r *textRun) token(tok xml.Token) bool {
	switch e := tok.(type) {
	case xml.StartElement:
		switch {
		case r.skip > 0 || r.skipEl[e.Name.Local]:
			r.skip++
		case e.Name.Local == r.textEl:
			r.in++
		case e.Name.Local == "tab":
			r.t.addByte('\t')
		case e.Name.Local == "br" || e.Name.Local == "cr":
			r.t.newline()
		}
	case xml.EndElement:
		switch {
		case r.skip > 0:
			r.skip--
		case e.Name.Local == r.textEl && r.in > 0:
			r.in--
		case e.Name.Local == r.paraEl:
			r.t.newline()
		}
	case xml.CharData:
		if r.in > 0 && r.skip == 0 {
			r.t.add(e)
		}
	}
	return !r.t.full()
}

// mcFallback is skipped: mc:AlternateContent repeats its text there.
var ooxmlSkip = map[string]bool{"Fallback": true, "delText": true, "instrText": true, "rPh": true}

// parseDOCX extracts a Word document: body, then headers, footers,
// footnotes and endnotes; core properties; embedded objects as children.
func parseDOCX(c *zipContainer) {
	p := c.p
	run := &textRun{t: &p.text, textEl: "t", paraEl: "p", skipEl: ooxmlSkip}
	parts := []string{"word/document.xml"}
	var extra []string
	for name := range c.files {
		base := path.Base(name)
		if path.Dir(name) == "word" && (strings.HasPrefix(base, "header") || strings.HasPrefix(base, "footer") ||
			base == "footnotes.xml" || base == "endnotes.xml") && strings.HasSuffix(base, ".xml") {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, part := range append(parts, extra...) {
		if err := c.xmlPart(part, run.token); err != nil {
			p.fail("parse "+part, err)
		}
		p.text.newline()
	}
	c.coreProps()
	c.embeddings("word/embeddings/")
}

// parseXLSX extracts a workbook: each sheet in workbook order, cells
// separated by tabs and rows by newlines, shared strings resolved.
func parseXLSX(c *zipContainer) {
	p := c.p
	var shared []string
	var si strings.Builder
	inSI, inT, skip := false, false, 0
	err := c.xmlPart("xl/sharedStrings.xml", func(tok xml.Token) bool {
		switch e := tok.(type) {
		case xml.StartElement:
			switch {
			case skip > 0 || e.Name.Local == "rPh":
				skip++
			case e.Name.Local == "si":
				inSI = true
				si.Reset()
			case e.Name.Local == "t":
				inT = true
			}
		case xml.EndElement:
			switch {
			case skip > 0:
				skip--
			case e.Name.Local == "si":
				inSI = false
				shared = append(shared, si.String())
			case e.Name.Local == "t":
				inT = false
			}
		case xml.CharData:
			if inSI && inT && skip == 0 && si.Len() < int(p.j.lim.MaxTextSize) {
				si.Write(e)
			}
		}
		return true
	})
	if err != nil {
		p.fail("parse shared strings", err)
	}

	rels := c.rels("xl/workbook.xml")
	type sheet struct{ name, part string }
	var sheets []sheet
	if err := c.xmlPart("xl/workbook.xml", func(tok xml.Token) bool {
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "sheet" {
			sheets = append(sheets, sheet{attr(e, "name"), rels[relID(e)]})
		}
		return true
	}); err != nil {
		p.fail("parse workbook", err)
	}
	var names []string
	for _, sh := range sheets {
		names = append(names, sh.name)
		if sh.part == "" || c.files[sh.part] == nil {
			continue
		}
		var cellType string
		inV, inIS, inT, cells := false, false, false, 0
		var v []byte
		err := c.xmlPart(sh.part, func(tok xml.Token) bool {
			switch e := tok.(type) {
			case xml.StartElement:
				switch e.Name.Local {
				case "c":
					cellType, v = attr(e, "t"), v[:0]
				case "v":
					inV = true
				case "is":
					inIS = true
				case "t":
					inT = inIS
				case "row":
					cells = 0
				}
			case xml.EndElement:
				switch e.Name.Local {
				case "v":
					inV = false
				case "is":
					inIS = false
				case "t":
					inT = false
				case "c":
					val := string(v)
					if cellType == "s" {
						if i, err := strconv.Atoi(strings.TrimSpace(val)); err == nil && i >= 0 && i < len(shared) {
							val = shared[i]
						}
					}
					if val != "" {
						if cells > 0 {
							p.text.addByte('\t')
						}
						p.text.addString(val)
						cells++
					}
				case "row":
					if cells > 0 {
						p.text.addByte('\n')
					}
				}
			case xml.CharData:
				if inV || inT {
					v = append(v, e...)
				}
			}
			return !p.text.full()
		})
		if err != nil {
			p.fail("parse "+sh.part, err)
		}
		p.text.newline()
	}
	if len(names) > 0 {
		p.d.setExtra("sheet names", strings.Join(names, ", "))
		p.d.setExtra("sheets", strconv.Itoa(len(names)))
	}
	c.coreProps()
	c.embeddings("xl/embeddings/")
}

// parsePPTX extracts a presentation: slides in presentation order.
func parsePPTX(c *zipContainer) {
	p := c.p
	rels := c.rels("ppt/presentation.xml")
	var slides []string
	if err := c.xmlPart("ppt/presentation.xml", func(tok xml.Token) bool {
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "sldId" {
			if part := rels[relID(e)]; part != "" {
				slides = append(slides, part)
			}
		}
		return true
	}); err != nil {
		p.fail("parse presentation", err)
	}
	for _, part := range slides {
		run := &textRun{t: &p.text, textEl: "t", paraEl: "p", skipEl: ooxmlSkip}
		if err := c.xmlPart(part, run.token); err != nil {
			p.fail("parse "+part, err)
		}
		p.text.newline()
		p.text.addByte('\n')
	}
	p.d.setExtra("slides", strconv.Itoa(len(slides)))
	c.coreProps()
	c.embeddings("ppt/embeddings/")
}

// coreProps reads docProps/core.xml and docProps/app.xml.
func (c *zipContainer) coreProps() {
	m := &c.p.d.Meta
	var cur string
	var val []byte
	collect := func(fn func(name, value string)) func(xml.Token) bool {
		return func(tok xml.Token) bool {
			switch e := tok.(type) {
			case xml.StartElement:
				cur, val = e.Name.Local, val[:0]
			case xml.CharData:
				if len(val) < 4096 {
					val = append(val, e...)
				}
			case xml.EndElement:
				if e.Name.Local == cur {
					if v := strings.TrimSpace(string(val)); v != "" {
						fn(cur, v)
					}
				}
				cur = ""
			}
			return true
		}
	}
	err := c.xmlPart("docProps/core.xml", collect(func(name, v string) {
		switch name {
		case "title":
			m.Title = v
		case "creator":
			m.Author = v
		case "subject":
			m.Subject = v
		case "lastModifiedBy":
			c.p.d.setExtra("last modified by", v)
		case "keywords", "description", "category", "revision":
			c.p.d.setExtra(name, v)
		case "created":
			m.Created = parseW3CDate(v)
		case "modified":
			m.Modified = parseW3CDate(v)
		}
	}))
	if err != nil {
		c.p.fail("parse core properties", err)
	}
	_ = c.xmlPart("docProps/app.xml", collect(func(name, v string) {
		switch name {
		case "Pages":
			c.p.d.setExtra("pages", v)
		case "Words":
			c.p.d.setExtra("words", v)
		case "Application":
			c.p.d.setExtra("application", v)
		}
	}))
}

// embeddings extracts the objects embedded under dir as children.
func (c *zipContainer) embeddings(dir string) {
	var names []string
	for name := range c.files {
		if strings.HasPrefix(name, dir) && !strings.HasSuffix(name, "/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if !c.p.admit() {
			return
		}
		f := c.files[name]
		data, err := c.read(f)
		if err != nil {
			c.p.failedChild(name, mediaByExt(name), int64(min(f.UncompressedSize64, 1<<62)), rawSum(f), err)
			continue
		}
		c.p.child(name, "", data)
	}
}

// parseW3CDate parses the date formats of OOXML and OpenDocument
// properties; an unparsable date is zero.
func parseW3CDate(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// parseCFB handles OLE compound files: password-protected OOXML
// (EncryptionInfo + EncryptedPackage streams) is ErrEncrypted; legacy
// binary Office documents are ErrUnsupported.
func parseCFB(p *parser, data []byte) {
	names, err := cfbNames(data)
	if err != nil {
		p.fail("read directory", err)
		return
	}
	has := func(n string) bool { return slices.Contains(names, n) }
	switch {
	case has("EncryptionInfo") && has("EncryptedPackage"):
		if m := mediaByExt(p.d.Name); m == mediaDOCX || m == mediaXLSX || m == mediaPPTX {
			p.d.MediaType = m
		}
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected Office document", ErrEncrypted))
		return
	case has("WordDocument"):
		p.d.MediaType = "application/msword"
	case has("Workbook") || has("Book"):
		p.d.MediaType = "application/vnd.ms-excel"
	case has("PowerPoint Document"):
		p.d.MediaType = "application/vnd.ms-powerpoint"
	case slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "__substg1.0_") }):
		p.d.MediaType = "application/vnd.ms-outlook"
	}
	p.fail("parse", fmt.Errorf("%w: legacy compound file (%s)", ErrUnsupported, p.d.MediaType))
}

// cfbNames lists the names of the directory entries of a compound file.
func cfbNames(data []byte) ([]string, error) {
	if len(data) < 512 {
		return nil, fmt.Errorf("%w: compound file header truncated", ErrMalformed)
	}
	le32 := func(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24 }
	shift := uint(data[0x1E]) | uint(data[0x1F])<<8
	if shift != 9 && shift != 12 {
		return nil, fmt.Errorf("%w: compound file sector size 2^%d", ErrMalformed, shift)
	}
	ss := 1 << shift
	sector := func(n uint32) []byte {
		off := (int64(n) + 1) * int64(ss)
		if off < 0 || off+int64(ss) > int64(len(data)) {
			return nil
		}
		return data[off : off+int64(ss)]
	}
	// The FAT sectors listed in the header's DIFAT (enough for files up
	// to several MB; larger files chain more DIFAT sectors).
	var fat []uint32
	nfat := le32(data[0x2C:])
	difat := data[0x4C:512]
	next := le32(data[0x44:])
	for guard := 0; uint32(len(fat)) < nfat && guard < 1<<16; guard++ {
		for i := 0; i+4 <= len(difat) && uint32(len(fat)) < nfat; i += 4 {
			if s := le32(difat[i:]); s < 0xFFFFFFFA {
				fat = append(fat, s)
			}
		}
		if next >= 0xFFFFFFFA {
			break
		}
		b := sector(next)
		if b == nil {
			break
		}
		difat, next = b[:ss-4], le32(b[ss-4:])
	}
	fatEntry := func(n uint32) uint32 {
		per := uint32(ss / 4)
		i := n / per
		if int(i) >= len(fat) {
			return 0xFFFFFFFE
		}
		b := sector(fat[i])
		if b == nil {
			return 0xFFFFFFFE
		}
		return le32(b[(n%per)*4:])
	}
	var names []string
	seen := make(map[uint32]bool)
	for s := le32(data[0x30:]); s < 0xFFFFFFFA && !seen[s] && len(seen) < 1<<16; s = fatEntry(s) {
		seen[s] = true
		b := sector(s)
		if b == nil {
			return names, fmt.Errorf("%w: compound file directory out of range", ErrMalformed)
		}
		for e := 0; e+128 <= len(b); e += 128 {
			n := int(b[e+0x40]) | int(b[e+0x41])<<8
			if n < 2 || n > 64 || b[e+0x42] == 0 {
				continue
			}
			u := make([]uint16, 0, n/2-1)
			for i := 0; i+1 < n-2; i += 2 {
				u = append(u, uint16(b[e+i])|uint16(b[e+i+1])<<8)
			}
			names = append(names, string(utf16.Decode(u)))
		}
	}
	return names, nil
}
