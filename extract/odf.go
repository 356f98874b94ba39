package extract

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// parseODF extracts an OpenDocument file (ODT, ODS, ODP and the other
// OpenDocument types): the text of content.xml and the properties of
// meta.xml. An encrypted package is ErrEncrypted.
func parseODF(c *zipContainer) {
	p := c.p
	manifest, err := c.readNamed("META-INF/manifest.xml")
	if err != nil {
		p.fail("read manifest", err)
	}
	if bytes.Contains(manifest, []byte("encryption-data")) {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: password-protected OpenDocument", ErrEncrypted))
		c.odfMeta()
		return
	}
	if c.files["content.xml"] == nil {
		p.fail("read content", fmt.Errorf("%w: no content.xml", ErrMalformed))
	}
	t := &p.text
	skip, inText := 0, 0
	var sheets []string
	slides := 0
	err = c.xmlPart("content.xml", func(tok xml.Token) bool {
		switch e := tok.(type) {
		case xml.StartElement:
			if skip > 0 {
				skip++
				break
			}
			switch e.Name.Local {
			case "tracked-changes", "annotation", "covered-table-cell", "title", "desc", "sequence-decls",
				"variable-decls", "user-field-decls", "forms", "notes", "font-face-decls", "automatic-styles":
				skip = 1 // not visible in the flow (presentation:notes are speaker notes)
			case "p", "h":
				inText++
			case "s":
				n, _ := strconv.Atoi(attr(e, "c"))
				for range min(max(n, 1), 64) {
					t.addByte(' ')
				}
			case "tab":
				t.addByte('\t')
			case "line-break":
				t.newline()
			case "table":
				if e.Name.Space == "table" && p.d.MediaType == mediaODS {
					sheets = append(sheets, attr(e, "name"))
				}
			case "page":
				if e.Name.Space == "draw" {
					slides++
				}
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				break
			}
			switch e.Name.Local {
			case "p", "h":
				if inText > 0 {
					inText--
				}
				t.newline()
			case "table-cell":
				t.addByte('\t')
			case "table-row":
				t.newline()
			case "page":
				t.newline()
				t.addByte('\n')
			}
		case xml.CharData:
			if skip == 0 && inText > 0 {
				t.add(e)
			}
		}
		return !t.full()
	})
	if err != nil {
		p.fail("parse content.xml", err)
	}
	if len(sheets) > 0 {
		p.d.setExtra("sheet names", strings.Join(sheets, ", "))
		p.d.setExtra("sheets", strconv.Itoa(len(sheets)))
	}
	if slides > 0 {
		p.d.setExtra("slides", strconv.Itoa(slides))
	}
	c.odfMeta()
}

// odfMeta reads meta.xml (stored unencrypted even in encrypted packages).
func (c *zipContainer) odfMeta() {
	m := &c.p.d.Meta
	var cur, space string
	var val []byte
	err := c.xmlPart("meta.xml", func(tok xml.Token) bool {
		switch e := tok.(type) {
		case xml.StartElement:
			cur, space, val = e.Name.Local, e.Name.Space, val[:0]
			if cur == "document-statistic" {
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "page-count":
						c.p.d.setExtra("pages", a.Value)
					case "word-count":
						c.p.d.setExtra("words", a.Value)
					}
				}
			}
		case xml.CharData:
			if len(val) < 4096 {
				val = append(val, e...)
			}
		case xml.EndElement:
			v := strings.TrimSpace(string(val))
			if e.Name.Local != cur || v == "" {
				break
			}
			switch space + ":" + cur {
			case "dc:title":
				m.Title = v
			case "meta:initial-creator":
				m.Author = v
			case "dc:creator":
				c.p.d.setExtra("last modified by", v)
			case "dc:subject":
				m.Subject = v
			case "dc:description":
				c.p.d.setExtra("description", v)
			case "meta:keyword":
				c.p.d.setExtra("keywords", v)
			case "meta:generator":
				c.p.d.setExtra("application", v)
			case "meta:creation-date":
				m.Created = parseW3CDate(v)
			case "dc:date":
				m.Modified = parseW3CDate(v)
			}
			cur = ""
		}
		return true
	})
	if err != nil {
		c.p.fail("parse meta.xml", err)
	}
	if m.Author == "" && c.p.d.Meta.Extra["last modified by"] != "" {
		m.Author = c.p.d.Meta.Extra["last modified by"]
	}
}

// parseEPUB extracts an EPUB book: the XHTML documents of its spine in
// reading order, and the Dublin Core metadata of its package document.
func parseEPUB(c *zipContainer) {
	p := c.p
	var opf string
	if err := c.xmlPart("META-INF/container.xml", func(tok xml.Token) bool {
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "rootfile" && opf == "" {
			opf = strings.TrimPrefix(path.Clean("/"+attr(e, "full-path")), "/")
		}
		return true
	}); err != nil {
		p.fail("parse container.xml", err)
	}
	if c.files["META-INF/encryption.xml"] != nil {
		p.d.setExtra("encrypted", "true")
	}
	if opf == "" || c.files[opf] == nil {
		p.fail("read package", fmt.Errorf("%w: no package document", ErrMalformed))
		return
	}
	manifest := make(map[string]string)
	var spine []string
	var cur string
	var val []byte
	m := &p.d.Meta
	if err := c.xmlPart(opf, func(tok xml.Token) bool {
		switch e := tok.(type) {
		case xml.StartElement:
			cur, val = e.Name.Local, val[:0]
			switch cur {
			case "item":
				manifest[attr(e, "id")] = resolvePart(opf, attr(e, "href"))
			case "itemref":
				if attr(e, "linear") != "no" {
					spine = append(spine, attr(e, "idref"))
				}
			}
		case xml.CharData:
			if len(val) < 4096 {
				val = append(val, e...)
			}
		case xml.EndElement:
			v := strings.TrimSpace(string(val))
			if e.Name.Local == cur && v != "" {
				switch cur {
				case "title":
					if m.Title == "" {
						m.Title = v
					}
				case "creator":
					if m.Author == "" {
						m.Author = v
					}
				case "date":
					if m.Created.IsZero() {
						m.Created = parseW3CDate(v)
					}
				case "language":
					p.d.setExtra("language", v)
				}
			}
			cur = ""
		}
		return true
	}); err != nil {
		p.fail("parse package", err)
	}
	for _, id := range spine {
		if p.text.full() || p.cancelled() {
			return
		}
		part := manifest[id]
		f := c.files[part]
		if f == nil {
			continue
		}
		data, err := c.read(f)
		if err != nil {
			p.fail("read "+part, err)
			continue
		}
		var ignore Metadata
		if err := htmlText(p, data, &ignore); err != nil {
			p.fail("parse "+part, err)
		}
		p.text.newline()
	}
	p.d.setExtra("chapters", strconv.Itoa(len(spine)))
}
