package extract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// want is what a fixture must extract to.
type want struct {
	media    string
	text     []string // substrings, in this order
	notText  []string
	title    string
	author   string
	extra    map[string]string
	children []string // child names, in order (nil: no check)
	err      error    // sentinel the document's Err must wrap (nil: none)
	check    func(t *testing.T, d *Document)
}

func extractBytes(t testing.TB, x *Extractor, name, ct string, data []byte) *Document {
	t.Helper()
	d, err := x.Extract(context.Background(), Object{Name: name, ContentType: ct, Reader: bytes.NewReader(data)})
	if d == nil {
		t.Fatalf("Extract(%s) returned no document (err %v)", name, err)
		return nil
	}
	if !errors.Is(err, d.Err) || (err == nil) != (d.Err == nil) {
		t.Fatalf("Extract(%s) returned error %v, document error %v", name, err, d.Err)
	}
	return d
}

func checkDoc(t *testing.T, d *Document, w want) {
	t.Helper()
	if w.media != "" && d.MediaType != w.media {
		t.Errorf("media type %q, want %q", d.MediaType, w.media)
	}
	switch {
	case w.err == nil && d.Err != nil:
		t.Errorf("unexpected error: %v", d.Err)
	case w.err != nil && !errors.Is(d.Err, w.err):
		t.Errorf("error %v, want %v", d.Err, w.err)
	}
	if d.Err != nil {
		var xe *Error
		if !errors.As(d.Err, &xe) {
			t.Errorf("error %T is not a *Error", d.Err)
		}
	}
	rest := d.Text
	for _, s := range w.text {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Errorf("text lacks %q (in order) in:\n%s", s, d.Text)
			break
		}
		rest = rest[i+len(s):]
	}
	for _, s := range w.notText {
		if strings.Contains(d.Text, s) {
			t.Errorf("text contains %q:\n%s", s, d.Text)
		}
	}
	if w.title != "" && d.Meta.Title != w.title {
		t.Errorf("title %q, want %q", d.Meta.Title, w.title)
	}
	if w.author != "" && d.Meta.Author != w.author {
		t.Errorf("author %q, want %q", d.Meta.Author, w.author)
	}
	for k, v := range w.extra {
		if d.Meta.Extra[k] != v {
			t.Errorf("extra %q = %q, want %q", k, d.Meta.Extra[k], v)
		}
	}
	if w.children != nil {
		var names []string
		for _, c := range d.Children {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, w.children) {
			t.Errorf("children %q, want %q", names, w.children)
		}
	}
	if w.check != nil {
		w.check(t, d)
	}
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func sameTime(t *testing.T, what string, got time.Time, want string) {
	t.Helper()
	if !got.Equal(date(want)) {
		t.Errorf("%s %v, want %s", what, got, want)
	}
}

const rtfSample = `{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman\fcharset0 Times New Roman;}{\f1\fswiss\fcharset204 Arial;}}
{\colortbl;\red0\green0\blue0;}{\stylesheet{\s0 Normal;}}
{\info{\title Service Agreement}{\author Jane Counsel}{\creatim\yr2021\mo3\dy4\hr5\min6}{\revtim\yr2022\mo7\dy8}}
{\*\generator Riched20 10.0;}\viewkind4\uc1
\pard\f0\fs24 This Agreement is made between ACME \'e9l\'e8ve and {\b Beta Ltd}.\par
Fees are due in \u8364?100 within thirty days.\tab Net.\par
{\pict\wmetafile8\picw100 0123456789abcdef}
{\field{\*\fldinst HYPERLINK "http://example.com"}{\fldrslt Click here}}\par
\f1 \'cf\'f0\'e8\'e2\'e5\'f2\f0  world\line Done\{braces\}\par
}`

