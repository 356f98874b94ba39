package extract

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
	"unicode/utf16"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

// makeDOC writes a Word 97 document whose text is one piece, 8-bit
// (compressed) or UTF-16; patch may damage the WordDocument and 1Table
// streams before they are stored.
func makeDOC(t testing.TB, text string, compressed bool, patch func(wd, tbl []byte)) []byte {
	t.Helper()
	wd, tbl := docStreams(t, text, compressed)
	if patch != nil {
		patch(wd, tbl)
	}
	return buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl}}, nil)
}

// docStreams returns the WordDocument and 1Table streams of makeDOC.
func docStreams(t testing.TB, text string, compressed bool) (wd, tbl []byte) {
	t.Helper()
	le := binary.LittleEndian
	const textAt = 1024
	var raw []byte
	fc := uint32(textAt)
	if compressed {
		b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		raw, fc = b, textAt*2|0x40000000
	} else {
		for _, u := range utf16.Encode([]rune(text)) {
			raw = le.AppendUint16(raw, u)
		}
	}
	n := uint32(len([]rune(text)))
	wd = make([]byte, textAt+len(raw))
	le.PutUint16(wd, docIdent)
	le.PutUint16(wd[2:], 0xC1)
	le.PutUint16(wd[0x0A:], docTable1)
	le.PutUint16(wd[32:], 14)  // csw
	le.PutUint16(wd[62:], 22)  // cslw
	le.PutUint32(wd[76:], n)   // ccpText
	le.PutUint16(wd[152:], 93) // cbRgFcLcb
	copy(wd[textAt:], raw)
	tbl = []byte{1, 2, 0, 0xAA, 0xBB, 2} // a Prc of 2 bytes, then the Pcdt
	tbl = le.AppendUint32(tbl, 16)
	tbl = le.AppendUint32(tbl, 0)
	tbl = le.AppendUint32(tbl, n)
	tbl = append(tbl, 0, 0)
	tbl = le.AppendUint32(tbl, fc)
	tbl = append(tbl, 0, 0)
	le.PutUint32(wd[154+33*8:], 0)
	le.PutUint32(wd[154+33*8+4:], uint32(len(tbl)))
	return wd, tbl
}

func TestDOC(t *testing.T) {
	const text = "Café crème\rsecond paragraph\x07cell\x13 HYPERLINK \"http://x\" \x14shown\x15 end\x0Cnext page\x01"
	const want = "Café crème\nsecond paragraph\ncellshown end\nnext page"
	x := newTestExtractor(t, DefaultLimits())
	for _, compressed := range []bool{true, false} {
		d := extractBytes(t, x, "a.doc", "", makeDOC(t, text, compressed, nil))
		if d.Err != nil || d.MediaType != mediaDOC || d.Text != want {
			t.Errorf("compressed %v: %s %v %q", compressed, d.MediaType, d.Err, d.Text)
		}
	}
}

// TestDOCBadInput checks damaged piece tables and FIBs.
func TestDOCBadInput(t *testing.T) {
	le := binary.LittleEndian
	const pcd = 6 + 4 + 8 // the PCD after the Prc, the Pcdt header and two CPs
	tests := []struct {
		name  string
		patch func(wd, tbl []byte)
		want  error
	}{
		{"piece outside the stream", func(_, tbl []byte) { le.PutUint32(tbl[pcd+2:], 1<<29) }, ErrMalformed},
		{"positions go backwards", func(_, tbl []byte) { le.PutUint32(tbl[10:], 50) }, ErrMalformed},
		{"piece table size", func(_, tbl []byte) { le.PutUint32(tbl[6:], 15) }, ErrMalformed},
		{"piece table size past the CLX", func(_, tbl []byte) { le.PutUint32(tbl[6:], 1<<30) }, ErrMalformed},
		{"unknown CLX entry", func(_, tbl []byte) { tbl[0] = 7 }, ErrMalformed},
		{"negative property modifier", func(_, tbl []byte) { le.PutUint16(tbl[1:], 0x8000) }, ErrMalformed},
		{"CLX outside the table stream", func(wd, _ []byte) { le.PutUint32(wd[154+33*8:], 1<<20) }, ErrMalformed},
		{"no CLX", func(wd, _ []byte) { le.PutUint16(wd[152:], 10) }, ErrMalformed},
		{"FIB truncated", func(wd, _ []byte) { le.PutUint16(wd[32:], 60000) }, ErrMalformed},
		{"not a FIB", func(wd, _ []byte) { wd[0] = 0 }, ErrMalformed},
		{"encrypted", func(wd, _ []byte) { le.PutUint16(wd[0x0A:], docTable1|docEncrypted) }, ErrEncrypted},
		{"Word 2", func(wd, _ []byte) { le.PutUint16(wd[2:], 45) }, ErrUnsupported},
	}
	x := newTestExtractor(t, DefaultLimits())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := extractBytes(t, x, "bad.doc", "", makeDOC(t, "some text\r", true, tc.patch))
			if !errors.Is(d.Err, tc.want) || d.MediaType != mediaDOC {
				t.Errorf("%s: %v, want %v", d.MediaType, d.Err, tc.want)
			}
		})
	}
}

