package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/simdex/simdex/index/sketch"
)

// encodingVersion is the first byte of an encoded fingerprint body:
// version 2 packs the samples (Elias–Fano), version 1 (still read) holds
// them as 4-byte words. Version 3 adds the sample levels and the MinHash
// width (b-bit MinHash); it is written only for fingerprints that need it,
// so that a scheme without them keeps its bodies byte for byte.
const (
	encodingVersion = 2
	versionLevels   = 3
)

// ErrCorrupt reports an encoded fingerprint that cannot be decoded.
var ErrCorrupt = errors.New("corrupt fingerprint encoding")

// maxEncodedItems bounds every count in an encoded fingerprint so that a
// corrupt length can never make the decoder allocate without limit.
const maxEncodedItems = 1 << 24

// AppendBody appends the compact encoding of fp's chunks, samples and
// MinHash to dst. Hashes, sizes and the SimHash are stored by the store in
// columns of their own. The layout is described in index/docs/format.md.
// fp.Samples must be sorted and distinct.
// With hierarchical samples or a b-bit MinHash it writes version 3, whose
// samples are stored shifted right by their level and whose slots take
// MinHashBits/8 bytes; fp.Samples must then be 0 mod 2^SampleLevel and
// the slots below 2^MinHashBits.
func (fp *Fingerprint) AppendBody(dst []byte) []byte {
	v3 := fp.SampleLevel > 0 || (fp.MinHashBits != 0 && fp.MinHashBits != 32)
	if v3 {
		dst = append(dst, versionLevels)
	} else {
		dst = append(dst, encodingVersion)
	}
	dst = binary.AppendUvarint(dst, uint64(len(fp.Chunks)))
	for _, c := range fp.Chunks {
		dst = binary.LittleEndian.AppendUint64(dst, c.Hash)
		dst = binary.AppendUvarint(dst, uint64(c.Len))
	}
	if !v3 {
		dst = appendSamples(dst, fp.Samples, 0)
		dst = binary.AppendUvarint(dst, uint64(len(fp.MinHash)))
		for _, m := range fp.MinHash {
			dst = binary.LittleEndian.AppendUint32(dst, m)
		}
		return dst
	}
	dst = append(dst, fp.SampleBase, fp.SampleLevel)
	dst = appendSamples(dst, fp.Samples, uint(fp.SampleLevel))
	width := int(fp.MinHashBits)
	if width == 0 {
		width = 32
	}
	dst = append(dst, byte(width))
	dst = binary.AppendUvarint(dst, uint64(len(fp.MinHash)))
	for _, m := range fp.MinHash {
		for i := 0; i < width; i += 8 {
			dst = append(dst, byte(m>>i))
		}
	}
	return dst
}

// DecodeBody fills fp's chunks, samples and MinHash from an encoding made
// by AppendBody, reusing fp's slices.
func (fp *Fingerprint) DecodeBody(b []byte) error {
	if len(b) == 0 || b[0] < 1 || b[0] > versionLevels {
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
	fp.SampleBase, fp.SampleLevel, fp.MinHashBits = 0, 0, 0
	switch version {
	case 1:
		n = d.count()
		fp.Samples = slices.Grow(fp.Samples[:0], n)
		for i := 0; i < n && d.err == nil; i++ {
			fp.Samples = append(fp.Samples, d.u32())
		}
	case encodingVersion:
		fp.Samples = d.samples(fp.Samples[:0], 0)
	default:
		fp.SampleBase, fp.SampleLevel = d.levels()
		fp.Samples = d.samples(fp.Samples[:0], uint(fp.SampleLevel))
	}
	width := 32
	if version == versionLevels {
		width = d.width()
		if width < 32 {
			fp.MinHashBits = uint8(width)
		}
	}
	fp.MinHash = d.slots(fp.MinHash[:0], width)
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
//
// Samples that are all 0 mod 2^shift (hierarchical samples) are stored as
// v >> shift, values of 32−shift bits.
func appendSamples(dst []byte, samples []uint32, shift uint) []byte {
	n := len(samples)
	dst = binary.AppendUvarint(dst, uint64(n))
	if n == 0 {
		return dst
	}
	l := lowBits(n, 32-shift)
	dst = append(dst, byte(l))
	mask := uint64(1)<<l - 1
	var acc uint64
	var nacc uint
	for _, v := range samples {
		acc |= (uint64(v>>shift) & mask) << nacc
		for nacc += l; nacc >= 8; nacc -= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	}
	if nacc > 0 {
		dst = append(dst, byte(acc))
	}
	highLen := (int(uint64(samples[n-1]>>shift)>>l) + n + 7) / 8
	dst = binary.AppendUvarint(dst, uint64(highLen))
	at := len(dst)
	dst = append(dst, make([]byte, highLen)...)
	for i, v := range samples {
		p := int(uint64(v>>shift)>>l) + i
		dst[at+p/8] |= 1 << (p % 8)
	}
	return dst
}

// lowBits is the number of low bits Elias–Fano keeps of each of n values
// of u bits: floor(log2(2^u/n)), at least 0.
func lowBits(n int, u uint) uint {
	return uint(max(0, int(u)-bits.Len(uint(n-1))))
}

// samples decodes samples encoded by appendSamples with shift, appending
// them to dst.
func (d *decoder) samples(dst []uint32, shift uint) []uint32 {
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
	if l != lowBits(n, 32-shift) || len(d.b) < lowLen {
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
			if v > 1<<(32-shift)-1 {
				d.fail("sample beyond 32 bits")
				return dst
			}
			dst = append(dst, uint32(v<<shift))
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

// levels decodes the sample base and level of a version 3 body: both 0,
// or a base in [1, 12] and a level at most sketch.MaxLevels above it.
func (d *decoder) levels() (base, level uint8) {
	if len(d.b) < 2 {
		d.fail("sample levels")
		return 0, 0
	}
	base, level = d.b[0], d.b[1]
	d.b = d.b[2:]
	ok := base == 0 && level == 0 || base >= 1 && base <= 12 && level >= base && level <= base+sketch.MaxLevels
	if !ok {
		d.fail("sample levels")
		return 0, 0
	}
	return base, level
}

// width decodes the bits of a MinHash slot: 8, 16 or 32.
func (d *decoder) width() int {
	if len(d.b) == 0 || (d.b[0] != 8 && d.b[0] != 16 && d.b[0] != 32) {
		d.fail("minhash bits")
		return 32
	}
	w := int(d.b[0])
	d.b = d.b[1:]
	return w
}

// slots decodes a count and that many MinHash slots of width bits each,
// appending them to dst.
func (d *decoder) slots(dst []uint32, width int) []uint32 {
	n := d.count()
	size := width / 8
	if n*size > len(d.b) {
		d.fail("short minhash")
		return dst
	}
	dst = slices.Grow(dst, n)
	for i := 0; i < n; i++ {
		var v uint32
		for j := 0; j < size; j++ {
			v |= uint32(d.b[j]) << (8 * j)
		}
		d.b = d.b[size:]
		dst = append(dst, v)
	}
	return dst
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
