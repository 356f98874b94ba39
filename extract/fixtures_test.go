package extract

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// zipFile is one member of a generated ZIP.
type zipFile struct {
	name    string
	body    string
	store   bool // no compression
	flags   uint16
	modTime time.Time
}

func makeZip(t testing.TB, files ...zipFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Flags: f.flags, Modified: f.modTime}
		if f.store {
			h.Method = zip.Store
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const contentTypesXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`

func coreXML(title, author string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<dc:title>` + title + `</dc:title><dc:creator>` + author + `</dc:creator><cp:lastModifiedBy>Editor</cp:lastModifiedBy>
<dcterms:created xsi:type="dcterms:W3CDTF">2024-01-02T03:04:05Z</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">2024-02-03T04:05:06Z</dcterms:modified>
</cp:coreProperties>`
}

// makeDOCX builds a Word document whose paragraphs are paras; a tab in a
// paragraph becomes <w:tab/>.
func makeDOCX(t testing.TB, title, author string, paras ...string) []byte {
	t.Helper()
	var body strings.Builder
	for _, p := range paras {
		body.WriteString(`<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr>`)
		for i, run := range strings.Split(p, "\t") {
			if i > 0 {
				body.WriteString(`<w:r><w:tab/></w:r>`)
			}
			// Split each run in two to check runs are joined without spaces.
			half := len(run) / 2
			for half > 0 && half < len(run) && run[half]&0xC0 == 0x80 {
				half++
			}
			fmt.Fprintf(&body, `<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">%s</w:t></w:r><w:r><w:t>%s</w:t></w:r>`, xmlEscape(run[:half]), xmlEscape(run[half:]))
		}
		body.WriteString(`</w:p>`)
	}
	doc := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>` +
		body.String() + `<w:p><w:r><w:delText>deleted words</w:delText></w:r></w:p>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:t>Text box</w:t></mc:Choice><mc:Fallback><w:t>Text box</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
		`<w:sectPr/></w:body></w:document>`
	return makeZip(t,
		zipFile{name: "[Content_Types].xml", body: contentTypesXML},
		zipFile{name: "_rels/.rels", body: `<Relationships/>`},
		zipFile{name: "word/document.xml", body: doc},
		zipFile{name: "word/footer1.xml", body: `<w:ftr xmlns:w="x"><w:p><w:r><w:t>Confidential footer</w:t></w:r></w:p></w:ftr>`},
		zipFile{name: "docProps/core.xml", body: coreXML(title, author)},
		zipFile{name: "docProps/app.xml", body: `<Properties><Pages>3</Pages><Words>42</Words><Application>Microsoft Office Word</Application></Properties>`},
	)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// makeXLSX builds a workbook with one sheet per name; cells are strings,
// shared ("s:") or inline, or numbers.
func makeXLSX(t testing.TB, sheets map[string][][]string, order []string) []byte {
	t.Helper()
	var shared []string
	index := make(map[string]int)
	files := []zipFile{{name: "[Content_Types].xml", body: contentTypesXML}}
	var wb, rels strings.Builder
	wb.WriteString(`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>`)
	rels.WriteString(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	// Relationship ids deliberately out of sheet order.
	for i, name := range order {
		id := fmt.Sprintf("rId%d", len(order)-i)
		fmt.Fprintf(&wb, `<sheet name="%s" sheetId="%d" r:id="%s"/>`, name, i+1, id)
		fmt.Fprintf(&rels, `<Relationship Id="%s" Type="worksheet" Target="worksheets/sheet%d.xml"/>`, id, i+1)
		var sd strings.Builder
		sd.WriteString(`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
		for r, row := range sheets[name] {
			fmt.Fprintf(&sd, `<row r="%d">`, r+1)
			for _, cell := range row {
				switch {
				case strings.HasPrefix(cell, "s:"):
					v := cell[2:]
					if _, ok := index[v]; !ok {
						index[v] = len(shared)
						shared = append(shared, v)
					}
					fmt.Fprintf(&sd, `<c t="s"><v>%d</v></c>`, index[v])
				case strings.HasPrefix(cell, "n:"):
					fmt.Fprintf(&sd, `<c><f>SUM(A1:A2)</f><v>%s</v></c>`, cell[2:])
				default:
					fmt.Fprintf(&sd, `<c t="inlineStr"><is><t>%s</t></is></c>`, xmlEscape(cell))
				}
			}
			sd.WriteString(`</row>`)
		}
		sd.WriteString(`</sheetData></worksheet>`)
		files = append(files, zipFile{name: fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), body: sd.String()})
	}
	wb.WriteString(`</sheets></workbook>`)
	rels.WriteString(`</Relationships>`)
	var ss strings.Builder
	ss.WriteString(`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`)
	for _, s := range shared {
		// Rich text: two runs, plus a phonetic run that must be skipped.
		half := len(s) / 2
		fmt.Fprintf(&ss, `<si><r><t>%s</t></r><r><t>%s</t></r><rPh><t>PHONETIC</t></rPh></si>`, xmlEscape(s[:half]), xmlEscape(s[half:]))
	}
	ss.WriteString(`</sst>`)
	files = append(files,
		zipFile{name: "xl/workbook.xml", body: wb.String()},
		zipFile{name: "xl/_rels/workbook.xml.rels", body: rels.String()},
		zipFile{name: "xl/sharedStrings.xml", body: ss.String()},
		zipFile{name: "docProps/core.xml", body: coreXML("Budget", "Finance Team")},
	)
	return makeZip(t, files...)
}

// makePPTX builds a presentation whose slides are listed out of file order
// in presentation.xml.
func makePPTX(t testing.TB, slides ...string) []byte {
	t.Helper()
	files := []zipFile{{name: "[Content_Types].xml", body: contentTypesXML}}
	var pres, rels strings.Builder
	pres.WriteString(`<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst>`)
	rels.WriteString(`<Relationships>`)
	for i, text := range slides {
		// Slide i is stored as file slide(n-i).xml: order comes from the list.
		file := fmt.Sprintf("slide%d.xml", len(slides)-i)
		fmt.Fprintf(&pres, `<p:sldId id="%d" r:id="rId%d"/>`, 256+i, i+10)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Target="slides/%s"/>`, i+10, file)
		var sb strings.Builder
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(&sb, `<a:p><a:r><a:t>%s</a:t></a:r></a:p>`, xmlEscape(line))
		}
		files = append(files, zipFile{name: "ppt/slides/" + file, body: `<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:txBody>` + sb.String() + `</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`})
	}
	pres.WriteString(`</p:sldIdLst></p:presentation>`)
	rels.WriteString(`</Relationships>`)
	files = append(files,
		zipFile{name: "ppt/presentation.xml", body: pres.String()},
		zipFile{name: "ppt/_rels/presentation.xml.rels", body: rels.String()},
		zipFile{name: "docProps/core.xml", body: coreXML("Quarterly Review", "Presenter")},
	)
	return makeZip(t, files...)
}

const odfMetaXML = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta>
<meta:initial-creator>Ada Lovelace</meta:initial-creator><dc:creator>Charles Babbage</dc:creator><dc:title>Notes on the Engine</dc:title>
<meta:creation-date>2023-05-06T07:08:09</meta:creation-date><dc:date>2023-06-07T08:09:10.123</dc:date>
<meta:document-statistic meta:page-count="2" meta:word-count="17"/></office:meta></office:document-meta>`

// makeODF builds an OpenDocument package of mimetype with the given
// office:body content.
func makeODF(t testing.TB, mimetype, body string, encrypted bool) []byte {
	t.Helper()
	manifest := `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`
	content := `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"><office:automatic-styles><style>ignored style</style></office:automatic-styles><office:body>` + body + `</office:body></office:document-content>`
	if encrypted {
		manifest = `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1"/></manifest:file-entry></manifest:manifest>`
		content = "\x8f\x03garbled encrypted bytes"
	}
	return makeZip(t,
		zipFile{name: "mimetype", body: mimetype, store: true},
		zipFile{name: "META-INF/manifest.xml", body: manifest},
		zipFile{name: "content.xml", body: content},
		zipFile{name: "meta.xml", body: odfMetaXML},
	)
}

