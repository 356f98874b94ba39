package extract

import (
	"encoding/binary"
)

// The lists, tables and properties (LTP) layer of a PST file ([MS-PST]
// 2.3): the heap-on-node, its B-tree-on-heap, property contexts (one
// object's properties) and table contexts (rows of a folder or message).

// Property types ([MS-OXCDATA] 2.11.1).
const (
	ptI2      = 0x0002
	ptLong    = 0x0003
	ptFloat   = 0x0004
	ptDouble  = 0x0005
	ptCY      = 0x0006
	ptAppTime = 0x0007
	ptError   = 0x000A
	ptBoolean = 0x000B
	ptObject  = 0x000D
	ptI8      = 0x0014
	ptString8 = 0x001E
	ptUnicode = 0x001F
	ptSysTime = 0x0040
	ptBinary  = 0x0102
)

// fixedSize returns the size of a fixed-size property type, 0 for a
// variable one.
func fixedSize(t uint16) int {
	switch t {
	case ptBoolean:
		return 1
	case ptI2:
		return 2
	case ptLong, ptFloat, ptError:
		return 4
	case ptDouble, ptCY, ptAppTime, ptI8, ptSysTime:
		return 8
	}
	return 0
}

// pstHeap is a heap-on-node: the node's data blocks, each with its page
// map of allocations.
type pstHeap struct {
	blocks [][]byte
	client byte   // bClientSig: 0xBC property context, 0x7C table context
	root   uint32 // hidUserRoot
}

func newHeap(blocks [][]byte) (*pstHeap, error) {
	if len(blocks) == 0 || len(blocks[0]) < 12 || blocks[0][2] != 0xEC {
		return nil, errPSTMalformed("not a heap-on-node")
	}
	b := blocks[0]
	return &pstHeap{blocks: blocks, client: b[3], root: binary.LittleEndian.Uint32(b[4:])}, nil
}

// get returns the allocation hid (nil for hid 0).
func (h *pstHeap) get(hid uint32) ([]byte, error) {
	if hid == 0 {
		return nil, nil
	}
	if hid&0x1F != 0 {
		return nil, errPSTMalformed("%#x is not a heap id", hid)
	}
	idx, blk := int(hid>>5&0x7FF), int(hid>>16)
	if blk >= len(h.blocks) {
		return nil, errPSTMalformed("heap id %#x: block %d of %d", hid, blk, len(h.blocks))
	}
	b := h.blocks[blk]
	if len(b) < 2 {
		return nil, errPSTMalformed("heap block %d of %d bytes", blk, len(b))
	}
	pm := int(binary.LittleEndian.Uint16(b))
	if pm+4 > len(b) {
		return nil, errPSTMalformed("heap block %d: page map at %d", blk, pm)
	}
	n := int(binary.LittleEndian.Uint16(b[pm:]))
	at := pm + 4 + 2*(idx-1)
	if idx == 0 || idx > n || at+4 > len(b) {
		return nil, errPSTMalformed("heap id %#x: allocation %d of %d", hid, idx, n)
	}
	start, end := int(binary.LittleEndian.Uint16(b[at:])), int(binary.LittleEndian.Uint16(b[at+2:]))
	if start > end || end > len(b) {
		return nil, errPSTMalformed("heap id %#x spans %d..%d of %d bytes", hid, start, end, len(b))
	}
	return b[start:end], nil
}