// summaryStream writes a SummaryInformation property set with a code
// page, a title and an author (8-bit), and creation and save times.
func summaryStream(title, author string, created, saved time.Time) []byte {
	le := binary.LittleEndian
	ft := func(t time.Time) uint64 { return uint64(t.Unix())*1e7 + 116444736000000000 }
	type prop struct {
		id  uint32
		val []byte
	}
	str := func(s string) []byte {
		s, _ = charmap.Windows1252.NewEncoder().String(s)
		b := le.AppendUint32(le.AppendUint32(nil, 0x1E), uint32(len(s)+1))
		b = append(b, s+"\x00"...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	props := []prop{
		{1, le.AppendUint32(le.AppendUint32(nil, 2), 1252)},
		{pidsiTitle, str(title)},
		{pidsiAuthor, str(author)},
		{pidsiCreated, le.AppendUint64(le.AppendUint32(nil, 0x40), ft(created))},
		{pidsiSaved, le.AppendUint64(le.AppendUint32(nil, 0x40), ft(saved))},
	}
	sec := make([]byte, 8+8*len(props))
	for i, p := range props {
		le.PutUint32(sec[8+8*i:], p.id)
		le.PutUint32(sec[12+8*i:], uint32(len(sec)))
		sec = append(sec, p.val...)
	}
	le.PutUint32(sec, uint32(len(sec)))
	le.PutUint32(sec[4:], uint32(len(props)))
	h := make([]byte, 48)
	le.PutUint16(h, 0xFFFE)
	le.PutUint32(h[24:], 1)
	le.PutUint32(h[44:], 48)
	return append(h, sec...)
}

// TestDOCProperties checks the document properties of SummaryInformation.
func TestDOCProperties(t *testing.T) {
	created := time.Date(2009, 5, 4, 10, 0, 0, 0, time.UTC)
	saved := time.Date(2011, 2, 3, 16, 30, 0, 0, time.UTC)
	wd, tbl := docStreams(t, "text\r", true)
	data := buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl},
		{name: "\x05SummaryInformation", data: summaryStream("Réglement", "Jane Doe", created, saved)}}, nil)
	d := extractBytes(t, newTestExtractor(t, DefaultLimits()), "a.doc", "", data)
	m := d.Meta
	if d.Err != nil || m.Title != "Réglement" || m.Author != "Jane Doe" || !m.Created.Equal(created) || !m.Modified.Equal(saved) {
		t.Errorf("%v %+v", d.Err, m)
	}
}

// doc6Streams returns the WordDocument stream of a Word 6.0 (nFib 101) or
// 95 (nFib 104) document of language lid whose text, 8-bit in enc, is one
// text range or, when complex (fast saved), a piece table of pieces runs
// stored in reverse order.
func doc6Streams(t testing.TB, text string, nFib, lid uint16, enc encoding.Encoding, pieces int) []byte {
	t.Helper()
	le := binary.LittleEndian
	raw, err := enc.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	const textAt = 1024
	wd := make([]byte, textAt, textAt+len(raw)+64)
	le.PutUint16(wd, doc6Ident)
	le.PutUint16(wd[2:], nFib)
	le.PutUint16(wd[doc6Lid:], lid)
	le.PutUint32(wd[doc6CcpText:], uint32(len(raw)))
	doc6Tables(wd)
	if pieces == 0 {
		wd = append(wd, raw...)
		le.PutUint32(wd[doc6FcMin:], textAt)
		le.PutUint32(wd[doc6FcMac:], uint32(len(wd)))
		return wd
	}
	le.PutUint16(wd[0x0A:], doc6Complex)
	cps := make([]uint32, pieces+1)
	for k := range cps {
		cps[k] = uint32(len(raw) * k / pieces)
	}
	fcs := make([]uint32, pieces)
	for k := pieces - 1; k >= 0; k-- { // stored backwards, as edits append
		fcs[k] = uint32(len(wd))
		wd = append(wd, raw[cps[k]:cps[k+1]]...)
	}
	le.PutUint32(wd[doc6FcMin:], textAt)
	le.PutUint32(wd[doc6FcMac:], uint32(len(wd)))
	clx := []byte{1, 2, 0, 0xAA, 0xBB, 2}
	clx = le.AppendUint32(clx, uint32(4*(pieces+1)+8*pieces))
	for _, cp := range cps {
		clx = le.AppendUint32(clx, cp)
	}
	for _, fc := range fcs {
		clx = le.AppendUint32(append(clx, 0, 0), fc)
		clx = append(clx, 0, 0)
	}
	le.PutUint32(wd[doc6FcClx:], uint32(len(wd)))
	le.PutUint32(wd[doc6FcClx+4:], uint32(len(clx)))
	return append(wd, clx...)
}