// makeEPUB builds a two-chapter EPUB whose spine order differs from the
// file order.
func makeEPUB(t testing.TB) []byte {
	t.Helper()
	return makeZip(t,
		zipFile{name: "mimetype", body: "application/epub+zip", store: true},
		zipFile{name: "META-INF/container.xml", body: `<container><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`},
		zipFile{name: "OEBPS/content.opf", body: `<package xmlns:dc="http://purl.org/dc/elements/1.1/"><metadata><dc:title>A Small Book</dc:title><dc:creator>Jane Writer</dc:creator><dc:date>2020-01-01</dc:date><dc:language>en</dc:language></metadata>
<manifest><item id="c1" href="text/one.xhtml"/><item id="c2" href="text/two.xhtml"/></manifest><spine><itemref idref="c2"/><itemref idref="c1"/></spine></package>`},
		zipFile{name: "OEBPS/text/one.xhtml", body: `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head><body><p>Second in reading order.</p></body></html>`},
		zipFile{name: "OEBPS/text/two.xhtml", body: `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Two</title></head><body><p>First in reading order.</p></body></html>`},
	)
}

// tarFile is one member of a generated tar.
type tarFile struct {
	name string
	body string
	typ  byte
}

func makeTar(t testing.TB, files ...tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		typ := f.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: f.name, Typeflag: typ, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(1700000000, 0)}
		if typ != tar.TypeReg {
			h.Size = 0
			h.Mode = 0o755
		}
		if typ == tar.TypeSymlink {
			h.Linkname = "target"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := io.WriteString(tw, f.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zw.Name = name
	zw.ModTime = time.Unix(1700000000, 0)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// b64 wraps base64 at 76 columns as mail does.
func b64(data []byte) string {
	s := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s)
	return b.String()
}

func qp(s string) string {
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// attachment is one MIME attachment of a generated message.
type attachment struct {
	name, contentType string
	data              []byte
}

// makeEML builds a multipart message: a text/plain (quoted-printable,
// ISO-8859-1) and HTML alternative, then the attachments in base64.
func makeEML(subject, plain string, atts ...attachment) []byte {
	var b strings.Builder
	latin1 := func(s string) string {
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r < 256 {
				out = append(out, byte(r))
			} else {
				out = append(out, '?')
			}
		}
		return string(out)
	}
	b.WriteString("Return-Path: <alice@example.com>\r\n")
	b.WriteString("Received: from mx.example.com by mail.example.org; Tue, 2 Jan 2024 10:00:00 +0000\r\n")
	b.WriteString("From: =?UTF-8?Q?Alice_M=C3=BCller?= <alice@example.com>\r\n")
	b.WriteString("To: Bob <bob@example.org>, carol@example.net\r\n")
	b.WriteString("Cc: \"Dave, Jr.\" <dave@example.org>\r\n")
	b.WriteString("Subject: " + subject + "\r\n")
	b.WriteString("Date: Tue, 2 Jan 2024 10:00:00 +0100\r\n")
	b.WriteString("Message-ID: <msg-1@example.com>\r\n")
	b.WriteString("In-Reply-To: <msg-0@example.com>\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=\"outer\"\r\n\r\n")
	b.WriteString("This is a multi-part message in MIME format.\r\n")
	b.WriteString("--outer\r\nContent-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n")
	b.WriteString("--alt\r\nContent-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	b.WriteString(qp(latin1(plain)) + "\r\n")
	b.WriteString("--alt\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n<html><body><p>HTML alternative must not be used</p></body></html>\r\n")
	b.WriteString("--alt--\r\n")
	for _, a := range atts {
		fmt.Fprintf(&b, "--outer\r\nContent-Type: %s; name=\"%s\"\r\n", a.contentType, a.name)
		if a.contentType == "message/rfc822" {
			fmt.Fprintf(&b, "Content-Disposition: attachment\r\n\r\n%s\r\n", a.data)
			continue
		}
		fmt.Fprintf(&b, "Content-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n", a.name, b64(a.data))
	}
	b.WriteString("--outer--\r\n")
	return []byte(b.String())
}

// simpleEML is a single-part message.
func simpleEML(from, subject, body string) []byte {
	return []byte("From: " + from + "\r\nTo: team@example.org\r\nSubject: " + subject +
		"\r\nDate: Wed, 3 Jan 2024 09:00:00 +0000\r\nMessage-ID: <" + strings.ReplaceAll(subject, " ", ".") + "@example.org>\r\n\r\n" + body + "\r\n")
}

// pdfSpec describes a generated PDF.
type pdfSpec struct {
	pages         [][]string // lines per page
	title, author string
	compress      bool
	cidFont       bool   // add a Type0 Identity-H font with a ToUnicode CMap
	userPassword  string // with encrypt: "" opens without a password
	encrypt       string // "", "rc4", "aes256"
	xrefOffsetBug bool   // write wrong xref offsets (repair needed)
}

// makePDF writes a small but complete PDF: Helvetica text lines, optional
// TJ kerning line, optional CID font line, document information.
func makePDF(t testing.TB, s pdfSpec) []byte {
	t.Helper()
	type obj struct {
		dict   string
		stream []byte
	}
	var objs []obj // object i+1
	add := func(o obj) int { objs = append(objs, o); return len(objs) }

	catalog := add(obj{})
	pagesID := add(obj{})
	font := add(obj{dict: `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 255 /Widths [` + strings.Repeat("500 ", 224) + `] >>`})
	cidFont := 0
	if s.cidFont {
		cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Test def\n" +
			"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
			"2 beginbfchar <0001> <65E5> <0002> <672C> endbfchar\n" +
			"1 beginbfrange <0010> <0013> <0041> endbfrange\n" +
			"1 beginbfrange <0020> <0021> [<00DF> <FB01>] endbfrange\n" +
			"endcmap CMapName currentdict /CMap defineresource pop end end\n"
		toUni := add(obj{dict: "<< >>", stream: []byte(cmap)})
		desc := add(obj{dict: `<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /W [1 [1000 1000] 16 19 600] >>`})
		cidFont = add(obj{dict: fmt.Sprintf(`<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>`, desc, toUni)})
	}
	var kids []string
	for _, lines := range s.pages {
		var c strings.Builder
		c.WriteString("BT /F1 12 Tf 14 TL 72 720 Td\n")
		for i, line := range lines {
			if i > 0 {
				c.WriteString("T*\n")
			}
			switch {
			case strings.HasPrefix(line, "TJ:"):
				// Words separated by kerning only, as TeX does.
				var parts []string
				for _, w := range strings.Fields(line[3:]) {
					parts = append(parts, "("+pdfEscape(w[:len(w)/2])+") -40 ("+pdfEscape(w[len(w)/2:])+")")
				}
				c.WriteString("[" + strings.Join(parts, " -400 ") + "] TJ\n")
			case strings.HasPrefix(line, "CID:") && s.cidFont:
				fmt.Fprintf(&c, "/F2 12 Tf <00010002001000110012001300200021> Tj /F1 12 Tf\n")
			default:
				c.WriteString("(" + pdfEscape(line) + ") Tj\n")
			}
		}
		c.WriteString("ET\n")
		content := add(obj{dict: "<< >>", stream: []byte(c.String())})
		resources := fmt.Sprintf("<< /Font << /F1 %d 0 R", font)
		if cidFont > 0 {
			resources += fmt.Sprintf(" /F2 %d 0 R", cidFont)
		}
		resources += " >> >>"
		page := add(obj{dict: fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>", pagesID, resources, content)})
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[catalog-1].dict = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesID)
	objs[pagesID-1].dict = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	info := add(obj{dict: fmt.Sprintf("<< /Title %s /Author (%s) /CreationDate (D:20240102030405+01'00') /ModDate (D:20240203) /Producer (simdex test) >>",
		pdfUTF16(s.title), pdfEscape(s.author))})

	id0 := []byte("0123456789abcdef")
	var enc *testPDFCrypt
	encObj := 0
	if s.encrypt != "" {
		enc = newTestPDFCrypt(t, s.encrypt, s.userPassword, "owner-secret", id0)
		encObj = add(obj{dict: enc.dict})
	}

	var buf bytes.Buffer
	buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs)+1)
	for i, o := range objs {
		num := i + 1
		offsets[num] = buf.Len()
		dict := o.dict
		if enc != nil && num != encObj {
			dict = enc.encryptStrings(dict, num)
		}
		if o.stream == nil {
			fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", num, dict)
			continue
		}
		data := o.stream
		extra := ""
		if s.compress {
			var z bytes.Buffer
			zw, _ := newZlib(&z)
			_, _ = zw.Write(data)
			_ = zw.Close()
			data = z.Bytes()
			extra = " /Filter /FlateDecode"
		}
		if enc != nil {
			data = enc.encrypt(data, num)
		}
		dict = strings.TrimSuffix(strings.TrimSpace(dict), ">>") + fmt.Sprintf("/Length %d%s >>", len(data), extra)
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nstream\n", num, dict)
		buf.Write(data)
		buf.WriteString("\nendstream\nendobj\n")
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for num := 1; num <= len(objs); num++ {
		off := offsets[num]
		if s.xrefOffsetBug {
			off += 7
		}
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%x> <%x>]", len(objs)+1, catalog, info, id0, id0)
	if encObj > 0 {
		fmt.Fprintf(&buf, " /Encrypt %d 0 R", encObj)
	}
	fmt.Fprintf(&buf, " >>\nstartxref\n%d\n%%%%EOF\n", xref)
	return buf.Bytes()
}

func pdfEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 128:
			b.WriteRune(r)
		default:
			// WinAnsi is Latin-1 for these tests.
			fmt.Fprintf(&b, `\%03o`, r&0xFF)
		}
	}
	return b.String()
}

