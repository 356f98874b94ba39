package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// encodingVersion is the first byte of an encoded fingerprint body:
// version 2 packs the samples (Elias–Fano), version 1 (still read) holds
// them as 4-byte words.
const encodingVersion = 2

// ErrCorrupt reports an encoded fingerprint that cannot be decoded.
var ErrCorrupt = errors.New("corrupt fingerprint encoding")

// maxEncodedItems bounds every count in an encoded fingerprint so that a
// corrupt length can never make the decoder allocate without limit.
const maxEncodedItems = 1 << 24

// AppendBody appends the compact encoding of fp's chunks, samples and
// MinHash to dst. Hashes, sizes and the SimHash are stored by the store in
// columns of their own. The layout is described in index/docs/format.md.
// fp.Samples must be sorted and distinct.
func (fp *Fingerprint) AppendBody(dst []byte) []byte {
	dst = append(dst, encodingVersion)
	dst = binary.AppendUvarint(dst, uint64(len(fp.Chunks)))
	for _, c := range fp.Chunks {
		dst = binary.LittleEndian.AppendUint64(dst, c.Hash)
		dst = binary.AppendUvarint(dst, uint64(c.Len))
	}
	dst = appendSamples(dst, fp.Samples)
	dst = binary.AppendUvarint(dst, uint64(len(fp.MinHash)))
	for _, m := range fp.MinHash {
		dst = binary.LittleEndian.AppendUint32(dst, m)
	}
	return dst
}

// DecodeBody fills fp's chunks, samples and MinHash from an encoding made
// by AppendBody, reusing fp's slices.
func (fp *Fingerprint) DecodeBody(b []byte) error {
	if len(b) == 0 || (b[0] != encodingVersion && b[0] != 1) {
		return fmt.Errorf("decode fingerprint: %w: version byte", ErrCorrupt)
	}
	version := b[0]
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
	if version == 1 {
		n = d.count()
		fp.Samples = slices.Grow(fp.Samples[:0], n)
		for i := 0; i < n && d.err == nil; i++ {
			fp.Samples = append(fp.Samples, d.u32())
		}
	} else {
		fp.Samples = d.samples(fp.Samples[:0])
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

// appendSamples appends sorted, distinct 32-bit samples in Elias–Fano
// form: their count; l, the number of low bits of each kept as they are;
// the n·l low bits, packed from the least significant bit of each byte;
// then the high parts (v >> l) as a bit vector, bit high+i set for the
// i-th sample, preceded by its length in bytes. Samples are uniform
// hashes, so l is about log2(2³²/n) and each takes l+2 bits: 25 bits for
// the 440 samples of a 7 KB text instead of 32, a fifth of the index's
// fingerprints.
func appendSamples(dst []byte, samples []uint32) []byte {
	n := len(samples)
	dst = binary.AppendUvarint(dst, uint64(n))
	if n == 0 {
		return dst
	}
	l := lowBits(n)
	dst = append(dst, byte(l))
	mask := uint64(1)<<l - 1
	var acc uint64
	var nacc uint
	for _, v := range samples {
		acc |= (uint64(v) & mask) << nacc
		for nacc += l; nacc >= 8; nacc -= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	}
	if nacc > 0 {
		dst = append(dst, byte(acc))
	}
	highLen := (int(uint64(samples[n-1])>>l) + n + 7) / 8
	dst = binary.AppendUvarint(dst, uint64(highLen))
	at := len(dst)
	dst = append(dst, make([]byte, highLen)...)
	for i, v := range samples {
		p := int(uint64(v)>>l) + i
		dst[at+p/8] |= 1 << (p % 8)
	}
	return dst
}

// lowBits is the number of low bits Elias–Fano keeps of each of n 32-bit
// values: floor(log2(2³²/n)).
func lowBits(n int) uint {
	return uint(32 - bits.Len(uint(n-1)))
}

// samples decodes samples encoded by appendSamples, appending them to dst.
func (d *decoder) samples(dst []uint32) []uint32 {
	n := d.count()
	if n == 0 || d.err != nil {
		return dst
	}
	if len(d.b) == 0 {
		d.fail("sample bits")
		return dst
	}
	l := uint(d.b[0])
	d.b = d.b[1:]
	lowLen := (n*int(l) + 7) / 8
	if l != lowBits(n) || len(d.b) < lowLen {
		d.fail("sample low bits")
		return dst
	}
	low := d.b[:lowLen]
	d.b = d.b[lowLen:]
	highLen := d.uvarint()
	if d.err != nil || highLen > uint64(len(d.b)) {
		d.fail("sample high bits")
		return dst
	}
	high := d.b[:highLen]
	d.b = d.b[highLen:]
	dst = slices.Grow(dst, n)
	mask := uint64(1)<<l - 1
	i, last := 0, -1
	for w := 0; w < len(high); w += 8 {
		word := loadLE64(high, w)
		for word != 0 {
			if i == n {
				d.fail("sample high bits: too many")
				return dst
			}
			p := w*8 + bits.TrailingZeros64(word)
			word &= word - 1
			at := i * int(l)
			v := uint64(p-i)<<l | loadLE64(low, at>>3)>>(at&7)&mask
			if v > 1<<32-1 {
				d.fail("sample beyond 32 bits")
				return dst
			}
			dst = append(dst, uint32(v))
			i, last = i+1, p
		}
	}
	if i != n || last/8 != len(high)-1 {
		d.fail("sample high bits: count or length")
	}
	return dst
}

// loadLE64 returns the 8 bytes of b from at, little-endian, the bytes
// beyond b's end read as zero.
func loadLE64(b []byte, at int) uint64 {
	if at+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[at:])
	}
	var t [8]byte
	copy(t[:], b[at:])
	return binary.LittleEndian.Uint64(t[:])
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