// doc6Tables writes, in the space between the FIB and the text at 1024,
// the structures other readers (antiword) expect of a Word 6 file: a
// style sheet with one empty style.
func doc6Tables(wd []byte) {
	le := binary.LittleEndian
	at := 0x200
	stsh := []byte{14, 0, 1, 0, 10, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	copy(wd[at:], stsh)
	le.PutUint32(wd[0x60:], uint32(at))
	le.PutUint32(wd[0x64:], uint32(len(stsh)))
}

func TestDOC6(t *testing.T) {
	const text = "Café crème\rsecond paragraph\x07cell\x13 HYPERLINK \"http://x\" \x14shown\x15 end\x0Cnext page\x01"
	const want = "Café crème\nsecond paragraph\ncellshown end\nnext page"
	x := newTestExtractor(t, DefaultLimits())
	for _, pieces := range []int{0, 1, 3} {
		for _, nFib := range []uint16{101, 104} {
			wd := doc6Streams(t, text, nFib, 0x0409, charmap.Windows1252, pieces)
			d := extractBytes(t, x, "a.doc", "", buildCFB([]*cfbNode{{name: "WordDocument", data: wd}}, nil))
			if d.Err != nil || d.MediaType != mediaDOC || d.Text != want {
				t.Errorf("nFib %d, %d pieces: %s %v %q", nFib, pieces, d.MediaType, d.Err, d.Text)
			}
		}
	}
	// Russian text in the code page of its language, Windows-1251.
	wd := doc6Streams(t, "Привет, мир\r", 104, 0x0419, charmap.Windows1251, 2)
	d := extractBytes(t, x, "ru.doc", "", buildCFB([]*cfbNode{{name: "WordDocument", data: wd}}, nil))
	if d.Err != nil || d.Text != "Привет, мир\n" {
		t.Errorf("Russian: %v %q", d.Err, d.Text)
	}
	// Japanese in Shift JIS, double-byte, split across pieces.
	wd = doc6Streams(t, "日本語の文書\r", 104, 0x0411, japanese.ShiftJIS, 1)
	d = extractBytes(t, x, "ja.doc", "", buildCFB([]*cfbNode{{name: "WordDocument", data: wd}}, nil))
	if d.Err != nil || d.Text != "日本語の文書\n" {
		t.Errorf("Japanese: %v %q", d.Err, d.Text)
	}
}

// TestDOC6BadInput checks damaged Word 6 FIBs and piece tables: each is a
// recorded error, never a panic, with the text read before the damage.
func TestDOC6BadInput(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name   string
		pieces int
		patch  func(wd []byte) []byte
		want   error
		text   string
	}{
		{"FIB truncated", 0, func(wd []byte) []byte { return wd[:200] }, ErrMalformed, ""},
		{"text range outside", 0, func(wd []byte) []byte { le.PutUint32(wd[doc6FcMin:], 1<<30); return wd }, ErrMalformed, ""},
		{"CLX outside", 2, func(wd []byte) []byte { le.PutUint32(wd[doc6FcClx:], 1<<30); return wd }, ErrMalformed, ""},
		{"piece outside", 2, func(wd []byte) []byte {
			clx := int(le.Uint32(wd[doc6FcClx:]))
			le.PutUint32(wd[clx+10+4*3+8+2:], 1<<30) // the second piece's fc
			return wd
		}, ErrMalformed, "one two t"},
		{"positions go backwards", 2, func(wd []byte) []byte {
			clx := int(le.Uint32(wd[doc6FcClx:]))
			le.PutUint32(wd[clx+10+4*2:], 1) // the last CP
			return wd
		}, ErrMalformed, "one two t"},
		{"unknown CLX entry", 2, func(wd []byte) []byte { wd[le.Uint32(wd[doc6FcClx:])] = 9; return wd }, ErrMalformed, ""},
		{"encrypted", 0, func(wd []byte) []byte { le.PutUint16(wd[0x0A:], docEncrypted); return wd }, ErrEncrypted, ""},
	}
	x := newTestExtractor(t, DefaultLimits())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wd := tc.patch(doc6Streams(t, "one two three four\r", 104, 0x0409, charmap.Windows1252, tc.pieces))
			d := extractBytes(t, x, "bad.doc", "", buildCFB([]*cfbNode{{name: "WordDocument", data: wd}}, nil))
			if !errors.Is(d.Err, tc.want) || d.MediaType != mediaDOC || d.Text != tc.text {
				t.Errorf("%s: %v %q, want %v %q", d.MediaType, d.Err, d.Text, tc.want, tc.text)
			}
		})
	}
}
