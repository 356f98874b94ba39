package extract

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// pptStreams returns the PowerPoint Document and Current User streams of
// the PPT fixture, copied.
func pptStreams(t testing.TB) (doc, cu []byte) {
	t.Helper()
	f, err := openCFB(readLegacy(t, "devref-l10n.ppt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	d, _, err1 := f.streamNamed(0, "PowerPoint Document")
	c, _, err2 := f.streamNamed(0, "Current User")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return append([]byte(nil), d...), append([]byte(nil), c...)
}

// TestPPTPersist checks that the slides are read through the persist
// directory, and that without one, or with a damaged one, the records are
// walked and the text is kept.
func TestPPTPersist(t *testing.T) {
	le := binary.LittleEndian
	x := newTestExtractor(t, DefaultLimits())
	doc, cu := pptStreams(t)
	build := func(doc, cu []byte) []byte {
		nodes := []*cfbNode{{name: "PowerPoint Document", data: doc}}
		if cu != nil {
			nodes = append(nodes, &cfbNode{name: "Current User", data: cu})
		}
		return buildCFB(nodes, nil)
	}
	want := extractBytes(t, x, "a.ppt", "", build(doc, cu))
	if want.Err != nil || want.Meta.Extra["slides"] != "19" || !strings.Contains(want.Text, "Internationalization and Translations") {
		t.Fatalf("%v, %s slides", want.Err, want.Meta.Extra["slides"])
	}
	edit := int64(le.Uint32(cu[8+8:])) // CurrentUserAtom.offsetToCurrentEdit
	cyclic := append([]byte(nil), doc...)
	le.PutUint32(cyclic[edit+8+8:], uint32(edit)) // UserEditAtom.offsetLastEdit
	badCU := append([]byte(nil), cu...)
	le.PutUint32(badCU[16:], 1<<30)
	tests := []struct {
		name     string
		doc, cu  []byte
		wantErr  error
		sameText bool
	}{
		{"no Current User", doc, nil, nil, true},
		{"edit offset out of range", doc, badCU, ErrMalformed, true},
		{"cyclic user edits", cyclic, cu, ErrMalformed, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := extractBytes(t, x, "a.ppt", "", build(tc.doc, tc.cu))
			if !errors.Is(d.Err, tc.wantErr) || (tc.wantErr == nil) != (d.Err == nil) {
				t.Errorf("error %v, want %v", d.Err, tc.wantErr)
			}
			if !strings.Contains(d.Text, "Internationalization and Translations") || tc.sameText && d.Text != want.Text {
				t.Errorf("text lost: %d bytes, want %d", len(d.Text), len(want.Text))
			}
		})
	}
}

func pptRec(verInst, typ uint16, body ...[]byte) []byte {
	var b []byte
	for _, p := range body {
		b = append(b, p...)
	}
	out := binary.LittleEndian.AppendUint16(nil, verInst)
	out = binary.LittleEndian.AppendUint16(out, typ)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

// makePPT writes the PowerPoint Document and Current User streams of a
// two-slide presentation: the first slide's title in the text list and
// a text box on the slide, the second slide's text as 8-bit text; the
// second slide is stored before the first, as after an edit.
func makePPT() (doc, cu []byte) {
	persist := func(ref uint32) []byte { return pptRec(0, pptSlidePersistAtom, u32(ref), make([]byte, 16)) }
	slwt := pptRec(0x000F, pptSlideListWithText,
		persist(2), pptRec(0, pptTextCharsAtom, utf16LE("Title one\rpoint")),
		persist(3), pptRec(0, pptTextBytesAtom, []byte("second slide")))
	master := pptRec(0x000F, pptMainMaster, pptRec(0, pptTextCharsAtom, utf16LE("master text")))
	var b []byte
	at := func(rec []byte) uint32 { off := uint32(len(b)); b = append(b, rec...); return off }
	docAt := at(pptRec(0x000F, pptDocument, slwt))
	at(master)
	slide2 := at(pptRec(0x000F, pptSlide))
	slide1 := at(pptRec(0x000F, pptSlide, pptRec(0x000F, 0xF00D, pptRec(0, pptTextCharsAtom, utf16LE("shape text")))))
	dirAt := at(pptRec(0, pptPersistDirAtom, u32(1|3<<20), u32(docAt), u32(slide1), u32(slide2)))
	edit := at(pptRec(0, pptUserEditAtom, u32(0), u32(0), u32(0), u32(dirAt), u32(1), u32(4), make([]byte, 4)))
	cu = pptRec(0, pptCurrentUserAtom, u32(0x14), u32(0xE391C05F), u32(edit), make([]byte, 8))
	return b, cu
}

func TestPPT(t *testing.T) {
	doc, cu := makePPT()
	x := newTestExtractor(t, DefaultLimits())
	d := extractBytes(t, x, "a.ppt", "", buildCFB([]*cfbNode{{name: "PowerPoint Document", data: doc}, {name: "Current User", data: cu}}, nil))
	const want = "Title one\npoint\nshape text\n\nsecond slide\n\n"
	if d.Err != nil || d.MediaType != mediaPPT || d.Text != want || d.Meta.Extra["slides"] != "2" {
		t.Errorf("%s %v %q %v", d.MediaType, d.Err, d.Text, d.Meta.Extra)
	}
}
