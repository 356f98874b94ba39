package index

import (
	"context"
	"fmt"
	"time"

	"github.com/simdex/simdex/index/sketch"
)

// Chunk is one content-defined chunk of normalised text: the KDD'05
// file–chunk graph records only its hash and length.
type Chunk struct {
	Hash uint64
	Len  uint32
}

// Fingerprint is everything the index keeps of one document's content. It is
// produced by a Fingerprinter in one pass over the normalised text and is
// immutable once stored.
type Fingerprint struct {
	// Scheme identifies the normalisation version and every fingerprint
	// parameter. Fingerprints with different schemes are never compared.
	Scheme uint32
	// RawSHA256 is the SHA-256 of the object's raw bytes (Native_SHA_256).
	RawSHA256 [32]byte
	// RawSize is the raw object size in bytes.
	RawSize int64
	// TextSHA256 is the SHA-256 of the normalised text: equal values mean
	// identical content whatever the format.
	TextSHA256 [32]byte
	// TextSize is the length of the normalised text in bytes.
	TextSize int64
	// Chunks are the content-defined chunks in document order.
	Chunks []Chunk
	// Samples is the sorted, duplicate-free set of sampled shingle hashes
	// (Mod-n): it estimates containment in both directions.
	Samples []uint32
	// MinHash is the fixed-size MinHash sketch: it estimates resemblance and
	// feeds the LSH band index.
	MinHash []uint32
	// MinHashBits is how many low bits of each MinHash slot are kept
	// (sketch.Params.MinHashBits); 0 means all 32.
	MinHashBits uint8
	// SampleBase and SampleLevel are 0 for Mod-n samples chosen by hash
	// bits they do not keep. With hierarchical sampling
	// (sketch.Params.SampleFloor) every sample is 0 mod 2^SampleLevel,
	// SampleLevel at least SampleBase, log2 of the densest modulus; two
	// fingerprints are compared at the coarser of their two levels.
	SampleBase, SampleLevel uint8
	// SimHash is the 64-bit SimHash compared by Hamming distance.
	SimHash uint64
}

// AnchorEvery is the share of samples posted as anchors: one in
// AnchorEvery, chosen by value so that every document picks the same ones.
// Anchors find contained documents the LSH bands cannot (a short text
// inside a long one has a low resemblance) without posting every sample.
const AnchorEvery = 8

// Anchors returns the samples posted for candidate lookup, as 64-bit keys
// (the sample in the high half), in sample order. With hierarchical
// sampling they are the samples 0 mod AnchorEvery·2^SampleBase, which a
// text keeps at every level it may have (sketch.MaxLevels).
func (fp *Fingerprint) Anchors() []uint64 {
	mask := uint32(AnchorEvery - 1)
	if fp.SampleLevel > 0 {
		mask = AnchorEvery<<fp.SampleBase - 1
	}
	var out []uint64
	for _, s := range fp.Samples {
		if s&mask == 0 {
			out = append(out, uint64(s)<<32)
		}
	}
	return out
}

// Resemblance estimates the resemblance of fp and b from their MinHash
// slots, corrected for slots equal by chance when they keep fewer than 32
// bits (sketch.ResemblanceBits).
func (fp *Fingerprint) Resemblance(b *Fingerprint) float64 {
	return sketch.ResemblanceBits(fp.MinHash, b.MinHash, int(fp.MinHashBits))
}

// Containments estimates how much of fp is in b and of b in fp from their
// samples, at the coarser of their sample levels (sketch.ContainmentsAt).
func (fp *Fingerprint) Containments(b *Fingerprint) (ab, ba float64) {
	return fp.containments(fp.Samples, b, b.Samples)
}

// containments estimates both containments of fp and b from their samples
// as, of which some (templates) may have been left out, at the coarser of
// their sample levels.
func (fp *Fingerprint) containments(as []uint32, b *Fingerprint, bs []uint32) (ab, ba float64) {
	return sketch.ContainmentsAt(as, int(fp.SampleLevel), bs, int(b.SampleLevel))
}

// sampleResemblance estimates resemblance from samples as containments
// does.
func (fp *Fingerprint) sampleResemblance(as []uint32, b *Fingerprint, bs []uint32) float64 {
	return sketch.SampleResemblanceAt(as, int(fp.SampleLevel), bs, int(b.SampleLevel))
}

// Refingerprinter is a Store that may hold fingerprints of another scheme
// than the index's (an older normal form, other chunk or sketch
// parameters) and can make them again from the texts it keeps. The Index
// calls it once, in New, before anything else reads the store.
type Refingerprinter interface {
	// Refingerprint fingerprints every stored content again with fn,
	// from its kept text, if the store's fingerprints are of another
	// scheme than the one it was opened with, and records that scheme;
	// it returns the number of contents fingerprinted again (0 when the
	// scheme was current). Contents whose texts become identical are
	// merged, their documents pointing at one content; a text fn refuses
	// (ErrEmpty) leaves its documents stored with that error. Document
	// ids are kept. It is all or nothing: on error (a content without a
	// kept text gives one wrapping ErrSchemeMismatch and ErrNoText)
	// nothing is changed.
	Refingerprint(ctx context.Context, fn func(text []byte) (*Fingerprint, []uint64, error)) (int, error)
}

// refingerprint has a store holding fingerprints of another scheme make
// them again with the index's (see Refingerprinter).
func (ix *Index) refingerprint(ctx context.Context) error {
	r, ok := ix.store.(Refingerprinter)
	if !ok {
		return nil
	}
	start := time.Now()
	n, err := r.Refingerprint(ctx, func(text []byte) (*Fingerprint, []uint64, error) {
		fp, err := ix.Fingerprint([32]byte{}, 0, text)
		if err != nil {
			return nil, nil, err
		}
		return fp, sketch.Bands(ix.opts.Sketch, fp.MinHash, nil), nil
	})
	if err != nil {
		return fmt.Errorf("fingerprint the stored texts again: %w", err)
	}
	if n > 0 {
		ix.logger.Info("fingerprinted the stored texts again with a new scheme", "contents", n, "seconds", time.Since(start).Seconds())
	}
	return nil
}