func TestFormats(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	latin1, _ := charmap.ISO8859_1.NewEncoder().String("Le café était très agréable, à côté de la forêt. Où êtes-vous allés hier soir ? Déjà vu.")
	sjis, _ := japanese.ShiftJIS.NewEncoder().String("これは日本語のテキストです。文字コードの検出を確認します。東京都の天気は晴れです。今日はとても良い日ですね。")
	utf16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("Hello UTF-16 world: Grüße")
	utf16noBOM, _ := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder().String("Big endian text without a byte order mark.")
	html1252, _ := charmap.Windows1252.NewEncoder().String(`<!DOCTYPE html><html><head><meta charset="windows-1252"><title>Price  list</title>
<meta name="author" content="Shop Owner"><style>body{color:red}</style><script>var hidden = "secret";</script></head>
<body><h1>Prices &amp; terms</h1><p>Coffee costs 3&nbsp;€ — “fair”.</p><ul><li>one</li><li>two</li></ul>
<pre>  keep   spacing  </pre><noscript>enable js</noscript><table><tr><td>a</td><td>b</td></tr></table></body></html>`)
	bz2, err := os.ReadFile("testdata/hello.txt.bz2")
	if err != nil {
		t.Fatal(err)
	}
	docx := makeDOCX(t, "Master Services Agreement", "Legal Dept", "This Agreement is entered into by the parties.", "Payment\tterms: net 30 days, überweisung.")
	tests := []struct {
		name, file, ct string
		data           []byte
		want           want
	}{
		{name: "empty", file: "empty.txt", data: nil, want: want{media: mediaText}},
		{name: "utf8 text", file: "a.txt", data: []byte("Plain UTF-8 text: naïve café 東京\n"), want: want{media: mediaText, text: []string{"naïve café 東京"}, extra: map[string]string{"charset": "utf-8"}}},
		{name: "latin1 text", file: "b.txt", data: []byte(latin1), want: want{media: mediaText, text: []string{"Le café était très agréable", "Déjà vu."}}},
		{name: "shift_jis text", file: "c.txt", data: []byte(sjis), want: want{media: mediaText, text: []string{"日本語のテキスト"}, extra: map[string]string{"charset": "shift_jis"}}},
		{name: "utf16 bom", file: "d.txt", data: []byte(utf16le), want: want{media: mediaText, text: []string{"Hello UTF-16 world: Grüße"}, notText: []string{"\ufeff"}}},
		{name: "utf16 no bom", file: "e", data: []byte(utf16noBOM), want: want{media: mediaText, text: []string{"Big endian text without a byte order mark."}}},
		{name: "declared charset", file: "f.txt", ct: "text/plain; charset=koi8-r", data: []byte{0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4}, want: want{text: []string{"Привет"}}},
		{name: "html", file: "page.html", data: []byte(html1252), want: want{media: mediaHTML, title: "Price list", author: "Shop Owner",
			text:    []string{"Prices & terms", "Coffee costs 3\u00a0€ — “fair”.", "one\ntwo", "  keep   spacing\n", "a b"},
			notText: []string{"color:red", "secret", "enable js", "Price  list"}, extra: map[string]string{"charset": "windows-1252"}}},
		{name: "xhtml", file: "page.xhtml", data: []byte(`<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head><body><p>Extensible &lt;markup&gt;</p></body></html>`),
			want: want{media: mediaXHTML, title: "X", text: []string{"Extensible <markup>"}}},
		{name: "html fragment named txt", file: "x.txt", data: []byte("<div>hello <b>there</b></div>"), want: want{media: mediaHTML, text: []string{"hello there"}}},
		{name: "markdown", file: "README.md", data: []byte("# Project *Title* #\n\nSome **bold** and _em_ text with [a link](http://example.com) and `code` and snake_case.\n\n- item one\n> quoted\n\n```go\nfmt.Println(1)\n```\n[ref]: http://example.com\n"),
			want: want{media: mediaMarkdown, title: "Project Title", text: []string{"Project Title\n", "Some bold and em text with a link and code and snake_case.", "item one", "quoted", "fmt.Println(1)"}, notText: []string{"http://example.com", "**", "```"}}},
		{name: "csv", file: "data.csv", data: []byte("name,amount,note\n\"Smith, J\",100,\"said \"\"hi\"\"\"\nDoe,200,\n"),
			want: want{media: mediaCSV, text: []string{"name amount note\n", "Smith, J 100 said \"hi\"\n", "Doe 200"}, extra: map[string]string{"records": "3"}}},
		{name: "csv semicolon", file: "data.csv", data: []byte("a;b;c\n1;2;3\n"), want: want{media: mediaCSV, text: []string{"a b c\n1 2 3"}}},
		{name: "tsv", file: "data.tsv", data: []byte("a\tb\n1\t2\n"), want: want{media: mediaTSV, text: []string{"a b\n1 2"}}},
		{name: "xml", file: "data.xml", data: []byte(`<?xml version="1.0"?><root><item>First item</item><item>Second <b>item</b></item></root>`), want: want{media: mediaXML, text: []string{"First item\n", "Second item"}}},
		{name: "pdf", file: "doc.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"Hello PDF world", "TJ:Kerned words appear separated", "CID:"}, {"Second page (with parens)", "Caf\u00e9 cr\u00e8me"}}, title: "Contract Ünïcode", author: "Jane Doe", cidFont: true}),
			want: want{media: mediaPDF, title: "Contract Ünïcode", author: "Jane Doe", extra: map[string]string{"pages": "2", "producer": "simdex test"},
				text: []string{"Hello PDF world\n", "Kerned words appear separated\n", "日本ABCDßfi", "Second page (with parens)", "Café crème"},
				check: func(t *testing.T, d *Document) {
					sameTime(t, "created", d.Meta.Created, "2024-01-02T03:04:05+01:00")
					sameTime(t, "modified", d.Meta.Modified, "2024-02-03T00:00:00Z")
				}}},
		{name: "pdf compressed", file: "doc.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"Compressed content stream"}}, compress: true}), want: want{media: mediaPDF, text: []string{"Compressed content stream"}}},
		{name: "pdf owner password rc4", file: "doc.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"Owner protected text"}}, title: "Secret title", compress: true, encrypt: "rc4"}),
			want: want{media: mediaPDF, title: "Secret title", text: []string{"Owner protected text"}, extra: map[string]string{"encrypted": "true"}}},
		{name: "pdf owner password aes256", file: "doc.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"AES protected text"}}, author: "Crypto Author", compress: true, encrypt: "aes256"}),
			want: want{media: mediaPDF, author: "Crypto Author", text: []string{"AES protected text"}, extra: map[string]string{"encrypted": "true"}}},
		{name: "pdf damaged xref", file: "doc.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"Recovered by scanning"}}, xrefOffsetBug: true}), want: want{media: mediaPDF, text: []string{"Recovered by scanning"}}},
		{name: "docx", file: "contract.docx", data: docx,
			want: want{media: mediaDOCX, title: "Master Services Agreement", author: "Legal Dept", extra: map[string]string{"pages": "3", "last modified by": "Editor"},
				text:    []string{"This Agreement is entered into by the parties.\n", "Payment\tterms: net 30 days, überweisung.\n", "Text box\n", "Confidential footer"},
				notText: []string{"deleted words", "Text box\nText box"},
				check: func(t *testing.T, d *Document) {
					sameTime(t, "created", d.Meta.Created, "2024-01-02T03:04:05Z")
					sameTime(t, "modified", d.Meta.Modified, "2024-02-03T04:05:06Z")
				}}},
		{name: "xlsx", file: "budget.xlsx", data: makeXLSX(t, map[string][][]string{
			"Summary": {{"s:Region", "s:Total"}, {"s:North", "n:1250.5"}},
			"Detail":  {{"Inline cell", "s:North"}},
		}, []string{"Summary", "Detail"}), want: want{media: mediaXLSX, title: "Budget", extra: map[string]string{"sheet names": "Summary, Detail", "sheets": "2"},
			text: []string{"Region\tTotal\n", "North\t1250.5\n", "Inline cell\tNorth"}, notText: []string{"PHONETIC", "SUM("}}},
		{name: "pptx", file: "deck.pptx", data: makePPTX(t, "Agenda\nWelcome everyone", "Results\nRevenue grew", "Questions"),
			want: want{media: mediaPPTX, title: "Quarterly Review", extra: map[string]string{"slides": "3"}, text: []string{"Agenda\nWelcome everyone\n", "Results\nRevenue grew\n", "Questions"}}},
		{name: "odt", file: "notes.odt", data: makeODF(t, mediaODT, `<office:text><text:sequence-decls><text:sequence-decl text:name="Figure"/></text:sequence-decls><text:h text:outline-level="1">Analytical Engine</text:h><text:p>It weaves<text:s text:c="3"/>algebraic<text:tab/>patterns<text:line-break/>like a loom.</text:p><text:p>Note<office:annotation><text:p>a reviewer comment</text:p></office:annotation> done.</text:p><text:tracked-changes><text:changed-region><text:deletion><text:p>removed text</text:p></text:deletion></text:changed-region></text:tracked-changes></office:text>`, false),
			want: want{media: mediaODT, title: "Notes on the Engine", author: "Ada Lovelace", extra: map[string]string{"pages": "2", "last modified by": "Charles Babbage"},
				text: []string{"Analytical Engine\n", "It weaves   algebraic\tpatterns\nlike a loom.\n", "Note done."}, notText: []string{"reviewer comment", "removed text", "ignored style", "Figure"},
				check: func(t *testing.T, d *Document) {
					sameTime(t, "created", d.Meta.Created, "2023-05-06T07:08:09Z")
					sameTime(t, "modified", d.Meta.Modified, "2023-06-07T08:09:10.123Z")
				}}},
		{name: "ods", file: "sheet.ods", data: makeODF(t, mediaODS, `<office:spreadsheet><table:table table:name="Costs"><table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Cost</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>Paper</text:p></table:table-cell><table:table-cell office:value="12"><text:p>12</text:p></table:table-cell></table:table-row></table:table><table:table table:name="Other"/></office:spreadsheet>`, false),
			want: want{media: mediaODS, extra: map[string]string{"sheet names": "Costs, Other"}, text: []string{"Item", "Cost", "Paper", "12"}}},
		{name: "odp", file: "slides.odp", data: makeODF(t, mediaODP, `<office:presentation><draw:page draw:name="one"><draw:frame><draw:text-box><text:p>First slide title</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>speaker notes</text:p></draw:text-box></draw:frame></presentation:notes></draw:page><draw:page draw:name="two"><draw:frame><draw:text-box><text:p>Second slide</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`, false),
			want: want{media: mediaODP, extra: map[string]string{"slides": "2"}, text: []string{"First slide title\n", "Second slide"}, notText: []string{"speaker notes"}}},
		{name: "epub", file: "book.epub", data: makeEPUB(t), want: want{media: mediaEPUB, title: "A Small Book", author: "Jane Writer", text: []string{"First in reading order.", "Second in reading order."}}},
		{name: "rtf", file: "agreement.rtf", data: []byte(rtfSample), want: want{media: mediaRTF, title: "Service Agreement", author: "Jane Counsel",
			text:    []string{"This Agreement is made between ACME élève and Beta Ltd.\n", "Fees are due in €100 within thirty days.\tNet.\n", "Click here\n", "Привет world\nDone{braces}"},
			notText: []string{"Times New Roman", "Normal", "Riched20", "0123456789abcdef", "HYPERLINK", "red0"},
			check: func(t *testing.T, d *Document) {
				sameTime(t, "created", d.Meta.Created, "2021-03-04T05:06:00Z")
				sameTime(t, "modified", d.Meta.Modified, "2022-07-08T00:00:00Z")
			}}},
		{name: "eml", file: "msg.eml", data: makeEML("=?ISO-8859-1?Q?R=E9sum=E9_of_the_deal?=", "Bonjour Bob,\nthe déjà-vu contract is attached.\n",
			attachment{name: "notes.txt", contentType: "text/plain", data: []byte("Attached notes text")},
			attachment{name: "contract.docx", contentType: mediaDOCX, data: docx},
			attachment{name: "fwd.eml", contentType: "message/rfc822", data: simpleEML("eve@example.com", "Earlier thread", "The earlier message body")},
		), want: want{media: mediaEML, text: []string{"Bonjour Bob,\nthe déjà-vu contract is attached."}, notText: []string{"HTML alternative", "This is a multi-part"},
			children: []string{"notes.txt", "contract.docx", "fwd.eml"},
			check: func(t *testing.T, d *Document) {
				m := d.Meta
				if m.From != "Alice Müller <alice@example.com>" || !slices.Equal(m.To, []string{"Bob <bob@example.org>", "carol@example.net"}) ||
					!slices.Equal(m.Cc, []string{"Dave, Jr. <dave@example.org>"}) || m.Subject != "Résumé of the deal" ||
					m.MessageID != "<msg-1@example.com>" || m.InReplyTo != "<msg-0@example.com>" {
					t.Errorf("headers: %+v", m)
				}
				sameTime(t, "date", m.Date, "2024-01-02T10:00:00+01:00")
				if c := d.Children; len(c) == 3 {
					if c[0].Text != "Attached notes text" || c[1].MediaType != mediaDOCX || !strings.Contains(c[1].Text, "net 30 days") ||
						c[2].MediaType != mediaEML || c[2].Meta.Subject != "Earlier thread" || !strings.Contains(c[2].Text, "earlier message body") {
						t.Errorf("children: %q %q %q", c[0].Text, c[1].MediaType, c[2].Meta.Subject)
					}
					if want := []string{"msg.eml", "contract.docx"}; !slices.Equal(c[1].Path, want) {
						t.Errorf("attachment path %q, want %q", c[1].Path, want)
					}
				}
			}}},
		{name: "eml html only", file: "h.eml", data: []byte("From: a@example.com\r\nSubject: html\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64([]byte("<html><head><title>t</title></head><body><p>Only <b>HTML</b> body</p><script>x()</script></body></html>"))),
			want: want{media: mediaEML, text: []string{"Only HTML body"}, notText: []string{"x()"}}},
		{name: "mbox", file: "archive.mbox", data: []byte("From alice@example.com Mon Jan  1 00:00:00 2024\n" + string(simpleEML("alice@example.com", "first", "Body one\n>From the start, escaped.")) +
			"\nFrom bob@example.com Tue Jan  2 00:00:00 2024\n" + string(simpleEML("bob@example.com", "second", "Body two")) +
			"\nFrom carol@example.com Wed Jan  3 00:00:00 2024\n" + string(simpleEML("carol@example.com", "third", "Body three"))),
			want: want{media: mediaMBOX, children: []string{"message 1", "message 2", "message 3"}, extra: map[string]string{"messages": "3"},
				check: func(t *testing.T, d *Document) {
					if len(d.Children) == 3 && (d.Children[0].Meta.Subject != "first" || !strings.Contains(d.Children[0].Text, "\nFrom the start, escaped.") || d.Children[2].Text != "third\n\nBody three\n") {
						t.Errorf("messages: %q / %q", d.Children[0].Text, d.Children[2].Text)
					}
				}}},
		{name: "zip", file: "bundle.zip", data: makeZip(t, zipFile{name: "dir/"}, zipFile{name: "dir/a.txt", body: "alpha text"}, zipFile{name: "../../escape.txt", body: "no escape"}, zipFile{name: `win\path.txt`, body: "windows"}, zipFile{name: "stored.txt", body: "stored member", store: true}),
			want: want{media: mediaZIP, children: []string{"dir/a.txt", "escape.txt", "win/path.txt", "stored.txt"},
				check: func(t *testing.T, d *Document) {
					if len(d.Children) == 4 && (d.Children[0].Text != "alpha text" || d.Children[3].Text != "stored member") {
						t.Errorf("member texts %q %q", d.Children[0].Text, d.Children[3].Text)
					}
				}}},
		{name: "tar", file: "bundle.tar", data: makeTar(t, tarFile{name: "docs/", typ: '5'}, tarFile{name: "docs/readme.txt", body: "tar member text"}, tarFile{name: "link", typ: '2'}, tarFile{name: "docs/page.html", body: "<html><body><p>tar html</p></body></html>"}),
			want: want{media: mediaTAR, children: []string{"docs/readme.txt", "docs/page.html"}}},
		{name: "tar.gz", file: "bundle.tar.gz", data: gzipBytes(t, "bundle.tar", makeTar(t, tarFile{name: "a.txt", body: "first"}, tarFile{name: "b.txt", body: "second"})),
			want: want{media: mediaGZIP, children: []string{"a.txt", "b.txt"}, extra: map[string]string{"archive": "tar"}}},
		{name: "gz", file: "notes.txt.gz", data: gzipBytes(t, "", []byte("gzipped plain text")),
			want: want{media: mediaGZIP, children: []string{"notes.txt"}, check: func(t *testing.T, d *Document) {
				if len(d.Children) == 1 && d.Children[0].Text != "gzipped plain text" {
					t.Errorf("gz content %q", d.Children[0].Text)
				}
			}}},
		{name: "bz2", file: "hello.txt.bz2", data: bz2, want: want{media: mediaBZIP2, children: []string{"hello.txt"}, check: func(t *testing.T, d *Document) {
			if len(d.Children) == 1 && !strings.Contains(d.Children[0].Text, "Hello from bzip2") {
				t.Errorf("bz2 content %q", d.Children[0].Text)
			}
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := extractBytes(t, x, tc.file, tc.ct, tc.data)
			checkDoc(t, d, tc.want)
			if d.Size != int64(len(tc.data)) {
				t.Errorf("size %d, want %d", d.Size, len(tc.data))
			}
			if !slices.Equal(d.Path, []string{tc.file}) {
				t.Errorf("path %q", d.Path)
			}
		})
	}
}
