package extract

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// pdfDoc is a parsed PDF file.
type pdfDoc struct {
	p        *parser
	data     []byte
	xref     map[uint32]pdfXref
	trailer  pdfDict
	cache    map[uint32]any
	loading  map[uint32]bool
	objstms  map[uint32]bool
	scanned  map[uint32]int // object offsets found by scanning the file
	crypt    *pdfCrypt
	encRef   pdfRef
	repaired bool
	forms    map[pdfRef][]byte
	fonts    map[pdfRef]*pdfFont
}

type pdfXref struct {
	off  int    // byte offset, for kind 1
	stm  uint32 // object stream number, for kind 2
	gen  uint16
	kind byte
}

// resolve follows references (bounded; a cycle or missing object is nil).
func (d *pdfDoc) resolve(v any) any {
	for range 16 {
		ref, ok := v.(pdfRef)
		if !ok {
			return v
		}
		v = d.object(ref)
	}
	return nil
}

func (d *pdfDoc) dict(v any) pdfDict {
	switch v := d.resolve(v).(type) {
	case pdfDict:
		return v
	case *pdfStream:
		return v.dict
	}
	return nil
}

func (d *pdfDoc) array(v any) pdfArray {
	a, _ := d.resolve(v).(pdfArray)
	return a
}

func (d *pdfDoc) name(v any) pdfName {
	n, _ := d.resolve(v).(pdfName)
	return n
}

func (d *pdfDoc) num(v any) (float64, bool) { return pdfNum(d.resolve(v)) }

func (d *pdfDoc) str(v any) string {
	s, _ := d.resolve(v).(pdfString)
	return string(s)
}

// object loads indirect object ref.
func (d *pdfDoc) object(ref pdfRef) any {
	if v, ok := d.cache[ref.num]; ok {
		return v
	}
	if d.loading[ref.num] || len(d.cache) > 1<<22 {
		return nil
	}
	d.loading[ref.num] = true
	defer delete(d.loading, ref.num)
	var v any
	x, ok := d.xref[ref.num]
	switch {
	case ok && x.kind == 2:
		d.loadObjStm(x.stm)
		if v, ok := d.cache[ref.num]; ok {
			return v
		}
	case ok && x.kind == 1:
		var err error
		v, err = d.objectAt(x.off, ref.num)
		if err == nil {
			d.cache[ref.num] = v
			return v
		}
	}
	// Missing or wrong offset: look where a scan of the file found it.
	if off, ok := d.scan()[ref.num]; ok {
		if v, err := d.objectAt(off, ref.num); err == nil {
			d.repaired = true
			d.cache[ref.num] = v
			return v
		}
	}
	d.cache[ref.num] = nil
	return nil
}

// objectAt parses "num gen obj ... endobj" at off.
func (d *pdfDoc) objectAt(off int, num uint32) (any, error) {
	if off < 0 || off >= len(d.data) {
		return nil, fmt.Errorf("%w: object %d offset %d out of range", ErrMalformed, num, off)
	}
	l := &pdfLexer{b: d.data, pos: off}
	n, err := l.object(0, false)
	if err != nil {
		return nil, err
	}
	g, err := l.object(0, false)
	if err != nil {
		return nil, err
	}
	kw, _ := l.object(0, false)
	nn, _ := n.(int64)
	gg, _ := g.(int64)
	if kw != pdfOp("obj") || nn != int64(num) {
		return nil, fmt.Errorf("%w: object %d not at offset %d", ErrMalformed, num, off)
	}
	v, err := l.object(0, true)
	if err != nil {
		return nil, err
	}
	ref := pdfRef{num, uint16(gg)}
	if dict, ok := v.(pdfDict); ok {
		save := l.pos
		l.skipSpace()
		if bytes.HasPrefix(d.data[l.pos:], []byte("stream")) {
			return d.streamAt(dict, ref, l.pos+len("stream")), nil
		}
		l.pos = save
	}
	if d.crypt != nil && ref != d.encRef {
		v = d.crypt.decryptStrings(v, ref)
	}
	return v, nil
}

