package extract

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// A minimal Unicode PST written for tests: the structures the fixtures
// lack (an attached message, a by-value attachment, subnode trees), each
// block and node listed in one leaf page of its b-tree.

// makeHeap builds a one-block heap-on-node whose first allocation is the
// user root.
func makeHeap(client byte, allocs [][]byte) []byte {
	b := []byte{0, 0, 0xEC, client, 1 << 5, 0, 0, 0, 0, 0, 0, 0}
	offs := []int{len(b)}
	for _, a := range allocs {
		b = append(b, a...)
		offs = append(offs, len(b))
	}
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(allocs)))
	b = append(b, 0, 0)
	for _, o := range offs {
		b = binary.LittleEndian.AppendUint16(b, uint16(o))
	}
	return b
}

// pcHeap is makePC's heap as bytes.
func pcHeap(props ...testProp) []byte {
	o := makePC(props...)
	return o.heap.blocks[0]
}

// tcHeap builds a table context of rows of (row id, display name).
func tcHeap(rows ...testRow) []byte {
	const ncols, rowSize = 2, 9 // two 4-byte cells and a one-byte cell bitmap
	info := []byte{0x7C, ncols, 8, 0, 8, 0, 8, 0, rowSize, 0, 0, 0, 0, 0, 2 << 5, 0, 0, 0, 0, 0, 0, 0}
	info = binary.LittleEndian.AppendUint32(info, pidRowID<<16|ptLong)
	info = append(info, 0, 0, 4, 0)
	info = binary.LittleEndian.AppendUint32(info, pidDisplayName<<16|ptUnicode)
	info = append(info, 4, 0, 4, 1)
	allocs := [][]byte{info, nil}
	for _, r := range rows {
		allocs = append(allocs, utf16le(r.name))
		row := binary.LittleEndian.AppendUint32(nil, r.id)
		row = binary.LittleEndian.AppendUint32(row, uint32(len(allocs))<<5)
		allocs[1] = append(allocs[1], append(row, 0xC0)...)
	}
	return makeHeap(0x7C, allocs)
}

type testRow struct {
	id   uint32
	name string
}

// miniPST assembles blocks and nodes into a file.
type miniPST struct {
	data   []byte
	blocks [][3]uint64 // bid, offset, size
	nodes  [][3]uint64 // nid, data bid, subnode bid
	bid    uint64
}

func newMiniPST() *miniPST {
	return &miniPST{data: make([]byte, 1024), bid: 0x100}
}

// block stores b and returns its bid; internal blocks have bit 1 set.
func (m *miniPST) block(b []byte, internal bool) uint64 {
	m.bid += 4
	bid := m.bid
	if internal {
		bid |= 2
	}
	for len(m.data)%64 != 0 {
		m.data = append(m.data, 0)
	}
	m.blocks = append(m.blocks, [3]uint64{bid, uint64(len(m.data)), uint64(len(b))})
	m.data = append(m.data, b...)
	return bid
}

