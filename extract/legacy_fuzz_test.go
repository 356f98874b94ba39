package extract

import (
	"errors"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// The seeds are small files built by the tests' writers: the fuzzer
// mutates and minimises small inputs far faster than the fixtures.

// lzfuExample is the compressed RTF of MS-OXRTFCP 4.1.
var lzfuExample = []byte{0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5, 0xc7, 0xa7,
	0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42, 0x32, 0x0a, 0xf3, 0x20,
	0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0, 0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f, 0xa0}

// FuzzCFBReader runs the compound file reader over every storage and
// stream: damage must be ErrMalformed, never a panic or a hang.
func FuzzCFBReader(f *testing.F) {
	f.Add(buildCFB([]*cfbNode{{name: "A", data: []byte("alpha")}, {name: "S", kids: []*cfbNode{{name: "B", data: make([]byte, 1500)}}}}, nil))
	f.Add(makeDOC(f, "text\r", true, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := readAllCFB(data); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v is not ErrMalformed", err)
		}
	})
}

// FuzzMSG runs the compound file parser on whole files: Outlook messages
// with attached messages and files, and a Word document with embedded
// objects.
func FuzzMSG(f *testing.F) {
	wd, tbl := docStreams(f, "objects\r", true)
	f.Add(buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl}, {name: "ObjectPool", kids: []*cfbNode{
		{name: "_1", kids: []*cfbNode{{name: "\x01Ole10Native", data: ole10NativeStream("a.txt", []byte("packaged"))}}},
		{name: "_2", kids: []*cfbNode{{name: "Workbook", data: makeWorkbook(false)}}},
	}}}, nil))
	f.Add(embeddedPoolDOC(f))
	f.Add(readLegacy(f, "embedded/embedded-sheet.doc"))
	inner := makeMSGNodes(msgEmbeddedHeader, "inner", "inner body")
	f.Add(buildCFB(makeMSGNodes(msgTopHeader, "top", "top body", inner), nil))
	f.Add(buildCFB(rtfMSGNodes(), nil))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParser(t, "cfb", parseCompound, data) })
}

// FuzzOle10Native runs the packaged-object reader: damage must be
// ErrMalformed, and the contents always lie within the stream.
func FuzzOle10Native(f *testing.F) {
	f.Add(packagerStream("notes.txt", []byte("packaged notes"), 14))
	f.Add(packagerStream("big.bin", []byte("x"), 0xFFFFFFFF))
	f.Add(ole10NativeStream("w.txt", []byte("w")))
	f.Add([]byte("\x02\x00a.txt\x00C:\\a.txt\x00\x00\x00\x03\x00C:\\TEMP\\a.txt\x00\x05\x00\x00\x00hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ole10Native(data)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v is not ErrMalformed", err)
		}
		if len(o.data) > len(data) {
			t.Fatalf("%d bytes of contents from %d", len(o.data), len(data))
		}
	})
}

// FuzzLZFu runs the compressed RTF decoder.
func FuzzLZFu(f *testing.F) {
	f.Add(lzfuExample)
	f.Fuzz(func(t *testing.T, data []byte) {
		j := newJob(t.Context(), fuzzLimits())
		out, err := decompressRTF(j, data)
		if err != nil && !isSentinel(err) {
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if len(out) > 9*len(data) {
			t.Fatalf("%d bytes out of %d", len(out), len(data))
		}
	})
}

// FuzzDOC runs the Word reader on a WordDocument and a table stream.
func FuzzDOC(f *testing.F) {
	for _, compressed := range []bool{true, false} {
		wd, tbl := docStreams(f, "Text\r\x13 FIELD \x14result\x15\x07", compressed)
		f.Add(wd, tbl)
	}
	for _, pieces := range []int{0, 3} { // Word 6/95: no table stream
		f.Add(doc6Streams(f, "Text\r\x13 FIELD \x14result\x15\x07", 104, 0x0409, charmap.Windows1252, pieces), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, wd, tbl []byte) {
		data := buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl}, {name: "0Table", data: tbl}}, nil)
		fuzzParser(t, "cfb", parseCompound, data)
	})
}

// FuzzXLS runs the Excel reader on a Workbook stream.
func FuzzXLS(f *testing.F) {
	f.Add(makeWorkbook(false))
	f.Add(biff5Workbook(true, -1))
	f.Fuzz(func(t *testing.T, wb []byte) {
		fuzzParser(t, "cfb", parseCompound, buildCFB([]*cfbNode{{name: "Workbook", data: wb}}, nil))
	})
}

// FuzzPPT runs the PowerPoint reader on a PowerPoint Document and a
// Current User stream.
func FuzzPPT(f *testing.F) {
	doc, cu := makePPT()
	f.Add(doc, cu)
	pkg := buildCFB([]*cfbNode{{name: "\x01Ole10Native", data: packagerStream("a.txt", []byte("packaged"), 8)}}, nil)
	f.Add(append(append(doc, exOleObjStg(pkg, true, uint32(len(pkg)))...), exOleObjStg(pkg, false, 0)...), cu)
	f.Fuzz(func(t *testing.T, doc, cu []byte) {
		fuzzParser(t, "cfb", parseCompound, buildCFB([]*cfbNode{{name: "PowerPoint Document", data: doc}, {name: "Current User", data: cu}}, nil))
	})
}
