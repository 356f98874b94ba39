package extract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fuzzLimits keeps fuzzing fast while exercising every limit.
func fuzzLimits() Limits {
	return Limits{
		MaxObjectSize:       1 << 20,
		MaxDecompressedSize: 8 << 20,
		MaxCompressionRatio: 100,
		MaxDepth:            4,
		MaxChildren:         64,
		MaxTextSize:         1 << 20,
		Timeout:             5 * time.Second,
	}
}

// checkInvariants checks what every Document tree must satisfy.
func checkInvariants(t *testing.T, d *Document, lim Limits, depth int) {
	t.Helper()
	if d.Err != nil {
		var xe *Error
		if !errors.As(d.Err, &xe) {
			t.Fatalf("%q: error %v is %T, not *Error", d.Path, d.Err, d.Err)
		}
		if !isSentinel(d.Err) {
			t.Fatalf("%q: error %v wraps no sentinel", d.Path, d.Err)
		}
	}
	if !utf8.ValidString(d.Text) {
		t.Fatalf("%q: text is not UTF-8", d.Path)
	}
	if int64(len(d.Text)) > lim.MaxTextSize {
		t.Fatalf("%q: %d bytes of text over MaxTextSize", d.Path, len(d.Text))
	}
	if depth > lim.MaxDepth || len(d.Path) != depth+1 {
		t.Fatalf("%q: depth %d, path %d long", d.Path, depth, len(d.Path))
	}
	if d.MediaType == "" && d.Err == nil {
		t.Fatalf("%q: no media type", d.Path)
	}
	for _, c := range d.Children {
		checkInvariants(t, c, lim, depth+1)
	}
}

func fuzzExtract(t *testing.T, name string, data []byte) {
	lim := fuzzLimits()
	x, err := New(Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Extract(context.Background(), Object{Name: name, Reader: bytes.NewReader(data)})
	if d == nil {
		t.Fatalf("no document: %v", err)
	}
	if err != d.Err { //nolint:errorlint // the very value returned, not a match
		t.Fatalf("returned %v, document has %v", err, d.Err)
	}
	if count(d) > lim.MaxChildren+1 {
		t.Fatalf("%d documents for MaxChildren %d", count(d), lim.MaxChildren)
	}
	checkInvariants(t, d, lim, 0)
}

// fuzzParser runs one format parser on data, bypassing sniffing.
func fuzzParser(t *testing.T, format string, parse func(*parser, []byte), data []byte) {
	lim := fuzzLimits()
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
	defer cancel()
	j := newJob(ctx, lim)
	d := &Document{Name: "fuzz", Path: []string{"fuzz"}, MediaType: "application/x-fuzz"}
	p := &parser{j: j, d: d, format: format, text: textBuf{max: int(lim.MaxTextSize)}}
	p.run(kind{format: format, media: d.MediaType, parse: parse}, data)
	checkInvariants(t, d, lim, 0)
}

// seeds returns the fixtures of every format, for the seed corpora.
func seeds(t testing.TB) map[string][]byte {
	docx := makeDOCX(t, "Title", "Author", "First paragraph.", "Second\tparagraph.")
	s := map[string][]byte{
		"a.txt":      []byte("plain text\nwith lines\n"),
		"b.txt":      []byte("caf\xe9 cr\xe8me br\xfbl\xe9e"),
		"c.txt":      []byte("\xff\xfeH\x00i\x00"),
		"d.md":       []byte("# Title\n\n**bold** [link](http://x) `code`\n"),
		"e.csv":      []byte("a,b\n\"c, d\",e\n"),
		"f.html":     []byte(`<!DOCTYPE html><html><head><title>T</title><meta charset="iso-8859-1"><script>x</script></head><body><p>caf\xe9</p><pre> a  b </pre></body></html>`),
		"g.xml":      []byte(`<?xml version="1.0"?><a><b>text</b><c/></a>`),
		"h.pdf":      makePDF(t, pdfSpec{pages: [][]string{{"Hello", "TJ:kerned words", "CID:"}}, cidFont: true, title: "T"}),
		"i.pdf":      makePDF(t, pdfSpec{pages: [][]string{{"Compressed"}}, compress: true, encrypt: "rc4"}),
		"j.pdf":      makePDF(t, pdfSpec{pages: [][]string{{"AES"}}, compress: true, encrypt: "aes256"}),
		"k.pdf":      makePDF(t, pdfSpec{pages: [][]string{{"Damaged"}}, xrefOffsetBug: true}),
		"l.docx":     docx,
		"m.xlsx":     makeXLSX(t, map[string][][]string{"S": {{"s:a", "n:1", "inline"}}}, []string{"S"}),
		"n.pptx":     makePPTX(t, "one", "two"),
		"o.odt":      makeODF(t, mediaODT, `<office:text><text:p>odt<text:s text:c="2"/>text</text:p></office:text>`, false),
		"p.epub":     makeEPUB(t),
		"q.rtf":      []byte(rtfSample),
		"r.eml":      makeEML("=?UTF-8?B?w6k=?=", "body\n", attachment{name: "x.docx", contentType: mediaDOCX, data: docx}),
		"s.mbox":     []byte("From a Mon Jan  1 00:00:00 2024\n" + string(simpleEML("a@x", "one", "body\n>From x"))),
		"t.zip":      makeZip(t, zipFile{name: "a/b.txt", body: "member"}, zipFile{name: "c.zip", body: string(makeZip(t, zipFile{name: "d.txt", body: "inner"}))}),
		"u.tar":      makeTar(t, tarFile{name: "a.txt", body: "tar member"}),
		"v.tar.gz":   gzipBytes(t, "v.tar", makeTar(t, tarFile{name: "a.txt", body: "tgz member"})),
		"w.gz":       gzipBytes(t, "w", []byte("gz text")),
		"x.docx":     makeCFB("EncryptionInfo", "EncryptedPackage"),
		"y.doc":      makeCFB("WordDocument"),
		"z.tsv":      []byte("a\tb\n"),
		"aa.ods":     makeODF(t, mediaODS, `<office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>1</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`, false),
		"ab.odt.enc": makeODF(t, mediaODT, "", true),
	}
	if bz, err := os.ReadFile(filepath.Join("testdata", "hello.txt.bz2")); err == nil {
		s["ac.bz2"] = bz
	}
	return s
}

func addSeeds(f *testing.F, exts ...string) {
	for name, data := range seeds(f) {
		for _, ext := range exts {
			if ext == "" || filepath.Ext(name) == ext || filepath.Ext(name[:len(name)-len(filepath.Ext(name))]) == ext {
				f.Add(data)
				break
			}
		}
	}
}

// FuzzExtract runs the whole extractor (sniffing, every parser, limits).
func FuzzExtract(f *testing.F) {
	addSeeds(f, "")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzExtract(t, "fuzz.bin", data) })
}

