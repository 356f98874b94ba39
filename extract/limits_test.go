package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestNewValidatesLimits(t *testing.T) {
	if _, err := New(Options{Limits: DefaultLimits()}); err != nil {
		t.Fatalf("default limits rejected: %v", err)
	}
	_, err := New(Options{})
	if err == nil {
		t.Fatal("zero limits accepted")
	}
	for _, field := range []string{"MaxObjectSize", "MaxDecompressedSize", "MaxCompressionRatio", "MaxDepth", "MaxChildren", "MaxTextSize", "Timeout"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	l := DefaultLimits()
	l.MaxCompressionRatio = math.NaN()
	if _, err := New(Options{Limits: l}); err == nil || !strings.Contains(err.Error(), "MaxCompressionRatio") {
		t.Errorf("NaN ratio: %v", err)
	}
	l = DefaultLimits()
	l.Timeout = -time.Second
	if _, err := New(Options{Limits: l}); err == nil || !strings.Contains(err.Error(), "Timeout") || strings.Contains(err.Error(), "MaxDepth") {
		t.Errorf("negative timeout: %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Format: "pdf", Op: "decrypt", Err: ErrEncrypted}
	if e.Error() != "pdf: decrypt: encrypted document" {
		t.Errorf("Error() = %q", e.Error())
	}
	if !errors.Is(e, ErrEncrypted) {
		t.Error("errors.Is does not see the sentinel")
	}
	if (&Error{Err: ErrMalformed}).Error() != "malformed content" {
		t.Error("empty format and op not elided")
	}
}

// nest wraps data in depth ZIPs, each holding the previous as "level-N".
func nest(t testing.TB, data []byte, depth int) []byte {
	for i := depth; i > 0; i-- {
		data = makeZip(t, zipFile{name: fmt.Sprintf("level-%d.zip", i), body: string(data)})
	}
	return data
}

// deflated returns the raw deflate stream of n zero bytes.
func deflatedZeros(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, 1<<16)
	for n > 0 {
		k := min(n, len(zeros))
		if _, err := w.Write(zeros[:k]); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lyingZip holds a member whose header declares 100 bytes but whose data
// inflates to n zeros.
func lyingZip(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	comp := deflatedZeros(t, n)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "small.txt", Method: zip.Deflate, CompressedSize64: uint64(len(comp)),
		UncompressedSize64: 100, CRC32: crc32.ChecksumIEEE(make([]byte, n))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(comp); err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Create("ok.txt"); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// find returns the first document in the tree satisfying ok.
func find(d *Document, ok func(*Document) bool) *Document {
	if ok(d) {
		return d
	}
	for _, c := range d.Children {
		if f := find(c, ok); f != nil {
			return f
		}
	}
	return nil
}

func count(d *Document) int {
	n := 1
	for _, c := range d.Children {
		n += count(c)
	}
	return n
}

func TestFamilyTree(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	docx := makeDOCX(t, "Supply Contract", "Counsel", "The supplier shall deliver the goods within ten days.")
	eml := makeEML("Contract for signature", "Please sign the attached contract.\n", attachment{name: "contract.docx", contentType: mediaDOCX, data: docx})
	z := makeZip(t, zipFile{name: "inbox/mail.eml", body: string(eml)}, zipFile{name: "inbox/readme.txt", body: "index of the mailbox"})
	d := extractBytes(t, x, "family.zip", "", z)
	checkDoc(t, d, want{media: mediaZIP, children: []string{"inbox/mail.eml", "inbox/readme.txt"}})
	if len(d.Children) != 2 {
		t.Fatalf("children: %d", len(d.Children))
	}
	mail := d.Children[0]
	checkDoc(t, mail, want{media: mediaEML, text: []string{"Please sign the attached contract."}, children: []string{"contract.docx"}})
	if strings.Join(mail.Path, "|") != "family.zip|inbox/mail.eml" || mail.Meta.Subject != "Contract for signature" {
		t.Errorf("mail path %q subject %q", mail.Path, mail.Meta.Subject)
	}
	if len(mail.Children) != 1 {
		t.Fatalf("mail children: %d", len(mail.Children))
	}
	c := mail.Children[0]
	checkDoc(t, c, want{media: mediaDOCX, title: "Supply Contract", text: []string{"The supplier shall deliver the goods within ten days."}})
	if strings.Join(c.Path, "|") != "family.zip|inbox/mail.eml|contract.docx" {
		t.Errorf("attachment path %q", c.Path)
	}
	if c.SHA256 == ([32]byte{}) || c.Size != int64(len(docx)) {
		t.Errorf("attachment hash/size not set: %d", c.Size)
	}
}

// TestBadInput feeds every format truncated, encrypted, malformed,
// oversized and mislabelled input: each gets a specific recorded error
// (or, where the damage is recoverable, the text), never a panic, and
// siblings are still extracted.
func TestBadInput(t *testing.T) {
	docx := makeDOCX(t, "T", "A", "Body text of the document that goes on for a while.")
	pdf := makePDF(t, pdfSpec{pages: [][]string{{"First page text"}, {"Second page text"}}, compress: true})
	eml := makeEML("s", "mail body text\n", attachment{name: "a.txt", contentType: "text/plain", data: bytes.Repeat([]byte("attachment "), 50)})
	tgz := gzipBytes(t, "", bytes.Repeat([]byte("compressible line of text\n"), 200))
	tarData := makeTar(t, tarFile{name: "one.txt", body: strings.Repeat("x", 600)}, tarFile{name: "two.txt", body: strings.Repeat("y", 2000)})
	realPDF, err := os.ReadFile(filepath.Join(corpusDir, "raw/debian-refcard/usr/share/doc/debian-refcard/refcard-en-a4.pdf"))
	if err != nil {
		t.Fatalf("corpus PDF: %v", err)
	}
	small := DefaultLimits()
	small.MaxDecompressedSize = 4 << 20

	tests := []struct {
		name   string
		file   string
		ct     string
		data   []byte
		limits func(*Limits)
		want   want
	}{
		// Truncated.
		{name: "truncated pdf", file: "t.pdf", data: pdf[:len(pdf)*6/10], want: want{media: mediaPDF, err: ErrMalformed}},
		{name: "truncated docx", file: "t.docx", data: docx[:len(docx)/2], want: want{media: mediaZIP, err: ErrMalformed}},
		{name: "truncated zip", file: "t.zip", data: makeZip(t, zipFile{name: "a.txt", body: "aaa"})[:30], want: want{err: ErrMalformed}},
		{name: "truncated tar", file: "t.tar", data: tarData[:1800], want: want{media: mediaTAR, err: ErrMalformed, check: func(t *testing.T, d *Document) {
			if len(d.Children) == 0 || d.Children[0].Text != strings.Repeat("x", 600) {
				t.Errorf("first member lost")
			}
		}}},
		{name: "truncated gzip", file: "t.txt.gz", data: tgz[:len(tgz)/2], want: want{media: mediaGZIP, err: ErrMalformed}},
		{name: "truncated rtf", file: "t.rtf", data: []byte(rtfSample[:len(rtfSample)*3/4]), want: want{media: mediaRTF, err: ErrMalformed, text: []string{"This Agreement is made"}}},
		{name: "truncated eml", file: "t.eml", data: eml[:len(eml)-40], want: want{media: mediaEML, err: ErrMalformed, text: []string{"mail body text"}}},
		// Encrypted.
		{name: "encrypted pdf rc4", file: "e.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"secret"}}, encrypt: "rc4", userPassword: "open sesame"}),
			want: want{media: mediaPDF, err: ErrEncrypted, notText: []string{"secret"}, extra: map[string]string{"encrypted": "true"}}},
		{name: "encrypted pdf aes256", file: "e.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"secret"}}, encrypt: "aes256", userPassword: "open sesame"}),
			want: want{media: mediaPDF, err: ErrEncrypted, extra: map[string]string{"encrypted": "true"}}},
		{name: "encrypted ooxml", file: "locked.docx", data: makeCFB("EncryptionInfo", "EncryptedPackage", "\x06DataSpaces"), want: want{media: mediaDOCX, err: ErrEncrypted, extra: map[string]string{"encrypted": "true"}}},
		{name: "legacy doc, damaged directory", file: "old.doc", data: makeCFB("WordDocument", "\x01CompObj"), want: want{media: "application/msword", err: ErrMalformed}},
		{name: "encrypted odt", file: "locked.odt", data: makeODF(t, mediaODT, "", true), want: want{media: mediaODT, err: ErrEncrypted, title: "Notes on the Engine"}},
		{name: "encrypted zip member", file: "z.zip", data: makeZip(t, zipFile{name: "locked.txt", body: "ciphertext", flags: 1}, zipFile{name: "open.txt", body: "plain sibling"}),
			want: want{media: mediaZIP, children: []string{"locked.txt", "open.txt"}, check: func(t *testing.T, d *Document) {
				if !errors.Is(d.Children[0].Err, ErrEncrypted) || d.Children[0].SHA256 == ([32]byte{}) || d.Children[1].Text != "plain sibling" {
					t.Errorf("members: %v / %q", d.Children[0].Err, d.Children[1].Text)
				}
			}}},
		// Malformed.
		{name: "malformed pdf", file: "m.pdf", data: []byte("%PDF-1.4\nthis is not a PDF at all\n%%EOF\n"), want: want{media: mediaPDF, err: ErrMalformed}},
		{name: "malformed docx xml", file: "m.docx", data: makeZip(t, zipFile{name: "[Content_Types].xml", body: contentTypesXML}, zipFile{name: "word/document.xml", body: `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>kept text</w:t></w:r></w:p><w:p><w:t>broken</w:r></w:body>`}),
			want: want{media: mediaDOCX, err: ErrMalformed, text: []string{"kept text"}}},
		{name: "multipart without boundary", file: "m.eml", data: []byte("From: a@example.com\r\nSubject: x\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\nContent-Type: multipart/mixed\r\n\r\nbody\r\n"), want: want{media: mediaEML, err: ErrMalformed}},
		{name: "png", file: "photo.txt", data: append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 100)...), want: want{media: "image/png", err: ErrUnsupported}},
		{name: "elf", file: "tool", data: append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 100)...), want: want{media: "application/x-elf", err: ErrUnsupported}},
		{name: "binary", file: "blob.txt", data: []byte{0x01, 0x02, 0x00, 0xff, 0x10, 0x00, 0x00, 0x05, 0x06, 0x07}, want: want{media: mediaBinary, err: ErrUnsupported}},
		// Wrong extensions.
		{name: "pdf named txt", file: "notes.txt", data: pdf, want: want{media: mediaPDF, text: []string{"First page text", "Second page text"}}},
		{name: "docx named pdf", file: "scan.pdf", data: docx, want: want{media: mediaDOCX, text: []string{"Body text of the document"}}},
		{name: "real pdf named docx", file: "refcard.docx", ct: mediaDOCX, data: realPDF, want: want{media: mediaPDF, text: []string{"Debian", "Reference"}}},
		// Bombs.
		{name: "zip bomb", file: "bomb.zip", data: makeZip(t, zipFile{name: "zeros.txt", body: string(make([]byte, 8<<20))}, zipFile{name: "fine.txt", body: "sibling survives"}),
			want: want{media: mediaZIP, children: []string{"zeros.txt", "fine.txt"}, check: func(t *testing.T, d *Document) {
				if !errors.Is(d.Children[0].Err, ErrBomb) || d.Children[1].Text != "sibling survives" {
					t.Errorf("members: %v / %q", d.Children[0].Err, d.Children[1].Text)
				}
			}}},
		{name: "zip with lying sizes", file: "liar.zip", data: lyingZip(t, 8<<20), want: want{media: mediaZIP, children: []string{"small.txt", "ok.txt"}, check: func(t *testing.T, d *Document) {
			if c := d.Children[0]; c.Err == nil || (!errors.Is(c.Err, ErrBomb) && !errors.Is(c.Err, ErrMalformed)) || len(c.Text) > 0 {
				t.Errorf("lying member: %v (%d bytes of text)", c.Err, len(c.Text))
			}
		}}},
		{name: "gzip bomb", file: "bomb.gz", data: gzipBytes(t, "zeros", make([]byte, 8<<20)), want: want{media: mediaGZIP, err: ErrBomb}},
		{name: "pdf stream bomb", file: "bomb.pdf", data: makePDF(t, pdfSpec{pages: [][]string{{"Page one", strings.Repeat(" ", 8<<20)}}, compress: true}), want: want{media: mediaPDF, err: ErrBomb}},
		{name: "nested zip budget", file: "nested.zip", limits: func(l *Limits) { *l = small },
			data: func() []byte {
				leaf := makeZip(t, zipFile{name: "text.txt", body: randomText(1500 << 10)})
				mid := makeZip(t, zipFile{name: "a.zip", body: string(leaf)}, zipFile{name: "b.zip", body: string(leaf)}, zipFile{name: "c.zip", body: string(leaf)}, zipFile{name: "d.zip", body: string(leaf)})
				return makeZip(t, zipFile{name: "mid.zip", body: string(mid)})
			}(),
			want: want{media: mediaZIP, check: func(t *testing.T, d *Document) {
				if find(d, func(d *Document) bool { return errors.Is(d.Err, ErrBomb) }) == nil {
					t.Errorf("no document reports the exhausted budget")
				}
				if find(d, func(d *Document) bool { return d.Name == "text.txt" && d.Err == nil }) == nil {
					t.Errorf("no leaf extracted within the budget")
				}
			}}},
		// Nesting and counts.
		{name: "deeply nested zips", file: "deep.zip", data: nest(t, []byte("the bottom text"), 12), want: want{media: mediaZIP, check: func(t *testing.T, d *Document) {
			deep := find(d, func(d *Document) bool { return errors.Is(d.Err, ErrTooDeep) })
			if deep == nil || len(deep.Path) != 9 || len(deep.Children) != 0 {
				t.Fatalf("ErrTooDeep not recorded at depth 8: %v", deep)
			}
			if find(d, func(d *Document) bool { return strings.Contains(d.Text, "bottom") }) != nil {
				t.Errorf("text below MaxDepth extracted")
			}
		}}},
		{name: "too many members", file: "many.zip", limits: func(l *Limits) { l.MaxChildren = 10 },
			data: func() []byte {
				var fs []zipFile
				for i := range 30 {
					fs = append(fs, zipFile{name: fmt.Sprintf("f%02d.txt", i), body: "member"})
				}
				return makeZip(t, fs...)
			}(), want: want{media: mediaZIP, err: ErrTooManyChildren, check: func(t *testing.T, d *Document) {
				if len(d.Children) != 10 {
					t.Errorf("%d children, want 10", len(d.Children))
				}
			}}},
		{name: "object too large", file: "big.txt", limits: func(l *Limits) { l.MaxObjectSize = 100 }, data: bytes.Repeat([]byte("a"), 1000),
			want: want{err: ErrTooLarge, extra: map[string]string{"truncated": "true"}, check: func(t *testing.T, d *Document) {
				if d.Size != 100 {
					t.Errorf("size %d", d.Size)
				}
			}}},
		{name: "text too large", file: "long.txt", limits: func(l *Limits) { l.MaxTextSize = 10 }, data: []byte("ééééééééééééé"),
			want: want{err: ErrTooLarge, check: func(t *testing.T, d *Document) {
				if d.Text != "ééééé" {
					t.Errorf("text %q, want 10 bytes cut at a rune boundary", d.Text)
				}
			}}},
		{name: "text too large in docx", file: "long.docx", limits: func(l *Limits) { l.MaxTextSize = 20 }, data: docx, want: want{media: mediaDOCX, err: ErrTooLarge, text: []string{"Body text of the doc"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := DefaultLimits()
			if tc.limits != nil {
				tc.limits(&lim)
			}
			x := newTestExtractor(t, lim)
			d := extractBytes(t, x, tc.file, tc.ct, tc.data)
			checkDoc(t, d, tc.want)
		})
	}
}

// randomText returns n bytes of words in a fixed pseudo-random order: text
// that compresses like prose (about 3:1).
func randomText(n int) string {
	words := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their")
	var b strings.Builder
	x := uint32(2463534242)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteString(words[x%uint32(len(words))])
		if x%11 == 0 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}

func TestTimeout(t *testing.T) {
	var b bytes.Buffer
	for i := range 100000 {
		fmt.Fprintf(&b, "From a@example.com Mon Jan  1 00:00:00 2024\nFrom: a@example.com\nSubject: m%d\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nbody %d\n\n", i, i)
	}
	// A loaded machine (CI runs with -race beside other packages) may not
	// get past reading the object in the first timeout; a longer one must
	// then show the partial work. Every attempt must time out, and soon.
	partial := false
	for _, timeout := range []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second} {
		lim := DefaultLimits()
		lim.Timeout = timeout
		lim.MaxChildren = 1 << 20
		x := newTestExtractor(t, lim)
		start := time.Now()
		d := extractBytes(t, x, "huge.mbox", "", b.Bytes())
		if !errors.Is(d.Err, ErrTimeout) {
			t.Fatalf("timeout %v: error %v, want ErrTimeout", timeout, d.Err)
		}
		if el := time.Since(start); el > timeout+5*time.Second {
			t.Errorf("took %v after a %v timeout", el, timeout)
		}
		if len(d.Children) >= 100000 {
			t.Fatalf("timeout %v: all %d children extracted, yet a timeout reported", timeout, len(d.Children))
		}
		if len(d.Children) > 0 {
			partial = true
			break
		}
	}
	if !partial {
		t.Errorf("no attempt kept the partial work")
	}
}

func TestCancelled(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := x.Extract(ctx, Object{Name: "a.txt", Reader: strings.NewReader("text")})
	if d != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, %v", d, err)
	}
}

func TestReadErrors(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d, err := x.Extract(context.Background(), Object{Name: "nil"})
	if d == nil || !errors.Is(err, ErrMalformed) || d.Err != err { //nolint:errorlint // the very value returned
		t.Errorf("nil reader: %v, %v", d, err)
	}
	boom := errors.New("disk on fire")
	d, err = x.Extract(context.Background(), Object{Name: "r.txt", Reader: iotest.DataErrReader(iotest.ErrReader(boom))})
	if d == nil || !errors.Is(err, boom) {
		t.Errorf("reader error: %v, %v", d, err)
	}
}

func TestPanicBecomesMalformed(t *testing.T) {
	j := newJob(context.Background(), DefaultLimits())
	d := &Document{Name: "x"}
	p := &parser{j: j, d: d, format: "test", text: textBuf{max: 100}}
	p.run(kind{format: "test", parse: func(p *parser, _ []byte) {
		p.text.addString("partial ")
		panic("a parser bug")
	}}, nil)
	if !errors.Is(d.Err, ErrMalformed) || d.Text != "partial " {
		t.Errorf("err %v text %q", d.Err, d.Text)
	}
}
