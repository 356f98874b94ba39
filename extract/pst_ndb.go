package extract

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The node database (NDB) layer of a PST/OST file ([MS-PST] 2.2): the
// header, the node and block B-trees, blocks and their data and subnode
// trees. Every offset, count and size read from the file is checked
// against the file and against the structure it sits in, every tree is
// walked with a fixed maximum depth, and nothing is allocated from a size
// the file declares before the bytes are there: a crafted file can make a
// read fail, never loop, panic or allocate without bound.

// Limits of the NDB structures.
const (
	pstMaxBTreeDepth = 16      // B-tree levels; real files have 2 to 4
	pstPageCache     = 256     // B-tree pages kept (512 bytes each)
	pstMaxBlock      = 8192    // largest block of a 512-byte-page file
	pstMaxSubnodes   = 1 << 16 // subnode entries of one node
	pstMaxBlocks     = 1 << 16 // data blocks of one node
)

// pstCryptPermute is mpbbI of [MS-PST] 5.1, the table that decodes blocks
// of files with NDB_CRYPT_PERMUTE ("compressible encryption").
var pstCryptPermute = [256]byte{
	0x47, 0xf1, 0xb4, 0xe6, 0x0b, 0x6a, 0x72, 0x48, 0x85, 0x4e, 0x9e, 0xeb, 0xe2, 0xf8, 0x94, 0x53,
	0xe0, 0xbb, 0xa0, 0x02, 0xe8, 0x5a, 0x09, 0xab, 0xdb, 0xe3, 0xba, 0xc6, 0x7c, 0xc3, 0x10, 0xdd,
	0x39, 0x05, 0x96, 0x30, 0xf5, 0x37, 0x60, 0x82, 0x8c, 0xc9, 0x13, 0x4a, 0x6b, 0x1d, 0xf3, 0xfb,
	0x8f, 0x26, 0x97, 0xca, 0x91, 0x17, 0x01, 0xc4, 0x32, 0x2d, 0x6e, 0x31, 0x95, 0xff, 0xd9, 0x23,
	0xd1, 0x00, 0x5e, 0x79, 0xdc, 0x44, 0x3b, 0x1a, 0x28, 0xc5, 0x61, 0x57, 0x20, 0x90, 0x3d, 0x83,
	0xb9, 0x43, 0xbe, 0x67, 0xd2, 0x46, 0x42, 0x76, 0xc0, 0x6d, 0x5b, 0x7e, 0xb2, 0x0f, 0x16, 0x29,
	0x3c, 0xa9, 0x03, 0x54, 0x0d, 0xda, 0x5d, 0xdf, 0xf6, 0xb7, 0xc7, 0x62, 0xcd, 0x8d, 0x06, 0xd3,
	0x69, 0x5c, 0x86, 0xd6, 0x14, 0xf7, 0xa5, 0x66, 0x75, 0xac, 0xb1, 0xe9, 0x45, 0x21, 0x70, 0x0c,
	0x87, 0x9f, 0x74, 0xa4, 0x22, 0x4c, 0x6f, 0xbf, 0x1f, 0x56, 0xaa, 0x2e, 0xb3, 0x78, 0x33, 0x50,
	0xb0, 0xa3, 0x92, 0xbc, 0xcf, 0x19, 0x1c, 0xa7, 0x63, 0xcb, 0x1e, 0x4d, 0x3e, 0x4b, 0x1b, 0x9b,
	0x4f, 0xe7, 0xf0, 0xee, 0xad, 0x3a, 0xb5, 0x59, 0x04, 0xea, 0x40, 0x55, 0x25, 0x51, 0xe5, 0x7a,
	0x89, 0x38, 0x68, 0x52, 0x7b, 0xfc, 0x27, 0xae, 0xd7, 0xbd, 0xfa, 0x07, 0xf4, 0xcc, 0x8e, 0x5f,
	0xef, 0x35, 0x9c, 0x84, 0x2b, 0x15, 0xd5, 0x77, 0x34, 0x49, 0xb6, 0x12, 0x0a, 0x7f, 0x71, 0x88,
	0xfd, 0x9d, 0x18, 0x41, 0x7d, 0x93, 0xd8, 0x58, 0x2c, 0xce, 0xfe, 0x24, 0xaf, 0xde, 0xb8, 0x36,
	0xc8, 0xa1, 0x80, 0xa6, 0x99, 0x98, 0xa8, 0x2f, 0x0e, 0x81, 0x65, 0x73, 0xe4, 0xc2, 0xa2, 0x8a,
	0xd4, 0xe1, 0x11, 0xd0, 0x08, 0x8b, 0x2a, 0xf2, 0xed, 0x9a, 0x64, 0x3f, 0xc1, 0x6c, 0xf9, 0xec,
}

