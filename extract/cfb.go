package extract

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
)

// Media types of the formats stored in compound files.
const (
	mediaDOC = "application/msword"
	mediaXLS = "application/vnd.ms-excel"
	mediaPPT = "application/vnd.ms-powerpoint"
	mediaMSG = "application/vnd.ms-outlook"
)

// Special sector numbers of a compound file (MS-CFB 2.1).
const (
	cfbMaxRegular = 0xFFFFFFFA
	cfbEnd        = 0xFFFFFFFE
	cfbNone       = 0xFFFFFFFF
)

// cfb is a compound file (MS-CFB) read from memory. Every sector chain is
// checked while it is followed: a sector out of range, a cycle or a sector
// claimed by two streams is ErrMalformed, so reading every stream of a
// file costs at most its size in memory and its sector count in steps.
type cfb struct {
	// root is the storage the document readers start from: 0, or an
	// embedded object's storage (see embeddedObjects).
	root int
	data []byte
	ss   int // sector size
	v3   bool
	fat  []uint32
	// owner records which chain claimed each sector: 0 none, else the
	// claiming directory entry + 1 (or a negative id for the directory
	// and the mini FAT).
	owner     []int32
	minifat   []uint32
	miniOwner []int32
	mini      []byte // the mini stream
	cutoff    uint64
	dir       []cfbEntry
	kids      map[int][]int
	seen      []bool
	streams   map[int][]byte
}

// cfbEntry is a directory entry.
type cfbEntry struct {
	name               string
	typ                byte // 1 storage, 2 stream, 5 root
	left, right, child uint32
	start              uint32
	size               uint64
	created, modified  time.Time
	clsid              [16]byte // the class of a storage's object (MS-CFB 2.6.1)
}

