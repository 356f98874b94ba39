package extract

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// parseCompound routes a compound file to the reader of what it holds:
// Word, Excel and PowerPoint binary documents, Outlook messages; anything
// else (password-protected OOXML, other OLE files) goes to parseCFB. A file
// whose directory tree is damaged is classified by a flat scan of its
// directory and reported as ErrMalformed.
func parseCompound(p *parser, data []byte) {
	f, err := openCFB(data)
	var root []string
	if err == nil {
		var kids []int
		kids, err = f.children(0)
		for _, k := range kids {
			root = append(root, f.dir[k].name)
		}
	}
	if err != nil {
		root, _ = cfbNames(data)
	}
	c := classifyCompound(root)
	if c.read == nil {
		parseCFB(p, data)
		return
	}
	p.d.MediaType, p.format = c.media, c.format
	if err != nil {
		p.fail("read compound file", err)
		return
	}
	c.read(p, f)
}

// compoundKind is what a compound file holds and its reader.
type compoundKind struct {
	media, format string
	read          func(p *parser, f *cfb)
}

// classifyCompound tells the content of a compound file by the names of
// its root's entries; read is nil for what parseCFB handles.
func classifyCompound(names []string) compoundKind {
	has := func(n string) bool { return slices.Contains(names, n) }
	msg := slices.ContainsFunc(names, func(n string) bool {
		return strings.HasPrefix(n, "__substg1.0_") || n == "__properties_version1.0"
	})
	switch {
	case has("EncryptionInfo") && has("EncryptedPackage"):
		return compoundKind{}
	case has("WordDocument"):
		return compoundKind{mediaDOC, "doc", withProps(readDOC)}
	case has("Workbook") || has("Book"):
		return compoundKind{mediaXLS, "xls", withProps(readXLS)}
	case has("PowerPoint Document"):
		return compoundKind{mediaPPT, "ppt", withProps(readPPT)}
	case msg:
		return compoundKind{mediaMSG, "msg", func(p *parser, f *cfb) { readMSG(p, f, f.root) }}
	}
	return compoundKind{}
}

// withProps reads the document properties before the document, and its
// embedded objects after it.
func withProps(read func(p *parser, f *cfb)) func(p *parser, f *cfb) {
	return func(p *parser, f *cfb) {
		summaryInfo(p, f)
		read(p, f)
		embeddedObjects(p, f)
	}
}

// Property identifiers of the SummaryInformation property set
// (MS-OLEPS 2.25).
const (
	pidsiTitle      = 2
	pidsiSubject    = 3
	pidsiAuthor     = 4
	pidsiKeywords   = 5
	pidsiComments   = 6
	pidsiLastAuthor = 8
	pidsiRevision   = 9
	pidsiCreated    = 12
	pidsiSaved      = 13
	pidsiPages      = 14
	pidsiWords      = 15
	pidAppName      = 18
)

// summaryInfo reads the document properties of "\x05SummaryInformation"
// into the metadata, as coreProps does for OOXML. A damaged property set
// is recorded without failing the text.
func summaryInfo(p *parser, f *cfb) {
	b, ok, err := f.streamNamed(f.root, "\x05SummaryInformation")
	if !ok {
		return
	}
	if err != nil {
		p.fail("read summary information", err)
		return
	}
	props, err := propertySet(b)
	if err != nil {
		p.fail("read summary information", err)
	}
	m := &p.d.Meta
	for id, v := range props {
		switch s := v.s; id {
		case pidsiTitle:
			m.Title = s
		case pidsiSubject:
			m.Subject = s
		case pidsiAuthor:
			m.Author = s
		case pidsiKeywords:
			p.d.setExtra("keywords", s)
		case pidsiComments:
			p.d.setExtra("description", s)
		case pidsiLastAuthor:
			p.d.setExtra("last modified by", s)
		case pidsiRevision:
			p.d.setExtra("revision", s)
		case pidsiCreated:
			m.Created = v.t
		case pidsiSaved:
			m.Modified = v.t
		case pidsiPages:
			p.d.setExtra("pages", s)
		case pidsiWords:
			p.d.setExtra("words", s)
		case pidAppName:
			p.d.setExtra("application", s)
		}
	}
}

// propValue is a property's value: a string (numbers formatted) or a time.
type propValue struct {
	s string
	t time.Time
}

// propertySet parses the first section of a property set stream
// (MS-OLEPS 2.21): strings, integers and FILETIMEs; other types and empty
// strings are left out.
func propertySet(b []byte) (map[uint32]propValue, error) {
	le := binary.LittleEndian
	if len(b) < 48 || le.Uint16(b) != 0xFFFE {
		return nil, fmt.Errorf("%w: property set header", ErrMalformed)
	}
	off := int64(le.Uint32(b[44:]))
	if off+8 > int64(len(b)) {
		return nil, fmt.Errorf("%w: property set section out of range", ErrMalformed)
	}
	sec := b[off:]
	n := int64(le.Uint32(sec[4:]))
	if 8+n*8 > int64(len(sec)) {
		return nil, fmt.Errorf("%w: property set of %d properties truncated", ErrMalformed, n)
	}
	cp := 1252
	out := make(map[uint32]propValue)
	type pending struct{ id, off uint32 }
	var strs []pending
	for i := int64(0); i < n; i++ {
		id, po := le.Uint32(sec[8+i*8:]), le.Uint32(sec[12+i*8:])
		if int64(po)+8 > int64(len(sec)) {
			continue
		}
		v := sec[po:]
		switch le.Uint16(v) {
		case 2: // VT_I2
			if id == 1 {
				cp = int(uint16(le.Uint16(v[4:])))
			}
			out[id] = propValue{s: strconv.Itoa(int(int16(le.Uint16(v[4:]))))}
		case 3: // VT_I4
			out[id] = propValue{s: strconv.Itoa(int(int32(le.Uint32(v[4:]))))}
		case 0x40: // VT_FILETIME
			if len(v) >= 12 {
				out[id] = propValue{t: filetime(le.Uint64(v[4:]))}
			}
		case 0x1E, 0x1F: // VT_LPSTR, VT_LPWSTR
			strs = append(strs, pending{id, po})
		}
	}
	for _, s := range strs {
		if v := propString(sec[s.off:], cp); v != "" {
			out[s.id] = propValue{s: v}
		}
	}
	return out, nil
}

// propString decodes a VT_LPSTR (in code page cp) or VT_LPWSTR value.
func propString(v []byte, cp int) string {
	le := binary.LittleEndian
	n := int64(le.Uint32(v[4:]))
	body := v[8:]
	if le.Uint16(v) == 0x1F || cp == 1200 {
		if le.Uint16(v) == 0x1F {
			n *= 2
		}
		body = body[:min(int64(len(body)), n)&^1]
		u := make([]uint16, len(body)/2)
		for i := range u {
			u[i] = le.Uint16(body[2*i:])
		}
		return cleanProp(string(utf16.Decode(u)))
	}
	body = body[:min(int64(len(body)), n)]
	if e := codepage(cp); e != nil {
		return cleanProp(convert(body, e))
	}
	return cleanProp(convert(body, codepage(1252)))
}

// cleanProp drops the terminating NULs and surrounding space of a property
// string.
func cleanProp(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
