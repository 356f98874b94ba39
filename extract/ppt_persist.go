package extract

import (
	"encoding/binary"
	"fmt"
)

// More PowerPoint record types.
const (
	pptDocument        = 0x03E8
	pptUserEditAtom    = 0x0FF5
	pptPersistDirAtom  = 0x1772
	pptCurrentUserAtom = 0x0FF6
)

// pptRecord returns the record at off of b.
func pptRecord(b []byte, off int64) (verInst, typ uint16, body []byte, ok bool) {
	le := binary.LittleEndian
	if off < 0 || off+8 > int64(len(b)) {
		return 0, 0, nil, false
	}
	n := int64(le.Uint32(b[off+4:]))
	if off+8+n > int64(len(b)) {
		return 0, 0, nil, false
	}
	return le.Uint16(b[off:]), le.Uint16(b[off+2:]), b[off+8 : off+8+n], true
}

// pptLive reads the live persist directory (MS-PPT 2.1.2): the Current
// User stream names the newest UserEditAtom, whose chain of earlier
// edits and persist directories map persist ids to record offsets (the
// newest definition wins). It returns the document container and the
// slide containers in presentation order, each slide with the text atoms
// of its entry in the slides' text list.
func pptLive(f *cfb, b []byte) (doc []byte, slides []pptSlideRef, err error) {
	le := binary.LittleEndian
	cu, ok, err := f.streamNamed(f.root, "Current User")
	if err != nil || !ok {
		return nil, nil, err
	}
	_, typ, body, ok := pptRecord(cu, 0)
	if !ok || typ != pptCurrentUserAtom || len(body) < 12 {
		return nil, nil, fmt.Errorf("%w: Current User stream without CurrentUserAtom", ErrMalformed)
	}
	persist := make(map[uint32]int64)
	docRef := uint32(0)
	seen := make(map[int64]bool)
	for off := int64(le.Uint32(body[8:])); ; {
		if seen[off] {
			return nil, nil, fmt.Errorf("%w: cyclic chain of user edits at %d", ErrMalformed, off)
		}
		seen[off] = true
		_, typ, ue, ok := pptRecord(b, off)
		if !ok || typ != pptUserEditAtom || len(ue) < 20 {
			return nil, nil, fmt.Errorf("%w: no UserEditAtom at %d", ErrMalformed, off)
		}
		if docRef == 0 {
			docRef = le.Uint32(ue[16:])
		}
		if err := pptPersistDir(b, int64(le.Uint32(ue[12:])), persist); err != nil {
			return nil, nil, err
		}
		last := int64(le.Uint32(ue[8:]))
		if last == 0 {
			break
		}
		off = last
	}
	_, typ, doc, ok = pptRecord(b, persist[docRef])
	if _, known := persist[docRef]; !known || !ok || typ != pptDocument {
		return nil, nil, fmt.Errorf("%w: document container (persist id %d) not found", ErrMalformed, docRef)
	}
	slides = pptSlideList(doc)
	for i := range slides {
		if off, ok := persist[slides[i].ref]; ok {
			if _, typ, body, ok := pptRecord(b, off); ok && typ == pptSlide {
				slides[i].body = body
			}
		}
	}
	return doc, slides, nil
}

// pptPersistDir adds the entries of the PersistDirectoryAtom at off that
// are not yet in persist.
func pptPersistDir(b []byte, off int64, persist map[uint32]int64) error {
	le := binary.LittleEndian
	_, typ, body, ok := pptRecord(b, off)
	if !ok || typ != pptPersistDirAtom {
		return fmt.Errorf("%w: no persist directory at %d", ErrMalformed, off)
	}
	for i := 0; i+4 <= len(body); {
		w := le.Uint32(body[i:])
		id, n := w&0xFFFFF, int(w>>20)
		i += 4
		if i+4*n > len(body) {
			return fmt.Errorf("%w: persist directory entry runs past its record", ErrMalformed)
		}
		for k := range n {
			if _, done := persist[id+uint32(k)]; !done {
				persist[id+uint32(k)] = int64(le.Uint32(body[i+4*k:]))
			}
		}
		i += 4 * n
	}
	return nil
}

// pptSlideRef is a slide of the slides' text list: its persist id, the
// text atoms listed for it, and (filled by pptLive) its container.
type pptSlideRef struct {
	ref   uint32
	atoms [][]byte // records (header included) of its text atoms
	body  []byte
}

// pptSlideList reads the slides' SlideListWithText of the document
// container.
func pptSlideList(doc []byte) []pptSlideRef {
	var out []pptSlideRef
	for off := int64(0); ; {
		verInst, typ, body, ok := pptRecord(doc, off)
		if !ok {
			return out
		}
		off += 8 + int64(len(body))
		if typ != pptSlideListWithText || verInst>>4 != 0 {
			continue
		}
		for o := int64(0); ; {
			_, t, b, ok := pptRecord(body, o)
			if !ok {
				break
			}
			switch {
			case t == pptSlidePersistAtom && len(b) >= 4:
				out = append(out, pptSlideRef{ref: binary.LittleEndian.Uint32(b)})
			case (t == pptTextCharsAtom || t == pptTextBytesAtom) && len(out) > 0:
				out[len(out)-1].atoms = append(out[len(out)-1].atoms, body[o:o+8+int64(len(b))])
			}
			o += 8 + int64(len(b))
		}
	}
}