func cfbErr(format string, a ...any) error {
	return fmt.Errorf("%w: compound file: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// openCFB reads the header, the FAT, the directory and the mini FAT.
func openCFB(data []byte) (*cfb, error) {
	if len(data) < 512 || string(data[:8]) != string(magicCFB) {
		return nil, cfbErr("header truncated")
	}
	le := binary.LittleEndian
	shift := le.Uint16(data[0x1E:])
	if shift != 9 && shift != 12 || le.Uint16(data[0x20:]) != 6 {
		return nil, cfbErr("sector size 2^%d, mini sector size 2^%d", shift, le.Uint16(data[0x20:]))
	}
	f := &cfb{data: data, ss: 1 << shift, v3: shift == 9, kids: make(map[int][]int), streams: make(map[int][]byte)}
	if len(data) < f.ss {
		return nil, cfbErr("header truncated")
	}
	nsect := (len(data) - f.ss + f.ss - 1) / f.ss
	f.owner = make([]int32, nsect)
	f.cutoff = uint64(le.Uint32(data[0x38:]))
	if err := f.readFAT(int(le.Uint32(data[0x2C:])), le.Uint32(data[0x44:])); err != nil {
		return nil, err
	}
	if err := f.readDir(le.Uint32(data[0x30:])); err != nil {
		return nil, err
	}
	if err := f.readMini(le.Uint32(data[0x3C:])); err != nil {
		return nil, err
	}
	return f, nil
}

// sector returns sector n, shorter than a sector only at the end of a
// truncated file; nil when it lies outside the file.
func (f *cfb) sector(n uint32) []byte {
	off := (int64(n) + 1) * int64(f.ss)
	if int64(n) >= int64(len(f.owner)) || off >= int64(len(f.data)) {
		return nil
	}
	return f.data[off:min(off+int64(f.ss), int64(len(f.data)))]
}

// readFAT collects the FAT sectors listed by the header's DIFAT and the
// DIFAT chain, and concatenates their entries.
func (f *cfb) readFAT(nfat int, next uint32) error {
	le := binary.LittleEndian
	if nfat > len(f.owner) {
		return cfbErr("%d FAT sectors in a file of %d sectors", nfat, len(f.owner))
	}
	var sects []uint32
	add := func(b []byte) {
		for i := 0; i+4 <= len(b) && len(sects) < nfat; i += 4 {
			if s := le.Uint32(b[i:]); s < cfbMaxRegular {
				sects = append(sects, s)
			}
		}
	}
	add(f.data[0x4C:512])
	seen := make(map[uint32]bool)
	for len(sects) < nfat && next < cfbMaxRegular {
		b := f.sector(next)
		if b == nil || len(b) < f.ss || seen[next] {
			return cfbErr("DIFAT sector %d out of range or cyclic", next)
		}
		seen[next] = true
		add(b[:f.ss-4])
		next = le.Uint32(b[f.ss-4:])
	}
	f.fat = make([]uint32, 0, len(sects)*f.ss/4)
	for _, s := range sects {
		b := f.sector(s)
		if b == nil {
			return cfbErr("FAT sector %d out of range", s)
		}
		for i := 0; i+4 <= len(b); i += 4 {
			f.fat = append(f.fat, le.Uint32(b[i:]))
		}
	}
	return nil
}

// chain follows a sector chain from start in table, claiming each sector
// for id in owner.
func chain(start uint32, table []uint32, owner []int32, id int32, what string) ([]uint32, error) {
	var out []uint32
	for s := start; s != cfbEnd; s = table[s] {
		if int64(s) >= int64(len(table)) || int64(s) >= int64(len(owner)) {
			return out, cfbErr("%s: sector %d out of range", what, s)
		}
		switch owner[s] {
		case 0:
		case id:
			return out, cfbErr("%s: cyclic sector chain at sector %d", what, s)
		default:
			return out, cfbErr("%s: sector %d belongs to two streams", what, s)
		}
		owner[s] = id
		out = append(out, s)
	}
	return out, nil
}

// readDir reads the directory entries.
func (f *cfb) readDir(start uint32) error {
	sects, err := chain(start, f.fat, f.owner, -1, "directory")
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	for _, s := range sects {
		b := f.sector(s)
		for e := 0; e+128 <= len(b); e += 128 {
			r := b[e : e+128]
			n := min(int(le.Uint16(r[0x40:])), 64)
			u := make([]uint16, 0, 32)
			for i := 0; i+1 < n; i += 2 {
				if c := le.Uint16(r[i:]); c != 0 {
					u = append(u, c)
				}
			}
			ent := cfbEntry{name: string(utf16.Decode(u)), typ: r[0x42], left: le.Uint32(r[0x44:]),
				right: le.Uint32(r[0x48:]), child: le.Uint32(r[0x4C:]), start: le.Uint32(r[0x74:]),
				size: le.Uint64(r[0x78:]), created: filetime(le.Uint64(r[0x64:])), modified: filetime(le.Uint64(r[0x6C:]))}
			copy(ent.clsid[:], r[0x50:0x60])
			if f.v3 {
				ent.size &= 0xFFFFFFFF
			}
			f.dir = append(f.dir, ent)
		}
	}
	if len(f.dir) == 0 || f.dir[0].typ != 5 {
		return cfbErr("no root entry")
	}
	f.seen = make([]bool, len(f.dir))
	f.seen[0] = true
	return nil
}

// readMini reads the mini FAT and the mini stream (the root's stream).
func (f *cfb) readMini(start uint32) error {
	if start >= cfbMaxRegular {
		return nil
	}
	sects, err := chain(start, f.fat, f.owner, -2, "mini FAT")
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	for _, s := range sects {
		b := f.sector(s)
		for i := 0; i+4 <= len(b); i += 4 {
			f.minifat = append(f.minifat, le.Uint32(b[i:]))
		}
	}
	root := &f.dir[0]
	mini, err := f.regular(0, root)
	if err != nil {
		return err
	}
	f.mini = mini
	f.miniOwner = make([]int32, len(mini)/64)
	return nil
}

// children returns the entries of storage i in name order; an entry
// reached twice anywhere in the file (a cyclic tree, or a storage that
// contains itself) is ErrMalformed.
func (f *cfb) children(i int) ([]int, error) {
	if k, ok := f.kids[i]; ok {
		return k, nil
	}
	var out []int
	stack := []uint32{f.dir[i].child}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == cfbNone {
			continue
		}
		if int64(n) >= int64(len(f.dir)) {
			return out, cfbErr("directory entry %d out of range", n)
		}
		if f.seen[n] {
			return out, cfbErr("directory entry %d (%q) reached twice: the tree is cyclic (a storage, or an attached message, inside itself)", n, f.dir[n].name)
		}
		f.seen[n] = true
		e := &f.dir[n]
		out = append(out, int(n))
		stack = append(stack, e.left, e.right)
	}
	f.kids[i] = out
	return out, nil
}

// lookup returns the child of storage i named name (case-insensitive, as
// MS-CFB compares names), or -1.
func (f *cfb) lookup(i int, name string) int {
	kids, _ := f.children(i)
	for _, k := range kids {
		if strings.EqualFold(f.dir[k].name, name) {
			return k
		}
	}
	return -1
}

// stream returns the content of stream entry i.
func (f *cfb) stream(i int) ([]byte, error) {
	if b, ok := f.streams[i]; ok {
		return b, nil
	}
	e := &f.dir[i]
	if e.typ != 2 {
		return nil, cfbErr("entry %q is not a stream", e.name)
	}
	if e.size > uint64(len(f.data)) {
		return nil, cfbErr("stream %q claims %d bytes in a file of %d", e.name, e.size, len(f.data))
	}
	var b []byte
	var err error
	if e.size < f.cutoff {
		b, err = f.miniStream(i, e)
	} else {
		b, err = f.regular(i, e)
	}
	if err != nil {
		return nil, err
	}
	f.streams[i] = b
	return b, nil
}

// streamNamed returns the stream named name in storage i; ok is false
// when there is none.
func (f *cfb) streamNamed(i int, name string) ([]byte, bool, error) {
	k := f.lookup(i, name)
	if k < 0 || f.dir[k].typ != 2 {
		return nil, false, nil
	}
	b, err := f.stream(k)
	return b, true, err
}

// regular reads a stream stored in regular sectors: a slice of the file
// when its sectors are contiguous, else a copy.
func (f *cfb) regular(i int, e *cfbEntry) ([]byte, error) {
	if e.size == 0 {
		return nil, nil
	}
	sects, err := chain(e.start, f.fat, f.owner, int32(i+1), "stream "+e.name)
	if err != nil {
		return nil, err
	}
	if uint64(len(sects))*uint64(f.ss) < e.size {
		return nil, cfbErr("stream %q truncated: %d sectors for %d bytes", e.name, len(sects), e.size)
	}
	contiguous := true
	for k := 1; k < len(sects) && contiguous; k++ {
		contiguous = sects[k] == sects[k-1]+1
	}
	if contiguous {
		off := (int64(sects[0]) + 1) * int64(f.ss)
		if off+int64(e.size) > int64(len(f.data)) {
			return nil, cfbErr("stream %q runs past the end of the file", e.name)
		}
		return f.data[off : off+int64(e.size)], nil
	}
	out := make([]byte, 0, e.size)
	for _, s := range sects {
		b := f.sector(s)
		if b == nil {
			return nil, cfbErr("stream %q: sector %d past the end of the file", e.name, s)
		}
		out = append(out, b[:min(uint64(len(b)), e.size-uint64(len(out)))]...)
		if uint64(len(out)) == e.size {
			break
		}
	}
	if uint64(len(out)) < e.size {
		return nil, cfbErr("stream %q truncated", e.name)
	}
	return out, nil
}

// miniStream reads a stream stored in the mini stream.
func (f *cfb) miniStream(i int, e *cfbEntry) ([]byte, error) {
	if e.size == 0 {
		return nil, nil
	}
	sects, err := chain(e.start, f.minifat, f.miniOwner, int32(i+1), "mini stream "+e.name)
	if err != nil {
		return nil, err
	}
	if uint64(len(sects))*64 < e.size {
		return nil, cfbErr("mini stream %q truncated", e.name)
	}
	out := make([]byte, 0, e.size)
	for _, s := range sects {
		off := int(s) * 64
		out = append(out, f.mini[off:off+int(min(64, e.size-uint64(len(out))))]...)
		if uint64(len(out)) == e.size {
			break
		}
	}
	return out, nil
}

// digest hashes the streams under storage i (their names and contents,
// depth first in name order) and returns their total size: the identity
// of an embedded object that has no bytes of its own.
func (f *cfb) digest(i int) ([32]byte, int64, error) {
	h := sha256.New()
	var size int64
	var walk func(i, depth int) error
	walk = func(i, depth int) error {
		if depth > 64 {
			return cfbErr("storages nested deeper than 64")
		}
		kids, err := f.children(i)
		if err != nil {
			return err
		}
		for _, k := range sortedByName(f, kids) {
			h.Write([]byte(f.dir[k].name + "\x00"))
			switch f.dir[k].typ {
			case 1:
				if err := walk(k, depth+1); err != nil {
					return err
				}
			case 2:
				b, err := f.stream(k)
				if err != nil {
					return err
				}
				h.Write(b)
				size += int64(len(b))
			}
		}
		return nil
	}
	err := walk(i, 0)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, size, err
}

func sortedByName(f *cfb, kids []int) []int {
	out := slices.Clone(kids)
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(f.dir[a].name, f.dir[b].name) })
	return out
}

// filetime converts a Windows FILETIME (100 ns since 1601) to a time;
// zero stays zero.
func filetime(v uint64) time.Time {
	if v == 0 || v >= 1<<63 {
		return time.Time{}
	}
	const epochDiff = 116444736000000000 // 1601-01-01 to 1970-01-01 in 100 ns
	if v < epochDiff {
		return time.Time{}
	}
	d := v - epochDiff
	return time.Unix(int64(d/1e7), int64(d%1e7)*100).UTC()
}
