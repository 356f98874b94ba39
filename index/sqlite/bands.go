package sqlite

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sketch"
)

// contents.bands holds a content's band posting keys in band order, 4
// bytes each, or, since store schema 12, one byte: the number of bands,
// when the keys are those of the content's MinHash slots (as for every
// fingerprint an index makes). The keys are then derived from the body's
// slots where they are needed, which costs a microsecond, and the column
// 1 byte a content instead of 128 (6.1 MB of the 50,000-file scan's
// index). Older contents keep their keys.

// encodeBands returns what contents.bands holds for fp, whose band keys
// are bands (keys, their posting keys).
func encodeBands(fp *index.Fingerprint, bands []uint64, keys []int64) []byte {
	if n := len(bands); n > 0 && n < 256 && slices.Equal(sketch.Bands(sketch.Params{Bands: n}, fp.MinHash, nil), bands) {
		return []byte{byte(n)}
	}
	blob := make([]byte, 0, 4*len(keys))
	for _, k := range keys {
		blob = binary.LittleEndian.AppendUint32(blob, uint32(k))
	}
	return blob
}

// bandKeysOf returns the band posting keys of a content, in band order,
// from its decoded body fp and its contents.bands.
func bandKeysOf(fp *index.Fingerprint, bands []byte) []int64 {
	if len(bands) != 1 {
		return bandKeys(bands)
	}
	hs := sketch.Bands(sketch.Params{Bands: int(bands[0])}, fp.MinHash, nil)
	keys := make([]int64, len(hs))
	for i, h := range hs {
		keys[i] = postingKey(h)
	}
	return keys
}

// contentBandKeys decodes body and returns the band posting keys of the
// content with body and bands.
func contentBandKeys(id int64, body, bands []byte) ([]int64, error) {
	if len(bands) != 1 {
		return bandKeys(bands), nil
	}
	var fp index.Fingerprint
	if err := fp.DecodeBody(body); err != nil {
		return nil, fmt.Errorf("band keys of content %d: %w", id, err)
	}
	return bandKeysOf(&fp, bands), nil
}
