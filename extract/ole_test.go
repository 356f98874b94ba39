package extract

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// packagerStream packages a file as the Object Packager writes it: the
// leading size, the label, the source path, the temporary path with its
// length, the contents claimed as size bytes, and the Unicode copies of
// the paths after them.
func packagerStream(label string, data []byte, size uint32) []byte {
	var b []byte
	b = append(b, 2, 0)
	b = append(b, label+"\x00"+`C:\Docs\`+label+"\x00"...)
	b = append(b, 0, 0, 3, 0)
	temp := `C:\WINDOWS\TEMP\` + label + "\x00"
	b = binary.LittleEndian.AppendUint32(b, uint32(len(temp)))
	b = append(b, temp...)
	b = binary.LittleEndian.AppendUint32(b, size)
	b = append(b, data...)
	u := utf16.Encode([]rune(temp))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(u)))
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// TestOle10NativeVariants checks the packaged-object reader on the
// layouts writers produce and on damage: a package claiming more than
// its stream (4 GB included) is ErrMalformed, never allocated.
func TestOle10NativeVariants(t *testing.T) {
	full := packagerStream("notes.txt", []byte("packaged notes"), 14)
	noTempLen := []byte("\x02\x00a.txt\x00C:\\a.txt\x00\x00\x00\x03\x00C:\\TEMP\\a.txt\x00\x05\x00\x00\x00hello")
	link := []byte("\x00\x00\x00\x00\x02\x00b.txt\x00\\\\srv\\b.txt\x00\x00\x00\x01\x00")
	for _, c := range []struct {
		name       string
		in         []byte
		file, data string
		link       bool
		err        error
	}{
		{"packager", full, "notes.txt", "packaged notes", false, nil},
		{"word writer", ole10NativeStream("w.txt", []byte("w")), "w.txt", "w", false, nil},
		{"no size, no temp length", noTempLen, "a.txt", "hello", false, nil},
		{"link", link, "b.txt", "", true, nil},
		{"truncated", full[:len(full)-64], "notes.txt", "", false, ErrMalformed},
		{"claims 4 GB", packagerStream("big.bin", []byte("x"), 0xFFFFFFFF), "big.bin", "", false, ErrMalformed},
		{"header only", []byte{9, 0, 0, 0, 2, 0, 'a'}, "", "", false, ErrMalformed},
		{"empty", nil, "", "", false, ErrMalformed},
	} {
		o, err := ole10Native(c.in)
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
		if o.name() != c.file || string(o.data) != c.data || o.link != c.link {
			t.Errorf("%s: %q %q link=%v", c.name, o.name(), o.data, o.link)
		}
	}
}

// embeddedPoolDOC is a Word document whose ObjectPool holds a packaged
// text file, an Excel workbook, a truncated package, a package claiming
// 4 GB, objects of an unknown kind (by CompObj, by CLSID), a Word-class
// storage without a document and an embedded Word document.
func embeddedPoolDOC(t testing.TB) []byte {
	wd, tbl := docStreams(t, "Parent text stays.\r", true)
	iwd, itbl := docStreams(t, "Inner Word text.\r", true)
	full := packagerStream("notes.txt", []byte("packaged notes"), 14)
	pool := &cfbNode{name: "ObjectPool", kids: []*cfbNode{
		{name: "_1", kids: []*cfbNode{{name: "\x01Ole10Native", data: full}}},
		{name: "_2", kids: []*cfbNode{{name: "Workbook", data: makeWorkbook(false)}}},
		{name: "_3", kids: []*cfbNode{{name: "\x01Ole10Native", data: full[:len(full)-64]}}},
		{name: "_4", kids: []*cfbNode{{name: "\x01Ole10Native", data: packagerStream("big.bin", []byte("x"), 0xFFFFFFFF)}}},
		{name: "_5", kids: []*cfbNode{{name: "\x01CompObj", data: compObj("Visio Drawing")}, {name: "VisioDocument", data: []byte{1, 2, 3}}}},
		{name: "_6", clsid: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, kids: []*cfbNode{{name: "Contents2", data: []byte{1}}}},
		{name: "_7", clsid: wordCLSID, kids: []*cfbNode{{name: "\x01CompObj", data: compObj("Microsoft Word Document")}}},
		{name: "_8", clsid: wordCLSID, kids: []*cfbNode{{name: "WordDocument", data: iwd}, {name: "1Table", data: itbl}}},
	}}
	return buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl}, pool}, nil)
}

// wordCLSID is the class of a Word 97-2003 document.
var wordCLSID = [16]byte{0x06, 0x09, 0x02, 0, 0, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0x46}

// compObj is a \x01CompObj stream naming the object's user type.
func compObj(userType string) []byte {
	b := make([]byte, 28)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(userType)+1))
	return append(b, userType+"\x00"...)
}

// TestDOCEmbeddedPackages checks that a packaged file, a workbook and a
// Word document become children with their text, and that a truncated
// package, one claiming 4 GB, objects of an unknown kind or class and a
// Word-class storage without its streams are children with their errors
// while the parent keeps its text.
func TestDOCEmbeddedPackages(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.doc", "", embeddedPoolDOC(t))
	if d.Err != nil || !strings.Contains(d.Text, "Parent text stays.") || len(d.Children) != 8 {
		t.Fatalf("%v %q, %d children", d.Err, d.Text, len(d.Children))
	}
	c := d.Children
	if c[0].Name != "notes.txt" || c[0].Text != "packaged notes" || c[0].Err != nil {
		t.Errorf("package: %q %q %v", c[0].Name, c[0].Text, c[0].Err)
	}
	if c[1].MediaType != mediaXLS || !strings.Contains(c[1].Text, "hello") {
		t.Errorf("workbook: %s %q %v", c[1].MediaType, c[1].Text, c[1].Err)
	}
	for i, want := range []error{ErrMalformed, ErrMalformed, ErrUnsupported, ErrUnsupported, ErrMalformed} {
		if e := c[2+i]; !errors.Is(e.Err, want) || e.Text != "" {
			t.Errorf("child %d %q: %v, want %v", 2+i, e.Name, e.Err, want)
		}
	}
	if !strings.Contains(c[4].Err.Error(), "Visio Drawing") {
		t.Errorf("unknown object's error names no kind: %v", c[4].Err)
	}
	if !strings.Contains(c[5].Err.Error(), "{04030201-0605-0807-090A-0B0C0D0E0F10}") {
		t.Errorf("unknown class not named: %v", c[5].Err)
	}
	if c[7].MediaType != mediaDOC || strings.TrimSpace(c[7].Text) != "Inner Word text." || c[7].Err != nil {
		t.Errorf("embedded Word document: %s %q %v", c[7].MediaType, c[7].Text, c[7].Err)
	}
}

// exOleObjStg is an ExOleObjStg record holding cfb, zlib-compressed with
// declared as its size when compressed.
func exOleObjStg(cfb []byte, compressed bool, declared uint32) []byte {
	if !compressed {
		return pptRec(0, pptExOleObjStg, cfb)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(cfb)
	w.Close()
	return pptRec(1<<4, pptExOleObjStg, binary.LittleEndian.AppendUint32(nil, declared), z.Bytes())
}

// TestPPTEmbeddedObjects checks that a presentation's ExOleObjStg
// records become children: a compressed packaged file and an uncompressed
// workbook with their text, a compressed object claiming 4 GB and a
// damaged zlib stream with their errors, the slides' text intact.
func TestPPTEmbeddedObjects(t *testing.T) {
	doc, cu := makePPT()
	pkg := buildCFB([]*cfbNode{{name: "\x01Ole10Native", data: packagerStream("notes.txt", []byte("packaged notes"), 14)}}, nil)
	doc = append(doc, exOleObjStg(pkg, true, uint32(len(pkg)))...)
	doc = append(doc, exOleObjStg(buildCFB([]*cfbNode{{name: "Workbook", data: makeWorkbook(false)}}, nil), false, 0)...)
	doc = append(doc, exOleObjStg(pkg, true, 0xFFFFFFFF)...)
	doc = append(doc, pptRec(1<<4, pptExOleObjStg, []byte{100, 0, 0, 0, 1, 2, 3, 4, 5})...)
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.ppt", "", buildCFB([]*cfbNode{{name: "PowerPoint Document", data: doc}, {name: "Current User", data: cu}}, nil))
	if d.Err != nil || !strings.Contains(d.Text, "Title one") || len(d.Children) != 4 {
		t.Fatalf("%v %q, %d children", d.Err, d.Text, len(d.Children))
	}
	c := d.Children
	if c[0].Name != "notes.txt" || c[0].Text != "packaged notes" {
		t.Errorf("package: %q %q %v", c[0].Name, c[0].Text, c[0].Err)
	}
	if c[1].MediaType != mediaXLS || !strings.Contains(c[1].Text, "hello") || c[1].Name != "object 2" {
		t.Errorf("workbook: %q %s %q %v", c[1].Name, c[1].MediaType, c[1].Text, c[1].Err)
	}
	if !errors.Is(c[2].Err, ErrBomb) || !errors.Is(c[3].Err, ErrMalformed) {
		t.Errorf("damaged: %v; %v", c[2].Err, c[3].Err)
	}
}

// TestDOCEmbeddedSheetFixture reads a Word document LibreOffice wrote
// with a Calc object inline (testdata/legacy/make.sh): the object, an
// ObjectPool storage holding a workbook, is a child with its cells' text,
// and the parent keeps its own.
func TestDOCEmbeddedSheetFixture(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "embedded-sheet.doc", "", readLegacy(t, "embedded/embedded-sheet.doc"))
	if d.Err != nil || !strings.Contains(d.Text, "The parent document's own paragraph.") || len(d.Children) != 1 {
		t.Fatalf("%v %q, %d children", d.Err, d.Text, len(d.Children))
	}
	if c := d.Children[0]; c.MediaType != mediaXLS || c.Err != nil || !strings.Contains(c.Text, "Embedded cell text") || !strings.Contains(c.Text, "42") {
		t.Errorf("embedded sheet: %q %s %v %q", c.Name, c.MediaType, c.Err, c.Text)
	}
}
