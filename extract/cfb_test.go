package extract

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// cfbNode is a storage (kids) or a stream (data) for buildCFB.
type cfbNode struct {
	name string
	data []byte
	kids []*cfbNode
	// storage marks a storage without children.
	storage bool
	// clsid is the class written in the entry.
	clsid [16]byte
}

func (n *cfbNode) isStorage() bool { return n.storage || n.kids != nil }

// buildCFB writes a version 3 compound file holding the children of root,
// every stream in regular sectors (the mini stream cutoff is 0). patch, if
// set, may change the directory before it is written (entry 0 is the
// root; the others follow depth first).
func buildCFB(root []*cfbNode, patch func(dir []cfbEntry)) []byte {
	const ss = 512
	le := binary.LittleEndian
	type flat struct {
		n     *cfbNode
		entry cfbEntry
	}
	dir := []flat{{entry: cfbEntry{name: "Root Entry", typ: 5, left: cfbNone, right: cfbNone, child: cfbNone, start: cfbEnd}}}
	var add func(parent int, kids []*cfbNode)
	add = func(parent int, kids []*cfbNode) {
		prev := -1
		for _, k := range kids {
			i := len(dir)
			typ := byte(2)
			if k.isStorage() {
				typ = 1
			}
			dir = append(dir, flat{n: k, entry: cfbEntry{name: k.name, typ: typ, left: cfbNone, right: cfbNone, child: cfbNone, start: cfbEnd, clsid: k.clsid}})
			if prev < 0 {
				dir[parent].entry.child = uint32(i)
			} else {
				dir[prev].entry.right = uint32(i)
			}
			prev = i
			if k.isStorage() {
				add(i, k.kids)
			}
		}
	}
	add(0, root)
	// Sectors: streams first, then the directory, then the FAT.
	var sectors [][]byte
	var fat []uint32
	for i := range dir {
		n := dir[i].n
		if n == nil || n.isStorage() || len(n.data) == 0 {
			continue
		}
		dir[i].entry.start, dir[i].entry.size = uint32(len(sectors)), uint64(len(n.data))
		for off := 0; off < len(n.data); off += ss {
			s := make([]byte, ss)
			copy(s, n.data[off:])
			sectors = append(sectors, s)
			fat = append(fat, uint32(len(sectors)))
		}
		fat[len(fat)-1] = cfbEnd
	}
	entries := make([]cfbEntry, len(dir))
	for i := range dir {
		entries[i] = dir[i].entry
	}
	if patch != nil {
		patch(entries)
	}
	dirStart := uint32(len(sectors))
	for off := 0; off < len(entries); off += ss / 128 {
		s := make([]byte, ss)
		for k := 0; k < ss/128 && off+k < len(entries); k++ {
			e, r := entries[off+k], s[k*128:(k+1)*128]
			u := utf16.Encode([]rune(e.name))
			for j, c := range u {
				le.PutUint16(r[2*j:], c)
			}
			le.PutUint16(r[0x40:], uint16(2*len(u)+2))
			r[0x42] = e.typ
			le.PutUint32(r[0x44:], e.left)
			le.PutUint32(r[0x48:], e.right)
			le.PutUint32(r[0x4C:], e.child)
			le.PutUint32(r[0x74:], e.start)
			le.PutUint64(r[0x78:], e.size)
			copy(r[0x50:0x60], e.clsid[:])
		}
		sectors = append(sectors, s)
		fat = append(fat, uint32(len(sectors)))
	}
	fat[len(fat)-1] = cfbEnd
	nfat := (len(sectors) + ss/4) / (ss/4 - 1)
	fatStart := uint32(len(sectors))
	for range nfat {
		fat = append(fat, 0xFFFFFFFD)
	}
	fatBytes := make([]byte, nfat*ss)
	for i := range fatBytes[:len(fatBytes)/4] {
		v := uint32(cfbNone)
		if i < len(fat) {
			v = fat[i]
		}
		le.PutUint32(fatBytes[4*i:], v)
	}
	h := make([]byte, ss)
	copy(h, magicCFB)
	le.PutUint16(h[0x18:], 0x3E)
	le.PutUint16(h[0x1A:], 3)
	le.PutUint16(h[0x1C:], 0xFFFE)
	le.PutUint16(h[0x1E:], 9)
	le.PutUint16(h[0x20:], 6)
	le.PutUint32(h[0x2C:], uint32(nfat))
	le.PutUint32(h[0x30:], dirStart)
	le.PutUint32(h[0x38:], 0) // no mini stream: every stream in regular sectors
	le.PutUint32(h[0x3C:], cfbEnd)
	le.PutUint32(h[0x44:], cfbEnd)
	for i := 0x4C; i < ss; i += 4 {
		le.PutUint32(h[i:], cfbNone)
	}
	for i := range nfat {
		le.PutUint32(h[0x4C+4*i:], fatStart+uint32(i))
	}
	out := h
	for _, s := range sectors {
		out = append(out, s...)
	}
	return append(out, fatBytes...)
}