// streamAt finds the data of a stream whose "stream" keyword ends at pos.
func (d *pdfDoc) streamAt(dict pdfDict, ref pdfRef, pos int) *pdfStream {
	if pos < len(d.data) && d.data[pos] == '\r' {
		pos++
	}
	if pos < len(d.data) && d.data[pos] == '\n' {
		pos++
	}
	s := &pdfStream{dict: dict, ref: ref, off: pos}
	if n, ok := pdfInt(dict["Length"]); ok && n >= 0 && int64(pos)+n <= int64(len(d.data)) {
		end := pos + int(n)
		rest := d.data[end:min(len(d.data), end+32)]
		if bytes.HasPrefix(bytes.TrimLeft(rest, " \r\n\t\f\x00"), []byte("endstream")) {
			s.end = end
			return s
		}
	}
	if ref, ok := dict["Length"].(pdfRef); ok && !d.loading[ref.num] {
		if n, ok := pdfInt(d.object(ref)); ok && n >= 0 && int64(pos)+n <= int64(len(d.data)) {
			end := pos + int(n)
			rest := d.data[end:min(len(d.data), end+32)]
			if bytes.HasPrefix(bytes.TrimLeft(rest, " \r\n\t\f\x00"), []byte("endstream")) {
				s.end = end
				return s
			}
		}
	}
	// Wrong or missing Length: up to the next "endstream".
	i := bytes.Index(d.data[pos:], []byte("endstream"))
	if i < 0 {
		s.end = len(d.data)
		return s
	}
	end := pos + i
	if end > pos && d.data[end-1] == '\n' {
		end--
	}
	if end > pos && d.data[end-1] == '\r' {
		end--
	}
	s.end = end
	return s
}

// loadObjStm parses object stream num into the cache.
func (d *pdfDoc) loadObjStm(num uint32) {
	if d.objstms[num] {
		return
	}
	d.objstms[num] = true
	s, ok := d.object(pdfRef{num: num}).(*pdfStream)
	if !ok {
		return
	}
	data, err := d.decode(s)
	if err != nil {
		return
	}
	n, _ := pdfInt(s.dict["N"])
	first, _ := pdfInt(s.dict["First"])
	if first < 0 || first > int64(len(data)) {
		return
	}
	l := &pdfLexer{b: data[:first]}
	type entry struct {
		num uint32
		off int64
	}
	var entries []entry
	for i := int64(0); i < n; i++ {
		a, err1 := l.object(0, false)
		b, err2 := l.object(0, false)
		on, ok1 := a.(int64)
		oo, ok2 := b.(int64)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || on < 0 || on > 1<<31 || oo < 0 {
			break
		}
		entries = append(entries, entry{uint32(on), oo})
	}
	for _, e := range entries {
		if _, done := d.cache[e.num]; done {
			continue
		}
		if x, ok := d.xref[e.num]; ok && (x.kind != 2 || x.stm != num) {
			continue // a newer version lives elsewhere
		}
		if first+e.off >= int64(len(data)) {
			continue
		}
		ol := &pdfLexer{b: data, pos: int(first + e.off)}
		if v, err := ol.object(0, true); err == nil {
			d.cache[e.num] = v
		}
	}
}

// scan finds every "num gen obj" in the file (the last one of a number
// wins), for files whose cross-reference data is damaged.
func (d *pdfDoc) scan() map[uint32]int {
	if d.scanned != nil {
		return d.scanned
	}
	d.scanned = make(map[uint32]int)
	data := d.data
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("obj"))
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		if i < len(data) && !isPDFSpace(data[i]) && !isPDFDelim(data[i]) {
			continue
		}
		// Walk back over "num gen ".
		k := at - 1
		for k >= 0 && isPDFSpace(data[k]) {
			k--
		}
		ge := k
		for k >= 0 && data[k] >= '0' && data[k] <= '9' {
			k--
		}
		if k == ge {
			continue
		}
		for k >= 0 && isPDFSpace(data[k]) {
			k--
		}
		ne := k
		for k >= 0 && data[k] >= '0' && data[k] <= '9' && ne-k < 10 {
			k--
		}
		if k == ne || (k >= 0 && !isPDFSpace(data[k]) && !isPDFDelim(data[k])) {
			continue
		}
		num, err := strconv.ParseUint(string(data[k+1:ne+1]), 10, 32)
		if err != nil {
			continue
		}
		d.scanned[uint32(num)] = k + 1
	}
	return d.scanned
}

