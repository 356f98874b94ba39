package extract

import (
	"encoding/binary"
	"fmt"
)

// lzfuPrebuffer is the initial dictionary of compressed RTF (MS-OXRTFCP
// 2.1.2.1); it is 207 bytes long.
const lzfuPrebuffer = "{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"

// Compression types of compressed RTF.
const (
	lzfuCompressed   = 0x75465A4C // "LZFu"
	lzfuUncompressed = 0x414C454D // "MELA"
)

// decompressRTF decompresses an Outlook PR_RTF_COMPRESSED value
// (MS-OXRTFCP): LZ77 over a 4 KiB ring dictionary. The declared size is
// checked against the job's decompression budget and ratio before any
// work, and the output never exceeds it.
func decompressRTF(j *job, in []byte) ([]byte, error) {
	le := binary.LittleEndian
	if len(in) < 16 {
		return nil, fmt.Errorf("%w: compressed RTF header truncated", ErrMalformed)
	}
	compSize, rawSize, typ := int64(le.Uint32(in)), int64(le.Uint32(in[4:])), le.Uint32(in[8:])
	body := in[16:]
	if compSize-12 < int64(len(body)) && compSize >= 12 {
		body = body[:compSize-12]
	}
	switch typ {
	case lzfuUncompressed:
		return body[:min(int64(len(body)), rawSize)], nil
	case lzfuCompressed:
	default:
		return nil, fmt.Errorf("%w: compressed RTF of unknown type 0x%08x", ErrMalformed, typ)
	}
	// Each token of 2 bytes makes at most 17: a larger declared size is a
	// lie, not a reason to allocate.
	rawSize = min(rawSize, 9*int64(len(body)))
	if err := j.checkDeclared(rawSize, int64(len(in))); err != nil {
		return nil, err
	}
	out, err := lzfu(body, int(rawSize))
	j.inflated.Add(int64(len(out)))
	return out, err
}

// lzfu decodes body until its end token or max bytes of output.
func lzfu(body []byte, max int) ([]byte, error) {
	var dict [4096]byte
	copy(dict[:], lzfuPrebuffer)
	w := len(lzfuPrebuffer)
	out := make([]byte, 0, max)
	for i := 0; i < len(body); {
		ctl := body[i]
		i++
		for bit := 0; bit < 8; bit++ {
			if len(out) >= max {
				return out, nil
			}
			if i >= len(body) {
				return out, fmt.Errorf("%w: compressed RTF truncated", ErrMalformed)
			}
			if ctl&(1<<bit) == 0 {
				dict[w] = body[i]
				w = (w + 1) & 4095
				out = append(out, body[i])
				i++
				continue
			}
			if i+1 >= len(body) {
				return out, fmt.Errorf("%w: compressed RTF truncated", ErrMalformed)
			}
			ref := int(body[i])<<8 | int(body[i+1])
			i += 2
			off, n := ref>>4, ref&15+2
			if off == w {
				return out, nil // the end token
			}
			for k := 0; k < n && len(out) < max; k++ {
				c := dict[(off+k)&4095]
				dict[w] = c
				w = (w + 1) & 4095
				out = append(out, c)
			}
		}
	}
	return out, fmt.Errorf("%w: compressed RTF without an end token", ErrMalformed)
}