// FuzzText runs the text parsers: plain, Markdown, CSV, TSV.
func FuzzText(f *testing.F) {
	for _, ext := range []string{".txt", ".md", ".csv", ".tsv"} {
		for name, data := range seeds(f) {
			if filepath.Ext(name) == ext {
				f.Add(uint8(len(ext)), data)
			}
		}
	}
	parsers := []func(*parser, []byte){parseText, parseMarkdown, parseCSV, parseTSV}
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		fuzzParser(t, "text", parsers[int(sel)%len(parsers)], data)
	})
}

// FuzzHTML runs the HTML and generic XML parsers.
func FuzzHTML(f *testing.F) {
	for name, data := range seeds(f) {
		if ext := filepath.Ext(name); ext == ".html" || ext == ".xml" {
			f.Add(false, data)
			f.Add(true, data)
		}
	}
	f.Fuzz(func(t *testing.T, xml bool, data []byte) {
		if xml {
			fuzzParser(t, "xml", parseXML, data)
			return
		}
		fuzzParser(t, "html", parseHTML, data)
	})
}

// FuzzPDF runs the PDF parser.
func FuzzPDF(f *testing.F) {
	addSeeds(f, ".pdf")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParser(t, "pdf", parsePDF, data) })
}

// FuzzRTF runs the RTF parser.
func FuzzRTF(f *testing.F) {
	addSeeds(f, ".rtf")
	f.Add([]byte(`{\rtf1{\*\x{\u-3913?\'8`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParser(t, "rtf", parseRTF, data) })
}

// FuzzEML runs the e-mail and mbox parsers.
func FuzzEML(f *testing.F) {
	for name, data := range seeds(f) {
		if ext := filepath.Ext(name); ext == ".eml" || ext == ".mbox" {
			f.Add(ext == ".mbox", data)
		}
	}
	f.Fuzz(func(t *testing.T, mbox bool, data []byte) {
		if mbox {
			fuzzParser(t, "mbox", parseMBOX, data)
			return
		}
		fuzzParser(t, "eml", parseEML, data)
	})
}

// FuzzZIP runs the ZIP parser and the formats inside ZIP containers:
// DOCX, XLSX, PPTX, OpenDocument, EPUB.
func FuzzZIP(f *testing.F) {
	addSeeds(f, ".zip", ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".epub")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParser(t, "zip", parseZIP, data) })
}

// FuzzTAR runs the tar, gzip and bzip2 parsers.
func FuzzTAR(f *testing.F) {
	for name, data := range seeds(f) {
		switch filepath.Ext(name) {
		case ".tar":
			f.Add(uint8(0), data)
		case ".gz":
			f.Add(uint8(1), data)
		case ".bz2":
			f.Add(uint8(2), data)
		}
	}
	parsers := []func(*parser, []byte){parseTAR, parseGZIP, parseBZIP2}
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		fuzzParser(t, "tar", parsers[int(sel)%len(parsers)], data)
	})
}

// FuzzCFB runs the compound file (legacy and encrypted Office) parser.
func FuzzCFB(f *testing.F) {
	addSeeds(f, ".doc")
	f.Add(makeCFB("EncryptionInfo", "EncryptedPackage"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParser(t, "cfb", parseCFB, data) })
}