// pstCryptS is mpbbS of [MS-PST] 5.1, an involution; with mpbbI and its
// inverse mpbbR it decodes blocks of files with NDB_CRYPT_CYCLIC ("high
// encryption").
var pstCryptS = [256]byte{
	0x14, 0x53, 0x0f, 0x56, 0xb3, 0xc8, 0x7a, 0x9c, 0xeb, 0x65, 0x48, 0x17, 0x16, 0x15, 0x9f, 0x02,
	0xcc, 0x54, 0x7c, 0x83, 0x00, 0x0d, 0x0c, 0x0b, 0xa2, 0x62, 0xa8, 0x76, 0xdb, 0xd9, 0xed, 0xc7,
	0xc5, 0xa4, 0xdc, 0xac, 0x85, 0x74, 0xd6, 0xd0, 0xa7, 0x9b, 0xae, 0x9a, 0x96, 0x71, 0x66, 0xc3,
	0x63, 0x99, 0xb8, 0xdd, 0x73, 0x92, 0x8e, 0x84, 0x7d, 0xa5, 0x5e, 0xd1, 0x5d, 0x93, 0xb1, 0x57,
	0x51, 0x50, 0x80, 0x89, 0x52, 0x94, 0x4f, 0x4e, 0x0a, 0x6b, 0xbc, 0x8d, 0x7f, 0x6e, 0x47, 0x46,
	0x41, 0x40, 0x44, 0x01, 0x11, 0xcb, 0x03, 0x3f, 0xf7, 0xf4, 0xe1, 0xa9, 0x8f, 0x3c, 0x3a, 0xf9,
	0xfb, 0xf0, 0x19, 0x30, 0x82, 0x09, 0x2e, 0xc9, 0x9d, 0xa0, 0x86, 0x49, 0xee, 0x6f, 0x4d, 0x6d,
	0xc4, 0x2d, 0x81, 0x34, 0x25, 0x87, 0x1b, 0x88, 0xaa, 0xfc, 0x06, 0xa1, 0x12, 0x38, 0xfd, 0x4c,
	0x42, 0x72, 0x64, 0x13, 0x37, 0x24, 0x6a, 0x75, 0x77, 0x43, 0xff, 0xe6, 0xb4, 0x4b, 0x36, 0x5c,
	0xe4, 0xd8, 0x35, 0x3d, 0x45, 0xb9, 0x2c, 0xec, 0xb7, 0x31, 0x2b, 0x29, 0x07, 0x68, 0xa3, 0x0e,
	0x69, 0x7b, 0x18, 0x9e, 0x21, 0x39, 0xbe, 0x28, 0x1a, 0x5b, 0x78, 0xf5, 0x23, 0xca, 0x2a, 0xb0,
	0xaf, 0x3e, 0xfe, 0x04, 0x8c, 0xe7, 0xe5, 0x98, 0x32, 0x95, 0xd3, 0xf6, 0x4a, 0xe8, 0xa6, 0xea,
	0xe9, 0xf3, 0xd5, 0x2f, 0x70, 0x20, 0xf2, 0x1f, 0x05, 0x67, 0xad, 0x55, 0x10, 0xce, 0xcd, 0xe3,
	0x27, 0x3b, 0xda, 0xba, 0xd7, 0xc2, 0x26, 0xd4, 0x91, 0x1d, 0xd2, 0x1c, 0x22, 0x33, 0xf8, 0xfa,
	0xf1, 0x5a, 0xef, 0xcf, 0x90, 0xb6, 0x8b, 0xb5, 0xbd, 0xc0, 0xbf, 0x08, 0x97, 0x1e, 0x6c, 0xe2,
	0x61, 0xe0, 0xc6, 0xc1, 0x59, 0xab, 0xbb, 0x58, 0xde, 0x5f, 0xdf, 0x60, 0x79, 0x7e, 0xb2, 0x8a,
}