// pdfUTF16 writes s as a UTF-16BE hex text string with a BOM.
func pdfUTF16(s string) string {
	u := utf16.Encode([]rune(s))
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, c := range u {
		fmt.Fprintf(&b, "%04X", c)
	}
	b.WriteString(">")
	return b.String()
}

// testPDFCrypt encrypts a generated PDF with the standard security
// handler: RC4 128-bit (revision 3) or AES-256 (revision 6).
type testPDFCrypt struct {
	method string
	key    []byte
	dict   string
}

func newTestPDFCrypt(t testing.TB, method, user, owner string, id0 []byte) *testPDFCrypt {
	t.Helper()
	pad := func(pw string) []byte { return append([]byte(pw), pdfPad...)[:32] }
	switch method {
	case "rc4":
		const p = -1028
		// Algorithm 3: O from the owner and user passwords.
		ok := md5.Sum(pad(owner))
		k := ok[:]
		for range 50 {
			s := md5.Sum(k)
			k = s[:]
		}
		o := pad(user)
		for i := range 20 {
			x := make([]byte, 16)
			for j := range x {
				x[j] = k[j] ^ byte(i)
			}
			c, _ := rc4.NewCipher(x)
			c.XORKeyStream(o, o)
		}
		// Algorithm 2: the file key from the user password.
		h := md5.New()
		h.Write(pad(user))
		h.Write(o)
		h.Write([]byte{byte(p & 0xFF), byte(p >> 8 & 0xFF), byte(p >> 16 & 0xFF), byte(p >> 24 & 0xFF)})
		h.Write(id0)
		key := h.Sum(nil)
		for range 50 {
			s := md5.Sum(key[:16])
			key = s[:]
		}
		key = key[:16]
		u := pdfUserKey(key, id0, 3)
		return &testPDFCrypt{method: method, key: key,
			dict: fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /P %d /O <%x> /U <%x> >>", p, o, u)}
	case "aes256":
		key := []byte("0123456789abcdef0123456789abcdef")
		vsalt, ksalt := []byte("vsaltvsa"), []byte("ksaltksa")
		u := append(append(hashR6([]byte(user), vsalt, nil, 6), vsalt...), ksalt...)
		block, _ := aes.NewCipher(hashR6([]byte(user), ksalt, nil, 6))
		ue := make([]byte, 32)
		cipher.NewCBCEncrypter(block, make([]byte, 16)).CryptBlocks(ue, key)
		o := make([]byte, 48)
		return &testPDFCrypt{method: method, key: key,
			dict: fmt.Sprintf("<< /Filter /Standard /V 5 /R 6 /Length 256 /P -1028 /O <%x> /U <%x> /OE <%x> /UE <%x> /Perms <%x> "+
				"/CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF >>", o, u, ue, ue, make([]byte, 16))}
	}
	t.Fatalf("unknown encryption %q", method)
	return nil
}

func (c *testPDFCrypt) encrypt(data []byte, num int) []byte {
	if c.method == "rc4" {
		h := md5.New()
		h.Write(c.key)
		h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), 0, 0})
		k := h.Sum(nil)[:16]
		out := make([]byte, len(data))
		r, _ := rc4.NewCipher(k)
		r.XORKeyStream(out, data)
		return out
	}
	n := 16 - len(data)%16
	plain := append(append([]byte(nil), data...), bytes.Repeat([]byte{byte(n)}, n)...)
	iv := []byte("fedcba9876543210")
	block, _ := aes.NewCipher(c.key)
	out := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, plain)
	return append(iv, out...)
}