// readXref reads the cross-reference sections from startxref back along
// /Prev, newest entries first.
func (d *pdfDoc) readXref() error {
	tail := d.data[max(0, len(d.data)-2048):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return fmt.Errorf("%w: no startxref (truncated?)", ErrMalformed)
	}
	l := &pdfLexer{b: tail, pos: i + len("startxref")}
	v, _ := l.object(0, false)
	off, ok := v.(int64)
	if !ok {
		return fmt.Errorf("%w: bad startxref", ErrMalformed)
	}
	seen := make(map[int64]bool)
	for off > 0 || len(seen) == 0 {
		if seen[off] || len(seen) > 256 {
			break
		}
		seen[off] = true
		trailer, err := d.xrefSection(int(off))
		if err != nil {
			return err
		}
		if d.trailer == nil {
			d.trailer = trailer
		}
		if stm, ok := pdfInt(trailer["XRefStm"]); ok {
			_, _ = d.xrefSection(int(stm))
		}
		prev, ok := pdfInt(trailer["Prev"])
		if !ok {
			break
		}
		off = prev
	}
	return nil
}

// xrefSection reads one xref table or stream at off and returns its
// trailer dictionary.
func (d *pdfDoc) xrefSection(off int) (pdfDict, error) {
	if off < 0 || off >= len(d.data) {
		return nil, fmt.Errorf("%w: xref offset %d out of range", ErrMalformed, off)
	}
	l := &pdfLexer{b: d.data, pos: off}
	l.skipSpace()
	if bytes.HasPrefix(d.data[l.pos:], []byte("xref")) {
		l.pos += 4
		for {
			a, err := l.object(0, false)
			if err != nil {
				return nil, fmt.Errorf("%w: xref table: %w", ErrMalformed, err)
			}
			if a == pdfOp("trailer") {
				t, err := l.object(0, true)
				td, ok := t.(pdfDict)
				if err != nil || !ok {
					return nil, fmt.Errorf("%w: bad trailer", ErrMalformed)
				}
				return td, nil
			}
			start, ok1 := a.(int64)
			b, _ := l.object(0, false)
			count, ok2 := b.(int64)
			if !ok1 || !ok2 || start < 0 || count < 0 || start > 1<<31 {
				return nil, fmt.Errorf("%w: bad xref subsection", ErrMalformed)
			}
			for k := int64(0); k < count; k++ {
				o, _ := l.object(0, false)
				g, _ := l.object(0, false)
				t, _ := l.object(0, false)
				oi, ok1 := o.(int64)
				gi, ok2 := g.(int64)
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("%w: bad xref entry", ErrMalformed)
				}
				num := uint32(start + k)
				if _, have := d.xref[num]; have {
					continue
				}
				switch t {
				case pdfOp("n"):
					if oi > 0 {
						d.xref[num] = pdfXref{kind: 1, off: int(oi), gen: uint16(gi)}
					}
				case pdfOp("f"):
					d.xref[num] = pdfXref{kind: 0}
				default:
					return nil, fmt.Errorf("%w: bad xref entry type", ErrMalformed)
				}
			}
		}
	}
	// A cross-reference stream.
	n, _ := l.object(0, false)
	num, _ := n.(int64)
	_, _ = l.object(0, false)
	if kw, _ := l.object(0, false); kw != pdfOp("obj") || num < 0 || num > 1<<31 {
		return nil, fmt.Errorf("%w: no xref at offset %d", ErrMalformed, off)
	}
	v, err := d.objectAt(off, uint32(num))
	s, ok := v.(*pdfStream)
	if err != nil || !ok || s.dict["Type"] != pdfName("XRef") {
		return nil, fmt.Errorf("%w: no xref stream at offset %d", ErrMalformed, off)
	}
	data, err := d.decode(s)
	if err != nil {
		return nil, fmt.Errorf("xref stream: %w", err)
	}
	var w [3]int
	wa, _ := s.dict["W"].(pdfArray)
	if len(wa) < 3 {
		return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
	}
	width := 0
	for k := range 3 {
		x, _ := pdfInt(wa[k])
		if x < 0 || x > 8 {
			return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
		}
		w[k] = int(x)
		width += int(x)
	}
	if width == 0 {
		return nil, fmt.Errorf("%w: xref stream W", ErrMalformed)
	}
	index, _ := s.dict["Index"].(pdfArray)
	if index == nil {
		size, _ := pdfInt(s.dict["Size"])
		index = pdfArray{int64(0), size}
	}
	field := func(b []byte, def int64) int64 {
		if len(b) == 0 {
			return def
		}
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v
	}
	pos := 0
	for k := 0; k+1 < len(index); k += 2 {
		start, _ := pdfInt(index[k])
		count, _ := pdfInt(index[k+1])
		if start < 0 || count < 0 || start > 1<<31 {
			break
		}
		for e := int64(0); e < count && pos+width <= len(data); e++ {
			b := data[pos : pos+width]
			pos += width
			typ := field(b[:w[0]], 1)
			f2 := field(b[w[0]:w[0]+w[1]], 0)
			f3 := field(b[w[0]+w[1]:], 0)
			num := uint32(start + e)
			if _, have := d.xref[num]; have {
				continue
			}
			switch typ {
			case 0:
				d.xref[num] = pdfXref{kind: 0}
			case 1:
				d.xref[num] = pdfXref{kind: 1, off: int(f2), gen: uint16(f3)}
			case 2:
				d.xref[num] = pdfXref{kind: 2, stm: uint32(f2), off: int(f3)}
			}
		}
	}
	return s.dict, nil
}