// decodeCyclic undoes NDB_CRYPT_CYCLIC on the block b whose key is the low
// 32 bits of its bid ([MS-PST] 5.2, CryptCyclic, its own inverse).
func decodeCyclic(b []byte, key uint32) {
	var r [256]byte
	for i, v := range pstCryptPermute {
		r[v] = byte(i)
	}
	w := uint16(key ^ key>>16)
	for i, c := range b {
		c += byte(w)
		c = r[c]
		c += byte(w >> 8)
		c = pstCryptS[c]
		c -= byte(w >> 8)
		c = pstCryptPermute[c]
		b[i] = c - byte(w)
		w++
	}
}

// pstFile is an opened PST or OST file read through an io.ReaderAt.
type pstFile struct {
	ctx     context.Context
	r       io.ReaderAt
	size    int64
	unicode bool // 64-bit identifiers and offsets (wVer >= 23)
	ost     bool
	crypt   byte
	nbt     int64 // offset of the node B-tree's root page
	bbt     int64 // offset of the block B-tree's root page
	pages   map[int64][]byte
}

// pstNode is a leaf entry of the node B-tree or of a subnode tree.
type pstNode struct {
	nid  uint32
	data uint64 // bid of the node's data
	sub  uint64 // bid of its subnode tree, 0 for none
}

