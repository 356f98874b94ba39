package main

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// writeJSON writes r as one JSON object, one array element per line.
//
// A scan of a large corpus reports millions of pairs: encoding the whole
// report with json.Encoder's indentation built it twice in memory (the
// encoded value, then its indented copy), which cost gigabytes and a tenth
// of a 10,000-file scan's CPU. Streaming it element by element, each
// element encoded compactly, keeps memory flat; a pair's line is built by
// hand from its names, encoded once each.
func (r *report) writeJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var err error
	put := func(b []byte) {
		if err == nil {
			_, err = bw.Write(b)
		}
	}
	putValue := func(v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			put(b)
		}
	}
	array := func(key string, n int, elem func(i int)) {
		put([]byte(",\n  " + strconv.Quote(key) + ": ["))
		for i := 0; i < n; i++ {
			if i > 0 {
				put([]byte(","))
			}
			put([]byte("\n    "))
			elem(i)
		}
		if n > 0 {
			put([]byte("\n  "))
		}
		put([]byte("]"))
	}
	put([]byte("{\n  \"files\": " + strconv.Itoa(r.Files) + ",\n  \"documents\": " + strconv.Itoa(r.Documents)))
	array("errors", len(r.Errors), func(i int) { putValue(r.Errors[i]) })
	array("identical", len(r.Identical), func(i int) { putValue(r.Identical[i]) })
	array("families", len(r.Families), func(i int) { putValue(r.Families[i]) })
	// Each name is encoded once: by number when buildReport numbered
	// them (looking millions of paths up in a map was half of writing a
	// 50,000-file scan's pairs), by value otherwise.
	numbered := make([][]byte, len(r.names))
	for i, n := range r.names {
		numbered[i], _ = json.Marshal(n) // a string always encodes
	}
	byValue := make(map[string][]byte)
	quoted := func(s string, num int32) []byte {
		if num > 0 && int(num) <= len(numbered) {
			return numbered[num-1]
		}
		q, ok := byValue[s]
		if !ok {
			q, _ = json.Marshal(s)
			byValue[s] = q
		}
		return q
	}
	var line []byte
	array("pairs", len(r.Pairs), func(i int) {
		line = appendPair(line[:0], &r.Pairs[i], quoted)
		put(line)
	})
	put([]byte("\n}\n"))
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// appendPair appends p as encoding/json would encode it (compact), with
// names already JSON-encoded by quoted (given each name and its number).
func appendPair(b []byte, p *pairJSON, quoted func(string, int32) []byte) []byte {
	b = append(b, `{"a":`...)
	b = append(b, quoted(p.A, p.na)...)
	b = append(b, `,"b":`...)
	b = append(b, quoted(p.B, p.nb)...)
	b = append(b, `,"resemblance":`...)
	b = appendScore(b, p.Resemblance)
	b = append(b, `,"containment_ab":`...)
	b = appendScore(b, p.ContainmentAB)
	b = append(b, `,"containment_ba":`...)
	b = appendScore(b, p.ContainmentBA)
	b = append(b, `,"bytes_in_common":`...)
	b = strconv.AppendInt(b, p.BytesInCommon, 10)
	b = append(b, `,"hamming":`...)
	b = strconv.AppendInt(b, int64(p.Hamming), 10)
	b = append(b, `,"exact":`...)
	b = strconv.AppendBool(b, p.Exact)
	return append(b, '}')
}

// appendScore appends x as encoding/json would. The report's scores are
// rounded to thousandths, whose shortest decimal form is the thousandths
// themselves: written from the integer, three times faster than the
// general shortest-form search of strconv, which is kept for the rest.
func appendScore(b []byte, x float64) []byte {
	k := math.Round(x * 1000)
	if k < 0 || k > 1e6 || k/1000 != x {
		return strconv.AppendFloat(b, x, 'f', -1, 64)
	}
	n := int64(k)
	b = strconv.AppendInt(b, n/1000, 10)
	frac := n % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100))
	if frac %= 100; frac != 0 {
		b = append(b, byte('0'+frac/10))
		if frac %= 10; frac != 0 {
			b = append(b, byte('0'+frac))
		}
	}
	return b
}
