package chunk

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// MaxLen is the largest allowed Max: a chunk length must fit in a Chunk.Len.
const MaxLen = 1 << 30

// Params are the chunk size parameters, in bytes; their mapstructure
// tags name them in a configuration file.
type Params struct {
	// Min is the smallest chunk length; only the last chunk of a text may
	// be shorter.
	Min int `mapstructure:"min"`
	// Avg is the target average chunk length, a power of two. It sets the
	// boundary masks.
	Avg int `mapstructure:"avg"`
	// Max is the largest chunk length.
	Max int `mapstructure:"max"`
}

// DefaultParams returns Min 256, Avg 1024, Max 8192, the parameters the
// package documentation justifies.
func DefaultParams() Params {
	return Params{Min: 256, Avg: 1024, Max: 8192}
}

// ErrInvalidParams is wrapped by every error Validate returns.
var ErrInvalidParams = errors.New("invalid chunk parameters")

// Validate reports every problem with p, each naming the field at fault.
// It requires 0 < Min < Avg < Max <= MaxLen and Avg a power of two between
// 64 and 2^28.
func (p Params) Validate() error {
	var errs []error
	if p.Min < 1 {
		errs = append(errs, fmt.Errorf("%w: Min %d is not positive", ErrInvalidParams, p.Min))
	}
	if p.Avg < 64 || p.Avg > 1<<28 || p.Avg&(p.Avg-1) != 0 {
		errs = append(errs, fmt.Errorf("%w: Avg %d is not a power of two between 64 and 2^28", ErrInvalidParams, p.Avg))
	}
	if p.Min >= p.Avg {
		errs = append(errs, fmt.Errorf("%w: Min %d is not less than Avg %d", ErrInvalidParams, p.Min, p.Avg))
	}
	if p.Max <= p.Avg {
		errs = append(errs, fmt.Errorf("%w: Max %d is not greater than Avg %d", ErrInvalidParams, p.Max, p.Avg))
	}
	if p.Max > MaxLen {
		errs = append(errs, fmt.Errorf("%w: Max %d is greater than %d", ErrInvalidParams, p.Max, MaxLen))
	}
	return errors.Join(errs...)
}

// Chunk is one content-defined chunk.
type Chunk struct {
	// Hash is the 64-bit xxHash (XXH64, seed 0) of the chunk's bytes.
	Hash uint64
	// Len is the chunk's length in bytes.
	Len uint32
}

// masks returns the boundary masks of normalised chunking for p.Avg: the
// top log2(Avg)+2 bits before Avg bytes, the top log2(Avg)-2 bits after.
func masks(avg int) (small, large uint64) {
	shift := bits.Len(uint(max(avg, 1))) - 1
	shift = min(max(shift, 2), 60) // keeps invalid parameters from panicking
	return ^uint64(0) << (64 - shift - 2), ^uint64(0) << (64 - shift + 2)
}

// Cut returns the length of the first chunk of data: len(data) if data is
// no longer than Min, or shorter than Max and without a boundary. p must be
// valid (see Validate); with invalid parameters the cut points are
// meaningless, but Cut still returns a length between 1 and len(data) for
// non-empty data and never panics.
func Cut(p Params, data []byte) int {
	lo := max(p.Min, 0)
	if len(data) <= lo {
		return len(data)
	}
	hi := max(min(len(data), p.Max), lo+1)
	normal := min(max(p.Avg, lo), hi)
	small, large := masks(p.Avg)
	var h uint64
	if n, ok := scan(data[:normal], lo, &h, small); ok {
		return n
	}
	if n, ok := scan(data[:hi], normal, &h, large); ok {
		return n
	}
	return hi
}

// scan rolls the gear hash *h over data[from:] and returns the length up to
// and including the first byte after which *h&mask is zero, or false.
//
// It processes four bytes per step: the hash after each of them is computed
// directly from the hash before the step (h<<k plus a combination of the
// gear values that does not depend on h), so the loop-carried dependency is
// one shift and one add per four bytes instead of per byte.
func scan(data []byte, from int, hp *uint64, mask uint64) (int, bool) {
	n, h, ok := scanFrom(&gear, data, from, *hp, mask)
	*hp = h
	return n, ok
}

// scanFrom is scan with the hash in and out of registers and the gear
// table behind a register (a global's address would be recomputed in the
// loop).
func scanFrom(gt *[256]uint64, data []byte, i int, h, mask uint64) (int, uint64, bool) {
	for ; i+4 <= len(data); i += 4 {
		b := data[i : i+4 : i+4]
		g0 := gt[b[0]]
		a := g0<<1 + gt[b[1]]
		c := a<<1 + gt[b[2]]
		d := c<<1 + gt[b[3]]
		if (h<<1+g0)&mask == 0 {
			return i + 1, h, true
		}
		if (h<<2+a)&mask == 0 {
			return i + 2, h, true
		}
		if (h<<3+c)&mask == 0 {
			return i + 3, h, true
		}
		h = h<<4 + d
		if h&mask == 0 {
			return i + 4, h, true
		}
	}
	for ; i < len(data); i++ {
		h = h<<1 + gt[data[i]]
		if h&mask == 0 {
			return i + 1, h, true
		}
	}
	return 0, h, false
}

// Append appends the chunks covering all of data, in order, to dst and
// returns the extended slice. p must be valid (see Validate).
func Append(p Params, dst []Chunk, data []byte) []Chunk {
	for len(data) > 0 {
		n := Cut(p, data)
		dst = append(dst, Chunk{Hash: xxhash.Sum64(data[:n]), Len: uint32(n)})
		data = data[n:]
	}
	return dst
}
