package extract

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// decode returns the decoded data of stream s, decrypted and unfiltered.
// Decompressed bytes count against the job's limits.
func (d *pdfDoc) decode(s *pdfStream) ([]byte, error) {
	if s.off > s.end || s.end > len(d.data) {
		return nil, fmt.Errorf("%w: stream out of range", ErrMalformed)
	}
	data := d.data[s.off:s.end]
	filters := pdfArray{}
	switch f := d.resolve(s.dict["Filter"]).(type) {
	case pdfName:
		filters = pdfArray{f}
	case pdfArray:
		filters = f
	}
	params := pdfArray{}
	switch pr := d.resolve(s.dict["DecodeParms"]).(type) {
	case pdfDict:
		params = pdfArray{pr}
	case pdfArray:
		params = pr
	}
	if d.crypt != nil && s.dict["Type"] != pdfName("XRef") && !(len(filters) > 0 && d.resolve(filters[0]) == pdfName("Crypt")) {
		data = d.crypt.decryptStream(data, s.ref, s.dict)
	}
	for i, f := range filters {
		var parm pdfDict
		if i < len(params) {
			parm = d.dict(params[i])
		}
		var err error
		data, err = d.filter(d.name(f), parm, data)
		if err != nil {
			return data, err
		}
	}
	return data, nil
}

// filter applies one decoding filter.
func (d *pdfDoc) filter(name pdfName, parm pdfDict, in []byte) ([]byte, error) {
	j := d.p.j
	switch name {
	case "FlateDecode", "Fl":
		var r io.Reader
		if zr, err := zlib.NewReader(bytes.NewReader(in)); err == nil {
			r = zr
		} else {
			r = flate.NewReader(bytes.NewReader(in))
		}
		out, err := j.readAllHint(j.inflate(r, int64(len(in))), int64(len(in))*4)
		if err != nil {
			if isSentinel(err) && !errors.Is(err, ErrMalformed) {
				return nil, err
			}
			// Truncated or corrupt tails are common: keep what decoded.
			if len(out) == 0 {
				return nil, fmt.Errorf("%w: flate: %w", ErrMalformed, err)
			}
		}
		return predict(out, parm)
	case "LZWDecode", "LZW":
		early := true
		if v, ok := pdfInt(parm["EarlyChange"]); ok && v == 0 {
			early = false
		}
		out, err := lzwDecode(in, early, d.limit(len(in)))
		if err != nil {
			return nil, err
		}
		if err := d.charge(len(out)); err != nil {
			return nil, err
		}
		return predict(out, parm)
	case "ASCIIHexDecode", "AHx":
		out, _ := hexDecode(in)
		return out, nil
	case "ASCII85Decode", "A85":
		return ascii85Decode(in), nil
	case "RunLengthDecode", "RL":
		out, err := runLengthDecode(in, d.limit(len(in)))
		if err != nil {
			return nil, err
		}
		return out, d.charge(len(out))
	case "Crypt":
		return in, nil
	case "":
		return in, nil
	}
	return nil, fmt.Errorf("%w: filter %s", ErrUnsupported, name)
}

// limit is the most a stream of n compressed bytes may expand to.
func (d *pdfDoc) limit(n int) int {
	j := d.p.j
	lim := max(int64(float64(n)*j.lim.MaxCompressionRatio), ratioSlack)
	return int(min(lim, j.lim.MaxDecompressedSize-j.inflated.Load()+1))
}

// charge counts n decompressed bytes against the tree's budget.
func (d *pdfDoc) charge(n int) error {
	j := d.p.j
	if j.inflated.Add(int64(n)) > j.lim.MaxDecompressedSize {
		return fmt.Errorf("%w: tree decompresses to more than MaxDecompressedSize (%d bytes)", ErrBomb, j.lim.MaxDecompressedSize)
	}
	return nil
}