// errPSTMalformed builds an ErrMalformed error.
func errPSTMalformed(format string, args ...any) error {
	return fmt.Errorf("%w: pst: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// openPST reads the header of the file r of the given size.
func openPST(ctx context.Context, r io.ReaderAt, size int64) (*pstFile, error) {
	f := &pstFile{ctx: ctx, r: r, size: size, pages: make(map[int64][]byte)}
	h := make([]byte, 564)
	if err := f.readAt(h[:512], 0); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if string(h[:4]) != "!BDN" {
		return nil, errPSTMalformed("no !BDN signature")
	}
	switch string(h[8:10]) {
	case "SM", "AB":
	case "SO":
		f.ost = true
	default:
		return nil, errPSTMalformed("unknown client signature %q", h[8:10])
	}
	switch ver := binary.LittleEndian.Uint16(h[10:]); {
	case ver == 14 || ver == 15:
		f.nbt = int64(binary.LittleEndian.Uint32(h[188:]))
		f.bbt = int64(binary.LittleEndian.Uint32(h[196:]))
		f.crypt = h[461]
	case ver >= 23 && ver < 36:
		if err := f.readAt(h, 0); err != nil {
			return nil, fmt.Errorf("read header: %w", err)
		}
		f.unicode = true
		f.nbt = int64(binary.LittleEndian.Uint64(h[224:]))
		f.bbt = int64(binary.LittleEndian.Uint64(h[240:]))
		f.crypt = h[513]
	case ver == 36:
		return nil, fmt.Errorf("%w: pst: 4K-page OST (Outlook 2013 and later)", ErrUnsupported)
	default:
		return nil, errPSTMalformed("unknown file version %d", ver)
	}
	switch f.crypt {
	case 0, 1, 2:
	default:
		return nil, fmt.Errorf("%w: pst: unknown encryption method %#x", ErrEncrypted, f.crypt)
	}
	return f, nil
}

// readAt fills p from offset off, which must lie inside the file.
func (f *pstFile) readAt(p []byte, off int64) error {
	if err := f.ctx.Err(); err != nil {
		return err
	}
	if off < 0 || off > f.size || int64(len(p)) > f.size-off {
		return errPSTMalformed("%d bytes at offset %d are past the end of the file (%d bytes)", len(p), off, f.size)
	}
	n, err := f.r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d bytes at %d: %w", len(p), off, err)
}

// idSize is the size of a node or block identifier.
func (f *pstFile) idSize() int {
	if f.unicode {
		return 8
	}
	return 4
}

// id reads an identifier or offset of idSize bytes.
func (f *pstFile) id(b []byte) uint64 {
	if f.unicode {
		return binary.LittleEndian.Uint64(b)
	}
	return uint64(binary.LittleEndian.Uint32(b))
}

// btPage is a parsed B-tree page.
type btPage struct {
	entries []byte
	n, size int // entry count and size
	level   int
}

// page reads the B-tree page at off, checking its type.
func (f *pstFile) page(off int64, ptype byte) (btPage, error) {
	b, ok := f.pages[off]
	if !ok {
		b = make([]byte, 512)
		if err := f.readAt(b, off); err != nil {
			return btPage{}, fmt.Errorf("read b-tree page: %w", err)
		}
		if len(f.pages) >= pstPageCache {
			clear(f.pages)
		}
		f.pages[off] = b
	}
	var pg btPage
	var t byte
	if f.unicode {
		pg = btPage{entries: b[:488], n: int(b[488]), size: int(b[490]), level: int(b[491])}
		t = b[496]
	} else {
		pg = btPage{entries: b[:496], n: int(b[496]), size: int(b[498]), level: int(b[499])}
		t = b[500]
	}
	if t != ptype {
		return btPage{}, errPSTMalformed("b-tree page at %d has type %#x, want %#x", off, t, ptype)
	}
	if pg.size == 0 || pg.n*pg.size > len(pg.entries) {
		return btPage{}, errPSTMalformed("b-tree page at %d holds %d entries of %d bytes", off, pg.n, pg.size)
	}
	return pg, nil
}

// lookup finds key in the B-tree rooted at root and returns its leaf
// entry; ok is false when the key is not there. minLeaf is the smallest
// valid leaf entry.
func (f *pstFile) lookup(root int64, ptype byte, key uint64, minLeaf int) (entry []byte, ok bool, err error) {
	off, want := root, -1
	var mask uint64
	if ptype == 0x80 {
		mask = 1 // the reserved low bit of block ids
	}
	ids := f.idSize()
	for range pstMaxBTreeDepth {
		pg, err := f.page(off, ptype)
		if err != nil {
			return nil, false, err
		}
		if want >= 0 && pg.level != want {
			return nil, false, errPSTMalformed("b-tree page at %d is at level %d, want %d", off, pg.level, want)
		}
		if pg.level == 0 {
			if pg.size < minLeaf {
				return nil, false, errPSTMalformed("b-tree leaf entries of %d bytes", pg.size)
			}
			for i := range pg.n {
				e := pg.entries[i*pg.size : (i+1)*pg.size]
				if f.id(e)&^mask == key {
					return e, true, nil
				}
			}
			return nil, false, nil
		}
		if pg.size < 3*ids {
			return nil, false, errPSTMalformed("b-tree branch entries of %d bytes", pg.size)
		}
		next := -1
		for i := range pg.n {
			if f.id(pg.entries[i*pg.size:]) <= key {
				next = i
			}
		}
		if next < 0 {
			return nil, false, nil
		}
		off = int64(f.id(pg.entries[next*pg.size+2*ids:]))
		want = pg.level - 1
	}
	return nil, false, errPSTMalformed("b-tree deeper than %d levels", pstMaxBTreeDepth)
}

// node looks up nid in the node B-tree.
func (f *pstFile) node(nid uint32) (pstNode, error) {
	n, ok, err := f.nodeIf(nid)
	if err == nil && !ok {
		err = errPSTMalformed("node %#x not found", nid)
	}
	return n, err
}

// nodeIf looks up nid in the node B-tree; ok is false when it is not
// there.
func (f *pstFile) nodeIf(nid uint32) (n pstNode, ok bool, err error) {
	ids := f.idSize()
	e, ok, err := f.lookup(f.nbt, 0x81, uint64(nid), 3*ids+4)
	if err != nil {
		return pstNode{}, false, fmt.Errorf("look up node %#x: %w", nid, err)
	}
	if !ok {
		return pstNode{}, false, nil
	}
	return pstNode{nid: nid, data: f.id(e[ids:]), sub: f.id(e[2*ids:])}, true, nil
}

// block reads block bid: decoded if it is a data block, as stored if it is
// an internal (tree) block.
func (f *pstFile) block(bid uint64) ([]byte, error) {
	ids := f.idSize()
	e, ok, err := f.lookup(f.bbt, 0x80, bid&^1, 2*ids+2)
	if err != nil {
		return nil, fmt.Errorf("look up block %#x: %w", bid, err)
	}
	if !ok {
		return nil, errPSTMalformed("block %#x not found", bid)
	}
	off := int64(f.id(e[ids:]))
	cb := int(binary.LittleEndian.Uint16(e[2*ids:]))
	b := make([]byte, cb)
	if err := f.readAt(b, off); err != nil {
		return nil, fmt.Errorf("read block %#x: %w", bid, err)
	}
	switch {
	case bid&2 != 0: // internal blocks are stored as they are
	case f.crypt == 1:
		for i, c := range b {
			b[i] = pstCryptPermute[c]
		}
	case f.crypt == 2:
		decodeCyclic(b, uint32(bid))
	}
	return b, nil
}

// data returns the data blocks of the data tree rooted at bid, in order;
// more than limit bytes in all is ErrTooLarge.
func (f *pstFile) data(bid uint64, limit int64) ([][]byte, error) {
	var out [][]byte
	var total int64
	seen := make(map[uint64]bool)
	var walk func(bid uint64, level int) error
	walk = func(bid uint64, level int) error {
		if seen[bid&^1] {
			return errPSTMalformed("block %#x reached twice in one data tree", bid)
		}
		seen[bid&^1] = true
		b, err := f.block(bid)
		if err != nil {
			return err
		}
		if bid&2 == 0 {
			if level > 0 {
				return errPSTMalformed("data block %#x where an xblock was expected", bid)
			}
			if len(out) >= pstMaxBlocks {
				return errPSTMalformed("more than %d blocks in one node", pstMaxBlocks)
			}
			if total += int64(len(b)); total > limit {
				return fmt.Errorf("%w: pst: node data exceeds %d bytes", ErrTooLarge, limit)
			}
			out = append(out, b)
			return nil
		}
		if len(b) < 8 || b[0] != 1 || (level >= 0 && int(b[1]) != level) || b[1] < 1 || b[1] > 2 {
			return errPSTMalformed("block %#x is not a valid xblock", bid)
		}
		if lcb := int64(binary.LittleEndian.Uint32(b[4:])); level < 0 && lcb > limit {
			return fmt.Errorf("%w: pst: node data of %d bytes exceeds %d", ErrTooLarge, lcb, limit)
		}
		n, ids := int(binary.LittleEndian.Uint16(b[2:])), f.idSize()
		if 8+n*ids > len(b) {
			return errPSTMalformed("xblock %#x lists %d blocks in %d bytes", bid, n, len(b))
		}
		for i := range n {
			if err := walk(f.id(b[8+i*ids:]), int(b[1])-1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(bid, -1)
}

// bytes returns the data of the tree rooted at bid in one slice.
func (f *pstFile) bytes(bid uint64, limit int64) ([]byte, error) {
	blocks, err := f.data(bid, limit)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 1 {
		return blocks[0], nil
	}
	n := 0
	for _, b := range blocks {
		n += len(b)
	}
	out := make([]byte, 0, n)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out, nil
}

// subnodes reads the subnode tree rooted at bid (0: none).
func (f *pstFile) subnodes(bid uint64) (map[uint32]pstNode, error) {
	out := make(map[uint32]pstNode)
	if bid == 0 {
		return out, nil
	}
	ids := f.idSize()
	hdr := 4
	if f.unicode {
		hdr = 8
	}
	var walk func(bid uint64, level int) error
	walk = func(bid uint64, level int) error {
		b, err := f.block(bid)
		if err != nil {
			return err
		}
		if len(b) < hdr || b[0] != 2 || (level >= 0 && int(b[1]) != level) || b[1] > 1 {
			return errPSTMalformed("block %#x is not a valid subnode block", bid)
		}
		n, size := int(binary.LittleEndian.Uint16(b[2:])), 3*ids
		if b[1] == 1 {
			size = 2 * ids
		}
		if hdr+n*size > len(b) {
			return errPSTMalformed("subnode block %#x lists %d entries in %d bytes", bid, n, len(b))
		}
		for i := range n {
			e := b[hdr+i*size:]
			if b[1] == 1 {
				if err := walk(f.id(e[ids:]), 0); err != nil {
					return err
				}
				continue
			}
			if len(out) >= pstMaxSubnodes {
				return errPSTMalformed("more than %d subnodes", pstMaxSubnodes)
			}
			nid := uint32(f.id(e))
			out[nid] = pstNode{nid: nid, data: f.id(e[ids:]), sub: f.id(e[2*ids:])}
		}
		return nil
	}
	if err := walk(bid, -1); err != nil {
		return nil, fmt.Errorf("read subnodes: %w", err)
	}
	return out, nil
}