// subnodes stores an SLBLOCK of (nid, data bid, subnode bid) entries.
func (m *miniPST) subnodes(entries ...[3]uint64) uint64 {
	b := []byte{2, 0, byte(len(entries)), 0, 0, 0, 0, 0}
	for _, e := range entries {
		for _, v := range e {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	return m.block(b, true)
}

func (m *miniPST) node(nid uint32, data, sub uint64) {
	m.nodes = append(m.nodes, [3]uint64{uint64(nid), data, sub})
}

// page writes a leaf page of entries and returns its offset.
func (m *miniPST) page(ptype byte, size int, entries [][3]uint64) uint64 {
	slices.SortFunc(entries, func(a, b [3]uint64) int { return int(a[0]) - int(b[0]) })
	pg := make([]byte, 512)
	for i, e := range entries {
		binary.LittleEndian.PutUint64(pg[i*size:], e[0])
		binary.LittleEndian.PutUint64(pg[i*size+8:], e[1])
		if ptype == 0x80 {
			binary.LittleEndian.PutUint16(pg[i*size+16:], uint16(e[2]))
		} else {
			binary.LittleEndian.PutUint64(pg[i*size+16:], e[2])
		}
	}
	pg[488], pg[489], pg[490], pg[496], pg[497] = byte(len(entries)), byte(488/size), byte(size), ptype, ptype
	for len(m.data)%512 != 0 {
		m.data = append(m.data, 0)
	}
	off := uint64(len(m.data))
	m.data = append(m.data, pg...)
	return off
}

func (m *miniPST) bytes() []byte {
	nbt := m.page(0x81, 32, m.nodes)
	bbt := m.page(0x80, 24, m.blocks)
	copy(m.data, "!BDN\x00\x00\x00\x00SM")
	binary.LittleEndian.PutUint16(m.data[10:], 23)
	binary.LittleEndian.PutUint64(m.data[224:], nbt)
	binary.LittleEndian.PutUint64(m.data[240:], bbt)
	return m.data
}

// TestPSTAttachedMessage reads a mailbox whose message has an attached
// message and a file, in a folder found through the hierarchy table.
func TestPSTAttachedMessage(t *testing.T) {
	str := func(id uint16, s string) testProp { return testProp{id, ptUnicode, utf16le(s)} }
	long := func(id uint16, v uint32) testProp {
		return testProp{id, ptLong, binary.LittleEndian.AppendUint32(nil, v)}
	}
	m := newMiniPST()
	m.node(nidMessageStore, m.block(pcHeap(str(pidDisplayName, "Mini")), false), 0)
	m.node(nidNameToID, m.block(pcHeap(), false), 0)
	m.node(nidRootFolder&^0x1F|0x0D, m.block(tcHeap(testRow{0x8022, "Inbox"}), false), 0)
	m.node(0x8022&^0x1F|0x0E, m.block(tcHeap(testRow{0x200024, "Outer"}), false), 0)
	inner := m.block(pcHeap(str(pidMessageClass, "IPM.Note"), str(pidSubject, "Inner"), str(pidBody, "inner body")), false)
	obj := append(binary.LittleEndian.AppendUint32(nil, 0x8045), 0, 0, 0, 0)
	att1 := m.block(pcHeap(long(pidAttachMethod, attachEmbedded), str(pidAttachLongName, "fwd.msg"), testProp{pidAttachData, ptObject, obj}), false)
	att2 := m.block(pcHeap(long(pidAttachMethod, attachByValue), str(pidAttachLongName, "a.txt"), testProp{pidAttachData, ptBinary, []byte("attached text")}), false)
	sub := m.subnodes(
		[3]uint64{nidAttachments, m.block(tcHeap(testRow{0x8025, ""}, testRow{0x8065, ""}), false), 0},
		[3]uint64{0x8025, att1, m.subnodes([3]uint64{0x8045, inner, 0})},
		[3]uint64{0x8065, att2, 0},
	)
	outer := m.block(pcHeap(str(pidMessageClass, "IPM.Note"), str(pidSubject, "Outer"), str(pidBody, "outer body")), false)
	m.node(0x200024, outer, sub)
	data := m.bytes()

	d := extractBytes(t, newPSTExtractor(t, DefaultLimits(), t.TempDir()), "mini.pst", "", data)
	if d.Err != nil || d.Meta.Title != "Mini" || len(d.Children) != 1 {
		t.Fatalf("mailbox: %v, %q, %d items", d.Err, d.Meta.Title, len(d.Children))
	}
	msg := d.Children[0]
	if msg.Name != "Inbox/Outer" || msg.Text != "Outer\n\nouter body\n" || len(msg.Children) != 2 {
		t.Fatalf("message %q %q, %d children, %v", msg.Name, msg.Text, len(msg.Children), msg.Err)
	}
	fwd, file := msg.Children[0], msg.Children[1]
	if fwd.Name != "fwd.msg" || fwd.MediaType != mediaOutlook || fwd.Meta.Subject != "Inner" || fwd.Text != "Inner\n\ninner body\n" || len(fwd.Path) != 3 {
		t.Errorf("attached message: %+v", fwd)
	}
	if file.Name != "a.txt" || file.Text != "attached text" || file.Err != nil {
		t.Errorf("attached file: %+v", file)
	}
	checkInvariants(t, d, DefaultLimits(), 0)
}

// TestPSTCycles checks a folder listed as its own subfolder and a message
// attached to itself: both end, with ErrMalformed and ErrTooDeep.
func TestPSTCycles(t *testing.T) {
	str := func(id uint16, s string) testProp { return testProp{id, ptUnicode, utf16le(s)} }
	m := newMiniPST()
	m.node(nidMessageStore, m.block(pcHeap(str(pidDisplayName, "Loops")), false), 0)
	m.node(nidNameToID, m.block(pcHeap(), false), 0)
	m.node(nidRootFolder&^0x1F|0x0D, m.block(tcHeap(testRow{0x8022, "Inbox"}), false), 0)
	m.node(0x8022&^0x1F|0x0D, m.block(tcHeap(testRow{0x8022, "Inbox"}), false), 0)
	m.node(0x8022&^0x1F|0x0E, m.block(tcHeap(testRow{0x200024, "Self"}), false), 0)
	msg := m.block(pcHeap(str(pidMessageClass, "IPM.Note"), str(pidSubject, "Self"), str(pidBody, "again")), false)
	obj := append(binary.LittleEndian.AppendUint32(nil, 0x8045), 0, 0, 0, 0)
	att := m.block(pcHeap(testProp{pidAttachMethod, ptLong, []byte{attachEmbedded, 0, 0, 0}}, testProp{pidAttachData, ptObject, obj}), false)
	table := m.block(tcHeap(testRow{0x8025, ""}), false)
	// The attachment's subnodes hold the message, whose subnodes are the
	// message's own: each level attaches the message again.
	top := (m.bid + 8) | 2
	inner := m.subnodes([3]uint64{0x8045, msg, top})
	if got := m.subnodes([3]uint64{nidAttachments, table, 0}, [3]uint64{0x8025, att, inner}); got != top {
		t.Fatalf("subnode block %#x, predicted %#x", got, top)
	}
	m.node(0x200024, msg, top)

	lim := DefaultLimits()
	lim.MaxDepth = 6
	d := extractBytes(t, newPSTExtractor(t, lim, t.TempDir()), "loops.pst", "", m.bytes())
	var xe *Error
	if !errors.Is(d.Err, ErrMalformed) || !errors.As(d.Err, &xe) || xe.Op != "read folder Inbox/Inbox" || len(d.Children) != 1 {
		t.Fatalf("folder cycle: %v, %d items", d.Err, len(d.Children))
	}
	deep := find(d, func(c *Document) bool { return errors.Is(c.Err, ErrTooDeep) })
	if deep == nil || len(deep.Path) != lim.MaxDepth+1 || count(d) != lim.MaxDepth+1 {
		t.Fatalf("self-attached message: %d documents, deepest %v", count(d), deep)
	}
	checkInvariants(t, d, lim, 0)
}
