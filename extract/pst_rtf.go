package extract

import (
	"encoding/binary"
	"fmt"
)

// lzfuDict is the dictionary a compressed RTF stream starts with
// ([MS-OXRTFCP] 2.1.2.1).
const lzfuDict = `{\rtf1\ansi\mac\deff0\deftab720{\fonttbl;}{\f0\fnil \froman \fswiss \fmodern \fscript \fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\colortbl\red0\green0\blue0` + "\r\n" + `\par \pard\plain\f0\fs20\b\i\u\tab\tx`

// decompressRTF undoes the compression of PidTagRtfCompressed
// ([MS-OXRTFCP]): "MELA" streams are stored as they are, "LZFu" streams
// are LZ77 with a 4 KiB ring dictionary. At most limit bytes are produced.
func decompressRTF(b []byte, limit int) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: compressed rtf header truncated", ErrMalformed)
	}
	size := int(binary.LittleEndian.Uint32(b[4:]))
	data := b[16:]
	switch string(b[8:12]) {
	case "MELA":
		return data[:min(len(data), size, limit)], nil
	case "LZFu":
	default:
		return nil, fmt.Errorf("%w: compressed rtf of unknown type %q", ErrMalformed, b[8:12])
	}
	var dict [4096]byte
	w := copy(dict[:], lzfuDict)
	out := make([]byte, 0, min(size, limit, 16*len(data)))
	for i := 0; i < len(data); {
		ctl := data[i]
		i++
		for bit := 0; bit < 8 && i < len(data); bit++ {
			if len(out) >= limit {
				return out, nil
			}
			if ctl&(1<<bit) == 0 {
				out = append(out, data[i])
				dict[w] = data[i]
				w = (w + 1) & 4095
				i++
				continue
			}
			if i+1 >= len(data) {
				return out, nil
			}
			ref := int(data[i])<<8 | int(data[i+1])
			i += 2
			off, n := ref>>4, ref&15+2
			if off == w {
				return out, nil
			}
			for k := 0; k < n && len(out) < limit; k++ {
				c := dict[(off+k)&4095]
				out = append(out, c)
				dict[w] = c
				w = (w + 1) & 4095
			}
		}
	}
	return out, nil
}