// TestCFBReader checks the reader on a built file: names, streams in
// storages, and a stream spanning sectors.
func TestCFBReader(t *testing.T) {
	long := []byte(strings.Repeat("0123456789", 200))
	data := buildCFB([]*cfbNode{
		{name: "A", data: []byte("alpha")},
		{name: "S", kids: []*cfbNode{{name: "B", data: long}}},
	}, nil)
	f, err := openCFB(data)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok, err := f.streamNamed(0, "a"); !ok || err != nil || string(b) != "alpha" {
		t.Errorf("A: %q %v %v", b, ok, err)
	}
	s := f.lookup(0, "S")
	if b, ok, err := f.streamNamed(s, "B"); !ok || err != nil || string(b) != string(long) {
		t.Errorf("S/B: %d bytes %v %v", len(b), ok, err)
	}
}

// readAllCFB opens data and reads every storage and stream of it,
// returning the first error.
func readAllCFB(data []byte) error {
	f, err := openCFB(data)
	if err != nil {
		return err
	}
	for i := range f.dir {
		switch f.dir[i].typ {
		case 1, 5:
			_, err = f.children(i)
		case 2:
			_, err = f.stream(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestCFBBadInput checks that damaged compound files are ErrMalformed.
func TestCFBBadInput(t *testing.T) {
	one := func(patch func(dir []cfbEntry)) []byte {
		return buildCFB([]*cfbNode{{name: "A", data: []byte("x")}, {name: "B", data: []byte("y")}}, patch)
	}
	ok := buildCFB([]*cfbNode{{name: "A", data: make([]byte, 2000)}}, nil)
	cyclicFAT := append([]byte(nil), ok...)
	// The stream's sectors are 0-3, the directory 4, the FAT 5: sector 0
	// now points back to itself.
	binary.LittleEndian.PutUint32(cyclicFAT[512*(1+5):], 0)
	tests := []struct {
		name string
		data []byte
	}{
		{"truncated header", ok[:300]},
		{"truncated", ok[:1200]},
		{"cyclic sector chain", cyclicFAT},
		{"cyclic directory tree", one(func(dir []cfbEntry) { dir[2].right = 1 })},
		{"storage inside itself", buildCFB([]*cfbNode{{name: "S", kids: []*cfbNode{{name: "A", data: []byte("x")}}}}, func(dir []cfbEntry) { dir[2].right = 1 })},
		{"directory entry out of range", one(func(dir []cfbEntry) { dir[1].left = 1000 })},
		{"stream sector out of range", one(func(dir []cfbEntry) { dir[1].start = 1 << 20 })},
		{"stream larger than its chain", one(func(dir []cfbEntry) { dir[1].size = 5000 })},
		{"stream larger than the file", one(func(dir []cfbEntry) { dir[1].size = 1 << 31 })},
		{"two streams share a sector", one(func(dir []cfbEntry) { dir[2].start = dir[1].start })},
	}
	if err := readAllCFB(ok); err != nil {
		t.Fatalf("the undamaged file: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := readAllCFB(tc.data); !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
}

// TestLegacyTruncated checks that a truncated legacy document is
// ErrMalformed wherever it is cut (LibreOffice writes the directory last,
// so most cuts lose it, and with it the media type).
func TestLegacyTruncated(t *testing.T) {
	x := newTestExtractor(t, DefaultLimits())
	for _, fx := range legacyFixtures {
		data := readLegacy(t, fx.file)
		for _, cut := range []int{600, len(data) / 3, len(data) / 2, len(data) - 700} {
			d := extractBytes(t, x, "cut", "", data[:cut])
			if !errors.Is(d.Err, ErrMalformed) {
				t.Errorf("%s cut at %d: %s, %v", fx.file, cut, d.MediaType, d.Err)
			}
		}
	}
}