// predict undoes PNG (10-15) and TIFF (2) predictors.
func predict(data []byte, parm pdfDict) ([]byte, error) {
	pred, _ := pdfInt(parm["Predictor"])
	if pred < 2 {
		return data, nil
	}
	colors, bpc, columns := int64(1), int64(8), int64(1)
	if v, ok := pdfInt(parm["Colors"]); ok && v > 0 && v <= 32 {
		colors = v
	}
	if v, ok := pdfInt(parm["BitsPerComponent"]); ok && v > 0 && v <= 16 {
		bpc = v
	}
	if v, ok := pdfInt(parm["Columns"]); ok && v > 0 && v <= 1<<20 {
		columns = v
	}
	bpp := int(max(1, (colors*bpc+7)/8))
	rowLen := int((colors*bpc*columns + 7) / 8)
	if pred == 2 {
		if bpc != 8 {
			return data, nil
		}
		for r := 0; r+rowLen <= len(data); r += rowLen {
			row := data[r : r+rowLen]
			for i := bpp; i < len(row); i++ {
				row[i] += row[i-bpp]
			}
		}
		return data, nil
	}
	out := make([]byte, 0, len(data))
	prev := make([]byte, rowLen)
	for r := 0; r+1+rowLen <= len(data); r += 1 + rowLen {
		ft := data[r]
		row := data[r+1 : r+1+rowLen]
		for i := range row {
			var a, b, c byte
			if i >= bpp {
				a = row[i-bpp]
				c = prev[i-bpp]
			}
			b = prev[i]
			switch ft {
			case 1:
				row[i] += a
			case 2:
				row[i] += b
			case 3:
				row[i] += byte((int(a) + int(b)) / 2)
			case 4:
				row[i] += paeth(a, b, c)
			}
		}
		out = append(out, row...)
		copy(prev, row)
	}
	return out, nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lzwDecode decodes PDF LZW data (MSB-first codes, 9-12 bits).
func lzwDecode(in []byte, early bool, limit int) ([]byte, error) {
	var out []byte
	type entry struct {
		prefix int
		c      byte
		length int
	}
	table := make([]entry, 258, 4096)
	for i := range 256 {
		table[i] = entry{-1, byte(i), 1}
	}
	var bitbuf uint32
	nbits, width := 0, 9
	prev := -1
	tmp := make([]byte, 0, 4096)
	emit := func(code int) byte {
		tmp = tmp[:0]
		for c := code; c >= 0; c = table[c].prefix {
			tmp = append(tmp, table[c].c)
		}
		for i := len(tmp) - 1; i >= 0; i-- {
			out = append(out, tmp[i])
		}
		return tmp[len(tmp)-1]
	}
	for _, b := range in {
		bitbuf = bitbuf<<8 | uint32(b)
		nbits += 8
		for nbits >= width {
			code := int(bitbuf>>(nbits-width)) & (1<<width - 1)
			nbits -= width
			switch {
			case code == 256:
				table = table[:258]
				width, prev = 9, -1
				continue
			case code == 257:
				return out, nil
			case prev < 0:
				if code > 255 {
					return out, fmt.Errorf("%w: lzw: bad first code", ErrMalformed)
				}
				emit(code)
			case code < len(table):
				first := emit(code)
				if len(table) < 4096 {
					table = append(table, entry{prev, first, table[prev].length + 1})
				}
			case code == len(table):
				// The KwKwK case: prev's string plus its own first byte.
				c := prev
				for table[c].prefix >= 0 {
					c = table[c].prefix
				}
				if len(table) < 4096 {
					table = append(table, entry{prev, table[c].c, table[prev].length + 1})
				}
				emit(code)
			default:
				return out, fmt.Errorf("%w: lzw: bad code", ErrMalformed)
			}
			prev = code
			if len(out) > limit {
				return nil, fmt.Errorf("%w: LZW stream expands past its limit", ErrBomb)
			}
			n := len(table)
			if early {
				n++
			}
			switch {
			case n > 2047:
				width = 12
			case n > 1023:
				width = 11
			case n > 511:
				width = 10
			}
		}
	}
	return out, nil
}

// ascii85Decode decodes ASCII85 leniently (white space skipped, 'z' for
// four zeros, '~>' ends).
func ascii85Decode(in []byte) []byte {
	out := make([]byte, 0, len(in)*4/5+4)
	var v uint32
	n := 0
	if bytes.HasPrefix(in, []byte("<~")) {
		in = in[2:]
	}
	for _, c := range in {
		switch {
		case c == '~':
			goto done
		case c == 'z' && n == 0:
			out = append(out, 0, 0, 0, 0)
		case c >= '!' && c <= 'u':
			v = v*85 + uint32(c-'!')
			n++
			if n == 5 {
				out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
				v, n = 0, 0
			}
		}
	}
done:
	if n > 1 {
		for k := n; k < 5; k++ {
			v = v*85 + 84
		}
		b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		out = append(out, b[:n-1]...)
	}
	return out
}

// runLengthDecode decodes the RunLengthDecode filter.
func runLengthDecode(in []byte, limit int) ([]byte, error) {
	var out []byte
	for i := 0; i < len(in); {
		n := int(in[i])
		i++
		switch {
		case n == 128:
			return out, nil
		case n < 128:
			end := min(len(in), i+n+1)
			out = append(out, in[i:end]...)
			i = end
		default:
			if i < len(in) {
				out = append(out, bytes.Repeat(in[i:i+1], 257-n)...)
				i++
			}
		}
		if len(out) > limit {
			return nil, fmt.Errorf("%w: run-length stream expands past its limit", ErrBomb)
		}
	}
	return out, nil
}
