package extract

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parsePDF extracts the text layer of a PDF page by page, with its
// document information (title, author, dates, page count). Damaged
// cross-reference data is repaired by scanning the file; encrypted files
// open only when the user password is empty, else ErrEncrypted.
func parsePDF(p *parser, data []byte) {
	if i := bytes.Index(data[:min(len(data), 1024)], magicPDF); i > 0 {
		data = data[i:] // offsets count from the header
	}
	d := &pdfDoc{p: p, data: data, xref: make(map[uint32]pdfXref), cache: make(map[uint32]any),
		loading: make(map[uint32]bool), objstms: make(map[uint32]bool), forms: make(map[pdfRef][]byte),
		fonts: make(map[pdfRef]*pdfFont)}
	truncated := !bytes.Contains(data[max(0, len(data)-2048):], []byte("%%EOF"))
	if err := d.readXref(); err != nil || d.trailer == nil || d.dict(d.trailer["Root"]) == nil {
		d.rebuild()
	}
	if p.cancelled() {
		return
	}
	if enc, ok := d.trailer["Encrypt"]; ok && enc != nil {
		p.d.setExtra("encrypted", "true")
		if ref, ok := enc.(pdfRef); ok {
			d.encRef = ref
		}
		var id0 []byte
		if ids := d.array(d.trailer["ID"]); len(ids) > 0 {
			id0 = []byte(d.str(ids[0]))
		}
		c, err := newPDFCrypt(d, d.dict(enc), id0)
		if err != nil {
			p.fail("decrypt", err)
			return
		}
		// Objects read so far were read without the key.
		d.crypt = c
		d.cache = make(map[uint32]any)
		d.objstms = make(map[uint32]bool)
	}
	root := d.dict(d.trailer["Root"])
	if root == nil {
		p.fail("parse", fmt.Errorf("%w: no document catalog", ErrMalformed))
		return
	}
	d.info()
	pages := d.pages(root)
	p.d.setExtra("pages", strconv.Itoa(len(pages)))
	lay := &pdfLayout{t: &p.text}
	from := len(p.text.b)
	starts := make([]int, 0, len(pages))
	defer func() { p.text.b = append(p.text.b[:from], dropRunning(p.text.b[from:], starts)...) }()
	for i, pg := range pages {
		if p.cancelled() || p.text.full() {
			return
		}
		starts = append(starts, len(p.text.b)-from)
		if err := d.pageText(pg, lay); err != nil {
			p.fail(fmt.Sprintf("page %d", i+1), err)
			if isLimit(err) {
				return
			}
		}
	}
	if d.repaired {
		p.d.setExtra("repaired", "true")
	}
	if truncated {
		p.fail("parse", fmt.Errorf("%w: no %%%%EOF marker (truncated file)", ErrMalformed))
	}
	if len(pages) == 0 {
		p.fail("parse", fmt.Errorf("%w: no pages found", ErrMalformed))
	} else if len(bytes.TrimSpace(p.text.b)) == 0 {
		p.fail("text", fmt.Errorf("%w: no text layer (scanned images, or fonts without a Unicode mapping)", ErrUnsupported))
	}
}

type pdfPage struct {
	dict pdfDict
	res  pdfDict
}

// pages lists the pages in order, with inherited resources. A broken page
// tree falls back to every page object in object-number order.
func (d *pdfDoc) pages(root pdfDict) []pdfPage {
	var out []pdfPage
	visited := make(map[pdfRef]bool)
	var walk func(v any, inherited pdfDict, depth int)
	walk = func(v any, inherited pdfDict, depth int) {
		if depth > 64 || len(out) >= 1<<20 {
			return
		}
		if ref, ok := v.(pdfRef); ok {
			if visited[ref] {
				return
			}
			visited[ref] = true
		}
		node := d.dict(v)
		if node == nil {
			return
		}
		res := inherited
		if r := d.dict(node["Resources"]); r != nil {
			res = r
		}
		kids := d.array(node["Kids"])
		if d.name(node["Type"]) == "Page" || kids == nil && node["Contents"] != nil {
			out = append(out, pdfPage{node, res})
			return
		}
		for _, k := range kids {
			walk(k, res, depth+1)
		}
	}
	walk(root["Pages"], nil, 0)
	if len(out) > 0 {
		return out
	}
	nums := make([]uint32, 0, len(d.xref))
	for num, x := range d.xref {
		if x.kind != 0 {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	for _, num := range nums {
		if dict, ok := d.object(pdfRef{num: num}).(pdfDict); ok && dict["Type"] == pdfName("Page") {
			out = append(out, pdfPage{dict, d.dict(dict["Resources"])})
		}
	}
	return out
}

// pageText extracts one page's text.
func (d *pdfDoc) pageText(pg pdfPage, lay *pdfLayout) error {
	var content []byte
	var firstErr error
	add := func(v any) {
		s, ok := d.resolve(v).(*pdfStream)
		if !ok {
			return
		}
		b, err := d.decode(s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		content = append(content, b...)
		content = append(content, '\n')
	}
	switch c := d.resolve(pg.dict["Contents"]).(type) {
	case *pdfStream:
		add(c)
	case pdfArray:
		for _, x := range c {
			add(x)
			if firstErr != nil && isLimit(firstErr) {
				return firstErr
			}
		}
	}
	if firstErr != nil && isLimit(firstErr) {
		return firstErr
	}
	in := newInterp(d, lay)
	in.run(content, pg.res, 0)
	lay.endPage()
	if in.err != nil {
		return in.err
	}
	return firstErr
}

// info copies the document information dictionary into the metadata.
func (d *pdfDoc) info() {
	info := d.dict(d.trailer["Info"])
	if info == nil {
		return
	}
	m := &d.p.d.Meta
	get := func(k pdfName) string { return strings.TrimSpace(pdfTextString(d.str(info[k]))) }
	m.Title = get("Title")
	m.Author = get("Author")
	m.Subject = get("Subject")
	for k, extra := range map[pdfName]string{"Keywords": "keywords", "Creator": "application", "Producer": "producer"} {
		if v := get(k); v != "" {
			d.p.d.setExtra(extra, v)
		}
	}
	m.Created = parsePDFDate(get("CreationDate"))
	m.Modified = parsePDFDate(get("ModDate"))
}

// parsePDFDate parses "D:YYYYMMDDHHmmSSOHH'mm'" (every part after the
// year optional); a bad date is zero.
func parsePDFDate(s string) time.Time {
	s = strings.TrimPrefix(strings.TrimSpace(s), "D:")
	digits := 0
	for digits < len(s) && digits < 14 && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits < 4 {
		return time.Time{}
	}
	f := []int{0, 1, 1, 0, 0, 0}
	widths := []int{4, 2, 2, 2, 2, 2}
	pos := 0
	for i, w := range widths {
		if pos+w > digits {
			break
		}
		f[i], _ = strconv.Atoi(s[pos : pos+w])
		pos += w
	}
	loc := time.UTC
	rest := s[digits:]
	if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
		tz := strings.NewReplacer("'", "", " ", "").Replace(rest[1:])
		h, m := 0, 0
		if len(tz) >= 2 {
			h, _ = strconv.Atoi(tz[:2])
		}
		if len(tz) >= 4 {
			m, _ = strconv.Atoi(tz[2:4])
		}
		off := (h*60 + m) * 60
		if rest[0] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60 {
		return time.Time{}
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, loc)
}