// bth calls fn for every record of the B-tree-on-heap whose header is
// allocation hid, and returns its key and data sizes.
func (h *pstHeap) bth(hid uint32, fn func(key, data []byte) error) (keySize, dataSize int, err error) {
	hdr, err := h.get(hid)
	if err != nil {
		return 0, 0, err
	}
	if len(hdr) < 8 || hdr[0] != 0xB5 {
		return 0, 0, errPSTMalformed("heap id %#x is not a b-tree-on-heap header", hid)
	}
	keySize, dataSize, levels := int(hdr[1]), int(hdr[2]), int(hdr[3])
	if keySize == 0 || dataSize == 0 || levels > pstMaxBTreeDepth {
		return 0, 0, errPSTMalformed("b-tree-on-heap with keys of %d, data of %d bytes, %d levels", keySize, dataSize, levels)
	}
	seen := make(map[uint32]bool)
	var walk func(hid uint32, level int) error
	walk = func(hid uint32, level int) error {
		if seen[hid] {
			return errPSTMalformed("b-tree-on-heap record %#x reached twice", hid)
		}
		seen[hid] = true
		recs, err := h.get(hid)
		if err != nil {
			return err
		}
		size := keySize + dataSize
		if level > 0 {
			size = keySize + 4
		}
		for i := 0; i+size <= len(recs); i += size {
			r := recs[i : i+size]
			if level == 0 {
				err = fn(r[:keySize], r[keySize:])
			} else {
				err = walk(binary.LittleEndian.Uint32(r[keySize:]), level-1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return keySize, dataSize, walk(binary.LittleEndian.Uint32(hdr[4:]), levels)
}

// pstObject is a node read as a heap (a property or table context) with
// its subnodes, which hold the values too large for the heap.
type pstObject struct {
	f     *pstFile
	heap  *pstHeap
	sub   map[uint32]pstNode
	limit int64 // largest value read
}

// object reads node n as a heap with subnodes.
func (f *pstFile) object(n pstNode, limit int64) (*pstObject, error) {
	blocks, err := f.data(n.data, limit)
	if err != nil {
		return nil, err
	}
	h, err := newHeap(blocks)
	if err != nil {
		return nil, err
	}
	sub, err := f.subnodes(n.sub)
	if err != nil {
		return nil, err
	}
	return &pstObject{f: f, heap: h, sub: sub, limit: limit}, nil
}

// subobject reads the subnode nid of o as an object.
func (o *pstObject) subobject(nid uint32) (*pstObject, error) {
	n, ok := o.sub[nid]
	if !ok {
		return nil, errPSTMalformed("subnode %#x not found", nid)
	}
	return o.f.object(n, o.limit)
}

// hnid resolves a heap-or-node id: an allocation of the heap or the data
// of a subnode.
func (o *pstObject) hnid(id uint32) ([]byte, error) {
	if id&0x1F == 0 {
		return o.heap.get(id)
	}
	n, ok := o.sub[id]
	if !ok {
		return nil, errPSTMalformed("subnode %#x not found", id)
	}
	return o.f.bytes(n.data, o.limit)
}

// pstProp is one property: its type and its value, or the reference to
// it (hnid) when it is not inline.
type pstProp struct {
	typ    uint16
	inline []byte
	hnid   uint32
}

// props reads o as a property context.
func (o *pstObject) props() (map[uint16]pstProp, error) {
	if o.heap.client != 0xBC {
		return nil, errPSTMalformed("not a property context (%#x)", o.heap.client)
	}
	out := make(map[uint16]pstProp)
	k, d, err := o.heap.bth(o.heap.root, func(key, data []byte) error {
		p := pstProp{typ: binary.LittleEndian.Uint16(data)}
		if n := fixedSize(p.typ); n > 0 && n <= 4 {
			p.inline = data[2 : 2+n]
		} else {
			p.hnid = binary.LittleEndian.Uint32(data[2:])
		}
		out[binary.LittleEndian.Uint16(key)] = p
		return nil
	})
	if err == nil && (k != 2 || d != 6) {
		err = errPSTMalformed("property context with keys of %d, data of %d bytes", k, d)
	}
	return out, err
}

// value returns the bytes of p.
func (o *pstObject) value(p pstProp) ([]byte, error) {
	if p.inline != nil {
		return p.inline, nil
	}
	return o.hnid(p.hnid)
}

// pstColumn is a column of a table context.
type pstColumn struct {
	typ       uint16
	off, size int
	bit       int
}

// rows calls fn for each row of o read as a table context, with a
// function returning the property id of a row.
func (o *pstObject) rows(fn func(row pstRow) error) error {
	if o.heap.client != 0x7C {
		return errPSTMalformed("not a table context (%#x)", o.heap.client)
	}
	info, err := o.heap.get(o.heap.root)
	if err != nil {
		return err
	}
	if len(info) < 22 || info[0] != 0x7C || 22+8*int(info[1]) > len(info) {
		return errPSTMalformed("table context header of %d bytes", len(info))
	}
	ncols := int(info[1])
	rowSize := int(binary.LittleEndian.Uint16(info[8:]))
	ceb := int(binary.LittleEndian.Uint16(info[6:]))
	if rowSize == 0 || ceb+(ncols+7)/8 > rowSize {
		return errPSTMalformed("table rows of %d bytes with the cell bitmap at %d", rowSize, ceb)
	}
	cols := make(map[uint16]pstColumn, ncols)
	for i := range ncols {
		c := info[22+8*i:]
		col := pstColumn{typ: binary.LittleEndian.Uint16(c), off: int(binary.LittleEndian.Uint16(c[4:])), size: int(c[6]), bit: int(c[7])}
		if col.off+col.size > rowSize || col.bit >= ncols {
			return errPSTMalformed("table column %d outside its row", i)
		}
		cols[binary.LittleEndian.Uint16(c[2:])] = col
	}
	var blocks [][]byte
	switch hnid := binary.LittleEndian.Uint32(info[14:]); {
	case hnid == 0:
	case hnid&0x1F == 0:
		b, err := o.heap.get(hnid)
		if err != nil {
			return err
		}
		blocks = [][]byte{b}
	default:
		n, ok := o.sub[hnid]
		if !ok {
			return errPSTMalformed("table rows in missing subnode %#x", hnid)
		}
		if blocks, err = o.f.data(n.data, o.limit); err != nil {
			return err
		}
	}
	for _, b := range blocks {
		for i := 0; i+rowSize <= len(b); i += rowSize {
			if err := fn(pstRow{o: o, cols: cols, data: b[i : i+rowSize], ceb: ceb}); err != nil {
				return err
			}
		}
	}
	return nil
}

// pstRow is one row of a table context.
type pstRow struct {
	o    *pstObject
	cols map[uint16]pstColumn
	data []byte
	ceb  int
}

// prop returns the property id of the row, ok false when the row has no
// such cell.
func (r pstRow) prop(id uint16) (pstProp, bool) {
	c, ok := r.cols[id]
	if !ok || r.data[r.ceb+c.bit/8]&(0x80>>(c.bit%8)) == 0 {
		return pstProp{}, false
	}
	cell := r.data[c.off : c.off+c.size]
	if n := fixedSize(c.typ); n > 0 {
		if n > len(cell) {
			return pstProp{}, false
		}
		return pstProp{typ: c.typ, inline: cell[:n]}, true
	}
	if len(cell) < 4 {
		return pstProp{}, false
	}
	return pstProp{typ: c.typ, hnid: binary.LittleEndian.Uint32(cell)}, true
}

// long returns an integer cell of the row.
func (r pstRow) long(id uint16) (uint32, bool) {
	p, ok := r.prop(id)
	if !ok || len(p.inline) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(p.inline), true
}
