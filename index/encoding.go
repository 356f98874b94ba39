package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// encodingVersion is the first byte of an encoded fingerprint body.
const encodingVersion = 1

// ErrCorrupt reports an encoded fingerprint that cannot be decoded.
var ErrCorrupt = errors.New("corrupt fingerprint encoding")

// maxEncodedItems bounds every count in an encoded fingerprint so that a
// corrupt length can never make the decoder allocate without limit.
const maxEncodedItems = 1 << 24

// AppendBody appends the compact encoding of fp's chunks, samples and
// MinHash to dst. Hashes, sizes and the SimHash are stored by the store in
// columns of their own. The layout is described in index/docs/format.md.
func (fp *Fingerprint) AppendBody(dst []byte) []byte {
	dst = append(dst, encodingVersion)
	dst = binary.AppendUvarint(dst, uint64(len(fp.Chunks)))
	for _, c := range fp.Chunks {
		dst = binary.LittleEndian.AppendUint64(dst, c.Hash)
		dst = binary.AppendUvarint(dst, uint64(c.Len))
	}
	dst = binary.AppendUvarint(dst, uint64(len(fp.Samples)))
	for _, s := range fp.Samples {
		dst = binary.LittleEndian.AppendUint32(dst, s)
	}
	dst = binary.AppendUvarint(dst, uint64(len(fp.MinHash)))
	for _, m := range fp.MinHash {
		dst = binary.LittleEndian.AppendUint32(dst, m)
	}
	return dst
}

// DecodeBody fills fp's chunks, samples and MinHash from an encoding made
// by AppendBody, reusing fp's slices.
func (fp *Fingerprint) DecodeBody(b []byte) error {
	if len(b) == 0 || b[0] != encodingVersion {
		return fmt.Errorf("decode fingerprint: %w: version byte", ErrCorrupt)
	}
	d := decoder{b: b[1:]}
	n := d.count()
	fp.Chunks = slices.Grow(fp.Chunks[:0], n) // n is at most the bytes left
	for i := 0; i < n && d.err == nil; i++ {
		h := d.u64()
		l := d.uvarint()
		if l > 1<<32-1 {
			d.fail("chunk length")
		}
		fp.Chunks = append(fp.Chunks, Chunk{Hash: h, Len: uint32(l)})
	}
	n = d.count()
	fp.Samples = slices.Grow(fp.Samples[:0], n)
	for i := 0; i < n && d.err == nil; i++ {
		fp.Samples = append(fp.Samples, d.u32())
	}
	n = d.count()
	fp.MinHash = slices.Grow(fp.MinHash[:0], n)
	for i := 0; i < n && d.err == nil; i++ {
		fp.MinHash = append(fp.MinHash, d.u32())
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("decode fingerprint: %w", d.err)
	}
	for i := 1; i < len(fp.Samples); i++ {
		if fp.Samples[i] <= fp.Samples[i-1] {
			return fmt.Errorf("decode fingerprint: %w: samples not sorted", ErrCorrupt)
		}
	}
	return nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) count() int {
	v := d.uvarint()
	if v > maxEncodedItems || v > uint64(len(d.b)) {
		d.fail("count")
		return 0
	}
	return int(v)
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail("short uint64")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) u32() uint32 {
	if len(d.b) < 4 {
		d.fail("short uint32")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}
