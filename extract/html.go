package extract

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// htmlCharset picks the charset of an HTML document: BOM, declared
// charset, then <meta charset>, then UTF-8 if valid, then detection.
func htmlCharset(data []byte, declared string) string {
	_, name, certain := charset.DetermineEncoding(data, declared)
	if certain {
		return name
	}
	if utf8.Valid(data) {
		return "utf-8"
	}
	if name != "windows-1252" && name != "utf-8" {
		return name // from <meta>
	}
	return detectCharset(data, true)
}

// htmlToUTF8 converts an HTML document to UTF-8.
func htmlToUTF8(data []byte, declared string) ([]byte, string) {
	cs := htmlCharset(data, declared)
	if cs == "utf-8" {
		return bytes.TrimPrefix(data, magicUTF8), cs
	}
	e, name := lookupEncoding(cs)
	if e == nil {
		return data, "utf-8"
	}
	out, err := e.NewDecoder().Bytes(data)
	if err != nil {
		return data, "utf-8"
	}
	return out, name
}

// parseHTML extracts the visible text of HTML or XHTML.
func parseHTML(p *parser, data []byte) {
	data, cs := htmlToUTF8(data, p.declared)
	p.d.setExtra("charset", cs)
	if err := htmlText(p, data, &p.d.Meta); err != nil {
		p.fail("parse", err)
	}
}

// htmlText writes the visible text of an HTML document (UTF-8) to p.text:
// script, style, template and noscript are skipped, the first <title>
// goes to meta.Title, block elements start new lines, and runs of white
// space collapse outside <pre>.
func htmlText(p *parser, data []byte, meta *Metadata) error {
	z := html.NewTokenizer(bytes.NewReader(data))
	t := &p.text
	skip, pre, svg := 0, 0, 0
	inTitle, titleDone := false, false
	var title []byte
	for n := 0; ; n++ {
		if n&4095 == 0 && p.cancelled() {
			return nil
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return err
			}
			if inTitle && !titleDone {
				meta.Title = collapse(title)
			}
			return nil
		case html.TextToken:
			switch {
			case inTitle:
				title = append(title, z.Text()...)
			case skip > 0:
			case pre > 0:
				t.add(z.Text())
			default:
				writeCollapsed(t, z.Text())
			}
			if t.full() {
				return nil
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tagAtom(z)
			switch a {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				if tt != html.SelfClosingTagToken {
					skip++
				}
			case atom.Title:
				if !titleDone && svg == 0 {
					inTitle = true
				}
			case atom.Pre, atom.Textarea, atom.Listing:
				pre++
				t.newline()
			case atom.Svg, atom.Math:
				svg++
			case atom.Meta:
				if meta != nil {
					htmlMeta(z, meta)
				}
			case atom.Td, atom.Th:
				t.space()
			case atom.Br, atom.Hr:
				t.newline()
			default:
				if htmlBlock[a] {
					t.newline()
				}
			}
		case html.EndTagToken:
			a := tagAtom(z)
			switch a {
			case atom.Script, atom.Style, atom.Template, atom.Noscript:
				if skip > 0 {
					skip--
				}
			case atom.Title:
				if inTitle {
					inTitle, titleDone = false, true
					meta.Title = collapse(title)
				}
			case atom.Pre, atom.Textarea, atom.Listing:
				if pre > 0 {
					pre--
				}
				t.newline()
			case atom.Svg, atom.Math:
				if svg > 0 {
					svg--
				}
			default:
				if htmlBlock[a] {
					t.newline()
				}
			}
		}
	}
}

// tagAtom returns the atom of the current tag's lower-cased name, or 0
// for names no atom has. It reads the name from the raw token: unlike
// z.TagName, which copies the name at every call, it does not allocate.
func tagAtom(z *html.Tokenizer) atom.Atom {
	raw := z.Raw()
	i := 1 // past '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var buf [16]byte // longer than any atom the extractor looks for
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if isSpace(c) || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// htmlMeta takes the author and description from a <meta> element.
func htmlMeta(z *html.Tokenizer, meta *Metadata) {
	var name, content string
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "name", "property":
			name = strings.ToLower(string(v))
		case "content":
			content = strings.TrimSpace(string(v))
		}
		if !more {
			break
		}
	}
	if content == "" {
		return
	}
	switch name {
	case "author", "dc.creator", "dcterms.creator":
		if meta.Author == "" {
			meta.Author = content
		}
	case "description", "keywords", "generator":
		if meta.Extra == nil {
			meta.Extra = make(map[string]string)
		}
		meta.Extra[name] = content
	}
}

// htmlBlock lists the elements that start and end a line.
var htmlBlock = func() map[atom.Atom]bool {
	m := make(map[atom.Atom]bool)
	for _, a := range []atom.Atom{
		atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Caption, atom.Dd, atom.Details,
		atom.Dialog, atom.Div, atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer,
		atom.Form, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Html,
		atom.Li, atom.Main, atom.Nav, atom.Ol, atom.P, atom.Section, atom.Summary, atom.Table, atom.Tbody,
		atom.Tfoot, atom.Thead, atom.Tr, atom.Ul, atom.Option, atom.Legend, atom.Center,
	} {
		m[a] = true
	}
	return m
}()

// isSpace reports ASCII white space.
func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// writeCollapsed appends s with each run of white space collapsed to one
// space, and no space after a line break.
func writeCollapsed(t *textBuf, s []byte) {
	if !t.over && len(t.b)+len(s) <= t.max {
		// Fast path: the collapsed text (never longer than s) fits.
		b := slices.Grow(t.b, len(s))
		last := t.last()
		for len(s) > 0 {
			i := 0
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			if i > 0 {
				b = append(b, s[:i]...)
				last = s[i-1]
				s = s[i:]
				continue
			}
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if last != ' ' && last != '\n' && last != '\t' {
				b = append(b, ' ')
				last = ' '
			}
			s = s[i:]
		}
		t.b = b
		return
	}
	for len(s) > 0 {
		i := 0
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		if i > 0 {
			t.add(s[:i])
			s = s[i:]
			continue
		}
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		t.space()
		s = s[i:]
	}
}

// collapse returns s with white space runs collapsed and trimmed.
func collapse(s []byte) string { return strings.Join(strings.Fields(string(s)), " ") }

// parseXML extracts the character data of a generic XML document, one
// element's text per line.
func parseXML(p *parser, data []byte) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	dec.CharsetReader = charset.NewReaderLabel
	for n := 0; !p.text.full(); n++ {
		if n&4095 == 0 && p.cancelled() {
			return
		}
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			p.fail("parse", err)
			return
		}
		switch tok := tok.(type) {
		case xml.CharData:
			writeCollapsed(&p.text, tok)
		case xml.EndElement:
			p.text.newline()
		}
	}
}
