package extract

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// ole10NativeStream packages a file as Word's \x01Ole10Native stream.
func ole10NativeStream(name string, data []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, 2, 0)
	b = append(b, name+"\x00"+`C:\`+name+"\x00"...)
	b = append(b, 0, 0, 3, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// TestDOCEmbeddedObjects checks that the objects of a Word document's
// ObjectPool become children: a packaged file, an OOXML package, an
// Excel workbook stored as a storage, and an object with no text, which
// is recorded as unsupported.
func TestDOCEmbeddedObjects(t *testing.T) {
	wd, tbl := docStreams(t, "See the attached objects.\r", true)
	pool := &cfbNode{name: "ObjectPool", kids: []*cfbNode{
		{name: "_1", kids: []*cfbNode{{name: "\x01Ole10Native", data: ole10NativeStream("notes.txt", []byte("packaged notes"))}}},
		{name: "_2", kids: []*cfbNode{{name: "Package", data: makeDOCX(t, "T", "A", "Embedded docx paragraph.")}}},
		{name: "_3", kids: []*cfbNode{{name: "Workbook", data: makeWorkbook(false)}}},
		{name: "_4", kids: []*cfbNode{{name: "Equation Native", data: []byte{1, 2, 3}}}},
	}}
	data := buildCFB([]*cfbNode{{name: "WordDocument", data: wd}, {name: "1Table", data: tbl}, pool}, nil)
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.doc", "", data)
	if d.Err != nil || len(d.Children) != 4 {
		t.Fatalf("%v, %d children", d.Err, len(d.Children))
	}
	c := d.Children
	switch {
	case c[0].Name != "notes.txt" || c[0].Text != "packaged notes":
		t.Errorf("packaged: %q %q", c[0].Name, c[0].Text)
	case c[1].MediaType != mediaDOCX || !strings.Contains(c[1].Text, "Embedded docx paragraph."):
		t.Errorf("package: %s %q", c[1].MediaType, c[1].Text)
	case c[2].MediaType != mediaXLS || !strings.Contains(c[2].Text, "hello") || c[2].Size == 0:
		t.Errorf("workbook: %s %q %v", c[2].MediaType, c[2].Text, c[2].Err)
	case !errors.Is(c[3].Err, ErrUnsupported):
		t.Errorf("equation: %v", c[3].Err)
	}
}