// rebuild recovers the trailer from a scan of the file when the
// cross-reference data is unusable.
func (d *pdfDoc) rebuild() {
	d.repaired = true
	d.xref = make(map[uint32]pdfXref)
	for num, off := range d.scan() {
		d.xref[num] = pdfXref{kind: 1, off: off}
	}
	// Object streams hold most objects of modern files: register their
	// members too.
	nums := make([]uint32, 0, len(d.xref))
	for num := range d.xref {
		nums = append(nums, num)
	}
	slices.Sort(nums)
	trailer := pdfDict{}
	for _, num := range nums {
		v := d.object(pdfRef{num: num})
		s, ok := v.(*pdfStream)
		if !ok {
			if dict, ok := v.(pdfDict); ok && dict["Type"] == pdfName("Catalog") {
				trailer["Root"] = pdfRef{num: num}
			}
			continue
		}
		switch s.dict["Type"] {
		case pdfName("XRef"):
			for _, k := range []pdfName{"Root", "Info", "Encrypt", "ID"} {
				if v, ok := s.dict[k]; ok {
					trailer[k] = v
				}
			}
		case pdfName("ObjStm"):
			d.loadObjStm(num)
		}
	}
	for num, v := range d.cache {
		if dict, ok := v.(pdfDict); ok && dict["Type"] == pdfName("Catalog") && trailer["Root"] == nil {
			trailer["Root"] = pdfRef{num: num}
		}
	}
	// Classic trailers win: the last one in the file is the newest.
	for i := len(d.data); ; {
		j := bytes.LastIndex(d.data[:i], []byte("trailer"))
		if j < 0 {
			break
		}
		l := &pdfLexer{b: d.data, pos: j + len("trailer")}
		if t, err := l.object(0, true); err == nil {
			if td, ok := t.(pdfDict); ok && td["Root"] != nil {
				for k, v := range td {
					trailer[k] = v
				}
				break
			}
		}
		i = j
	}
	d.trailer = trailer
}
