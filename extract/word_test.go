package extract

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
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
		{"Word 95", func(wd, _ []byte) { le.PutUint16(wd[2:], 104) }, ErrUnsupported},
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