// encryptStrings encrypts the literal and hex strings of a dictionary
// written by makePDF (no nested parentheses there).
func (c *testPDFCrypt) encryptStrings(dict string, num int) string {
	var b strings.Builder
	for i := 0; i < len(dict); i++ {
		switch dict[i] {
		case '(':
			j := strings.IndexByte(dict[i:], ')')
			raw := dict[i+1 : i+j]
			fmt.Fprintf(&b, "<%x>", c.encrypt([]byte(raw), num))
			i += j
		case '<':
			if i+1 < len(dict) && dict[i+1] == '<' {
				b.WriteString("<<")
				i++
				continue
			}
			j := strings.IndexByte(dict[i:], '>')
			raw, _ := hexDecode([]byte(dict[i+1 : i+j+1]))
			fmt.Fprintf(&b, "<%x>", c.encrypt(raw, num))
			i += j
		default:
			b.WriteByte(dict[i])
		}
	}
	return b.String()
}

// makeCFB writes a minimal compound file (one FAT sector, one directory
// sector) with streams named names.
func makeCFB(names ...string) []byte {
	const ss = 512
	h := make([]byte, ss)
	copy(h, magicCFB)
	h[0x18], h[0x1A], h[0x1C], h[0x1D], h[0x1E], h[0x20] = 0x3E, 0x03, 0xFE, 0xFF, 9, 6
	h[0x2C] = 1 // one FAT sector
	le := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
	le(h[0x30:], 1)          // directory starts at sector 1
	le(h[0x3C:], 0xFFFFFFFE) // no mini FAT
	le(h[0x44:], 0xFFFFFFFE) // no DIFAT sectors
	for i := 0x4C; i < ss; i += 4 {
		le(h[i:], 0xFFFFFFFF)
	}
	le(h[0x4C:], 0) // FAT in sector 0
	fat := make([]byte, ss)
	for i := 0; i < ss; i += 4 {
		le(fat[i:], 0xFFFFFFFF)
	}
	le(fat[0:], 0xFFFFFFFD) // sector 0: FAT
	le(fat[4:], 0xFFFFFFFE) // sector 1: directory, end of chain
	dir := make([]byte, ss)
	entry := func(i int, name string, typ byte) {
		e := dir[i*128 : (i+1)*128]
		u := utf16.Encode([]rune(name))
		for k, c := range u {
			e[2*k], e[2*k+1] = byte(c), byte(c>>8)
		}
		n := 2*len(u) + 2
		e[0x40], e[0x41] = byte(n), byte(n>>8)
		e[0x42] = typ
	}
	entry(0, "Root Entry", 5)
	for i, name := range names {
		if i+1 < 4 {
			entry(i+1, name, 2)
		}
	}
	out := append(h, fat...)
	return append(out, dir...)
}

func newZlib(w io.Writer) (*zlib.Writer, error) { return zlib.NewWriterLevel(w, zlib.BestCompression) }
