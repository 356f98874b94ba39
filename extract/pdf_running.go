package extract

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Running headers and footers, and page numbers, are not part of a PDF's
// text: the TXT or HTML edition of the same work has none, and in the
// text they interrupt a sentence at every page break. dropRunning removes
// them once every page is extracted, looking at the two lines at the top
// and the two at the bottom of each page, from the outside in (an inner
// line only if the outer one went):
//
//   - a line that stands, digits aside, at the top or bottom of at least
//     three pages and of at least runningShare of them ("Debian Policy
//     Manual, Release 4.6.2.0", "Page 3 of 9", "Confidential — draft");
//   - a short line that begins or ends with the page's printed number,
//     when the printed numbers follow the pages ("1.3. Authors 5",
//     "4 Chapter 1. About this manual"): the number minus the page's index
//     is the same on at least three pages and pageNumberShare of them;
//   - a line that is a bare page number ("12", "- 12 -", "— 12 —",
//     "Page 12", "12 / 40", "xii") at the very top or bottom.
//
// A word hyphenated across a page break is then joined, as within a page.

// Thresholds of dropRunning.
const (
	runningShare    = 0.4 // of the pages, for a repeated line
	pageNumberShare = 0.2 // of the pages, for a numbering
	maxRunningLine  = 100 // bytes: a longer line is body text
	edgeLines       = 2   // looked at, at the top and at the bottom
)

// pdfPageLines is one page's lines, without their line breaks.
type pdfPageLines struct {
	lines [][]byte
	drop  []bool
}

// dropRunning returns text without the running headers, footers and page
// numbers of its pages, which start at the offsets starts.
func dropRunning(text []byte, starts []int) []byte {
	if len(starts) < 3 {
		return text // nothing can be seen to repeat
	}
	pages := make([]pdfPageLines, len(starts))
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		var lines [][]byte
		for _, l := range bytes.Split(text[s:end], []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, l)
			}
		}
		pages[i] = pdfPageLines{lines: lines, drop: make([]bool, len(lines))}
	}
	repeated := repeatedLines(pages)
	offsets := pageOffsets(pages)
	for i := range pages {
		pg := &pages[i]
		n := len(pg.lines)
		for k := 0; k < min(edgeLines, n); k++ { // from the top
			if !running(pg.lines[k], i, k == 0, repeated, offsets) {
				break
			}
			pg.drop[k] = true
		}
		for k := n - 1; k >= max(0, n-edgeLines); k-- { // from the bottom
			if pg.drop[k] || !running(pg.lines[k], i, k == n-1, repeated, offsets) {
				break
			}
			pg.drop[k] = true
		}
	}
	return joinPages(make([]byte, 0, len(text)), pages)
}

// edges calls fn with the lines of pg that dropRunning looks at.
func (pg *pdfPageLines) edges(fn func(line []byte)) {
	n := len(pg.lines)
	for k, l := range pg.lines {
		if k < edgeLines || k >= n-edgeLines {
			fn(l)
		}
	}
}

// repeatedLines returns the keys (see lineKey) of the edge lines found on
// enough pages to be running headers or footers.
func repeatedLines(pages []pdfPageLines) map[string]bool {
	count := make(map[string]int)
	for i := range pages {
		seen := make(map[string]bool)
		pages[i].edges(func(l []byte) {
			if len(l) <= maxRunningLine {
				seen[lineKey(l)] = true
			}
		})
		for k := range seen {
			count[k]++
		}
	}
	out := make(map[string]bool)
	least := max(3, int(runningShare*float64(len(pages))+0.5))
	for k, n := range count {
		if n >= least {
			out[k] = true
		}
	}
	return out
}

// lineKey is a line with every run of digits as '#', letters lower case.
func lineKey(l []byte) string {
	out := make([]byte, 0, len(l))
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= '0' && c <= '9':
			for i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '9' {
				i++
			}
			c = '#'
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

// pageOffsets returns the differences between printed page numbers and
// page indexes that enough pages share to be the document's numbering.
func pageOffsets(pages []pdfPageLines) map[int]bool {
	count := make(map[int]int)
	for i := range pages {
		seen := make(map[int]bool)
		pages[i].edges(func(l []byte) {
			for _, n := range edgeNumbers(l) {
				seen[n-i] = true
			}
		})
		for off := range seen {
			count[off]++
		}
	}
	out := make(map[int]bool)
	least := max(3, int(pageNumberShare*float64(len(pages))+0.5))
	for off, n := range count {
		if n >= least {
			out[off] = true
		}
	}
	return out
}

// edgeNumbers returns the numbers a short line begins or ends with.
func edgeNumbers(l []byte) []int {
	if len(l) > maxRunningLine {
		return nil
	}
	var out []int
	i := 0
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	if n, err := strconv.Atoi(string(l[:i])); err == nil && (i == len(l) || l[i] == ' ') {
		out = append(out, n)
	}
	j := len(l)
	for j > 0 && l[j-1] >= '0' && l[j-1] <= '9' {
		j--
	}
	if n, err := strconv.Atoi(string(l[j:])); err == nil && j > 0 && l[j-1] == ' ' {
		out = append(out, n)
	}
	return out
}

// running reports whether line, on page i, is a running header, footer
// or page number; outer says it is the first or last line of its page.
func running(line []byte, i int, outer bool, repeated map[string]bool, offsets map[int]bool) bool {
	if len(line) > maxRunningLine {
		return false
	}
	if repeated[lineKey(line)] || outer && barePageNumber(line) {
		return true
	}
	for _, n := range edgeNumbers(line) {
		if offsets[n-i] {
			return true
		}
	}
	return false
}

// barePageNumber reports whether l is a page number alone: digits or a
// roman numeral, maybe after "page", before "of N" or "/ N", between
// dashes.
func barePageNumber(l []byte) bool {
	f := bytes.FieldsFunc(bytes.ToLower(l), func(r rune) bool {
		return unicode.IsSpace(r) || r == '-' || r == '–' || r == '—' || r == '|' || r == '[' || r == ']'
	})
	if len(f) > 0 && string(f[0]) == "page" {
		f = f[1:]
	}
	if len(f) == 3 && (string(f[1]) == "of" || string(f[1]) == "/") && isNumeral(f[2]) {
		f = f[:1]
	}
	if len(f) == 1 {
		if i := bytes.IndexByte(f[0], '/'); i > 0 && isNumeral(f[0][i+1:]) {
			f[0] = f[0][:i] // "3/9"
		}
	}
	return len(f) == 1 && isNumeral(f[0])
}

// isNumeral reports whether b is a number in digits or a lower-case
// roman numeral of at most eight letters.
func isNumeral(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	digits, roman := true, len(b) <= 8
	for _, c := range b {
		digits = digits && c >= '0' && c <= '9'
		roman = roman && bytes.IndexByte([]byte("ivxlcdm"), c) >= 0
	}
	return digits || roman
}

// joinPages appends the kept lines of pages to dst, each page ended by a
// blank line, joining a word hyphenated across a page break.
func joinPages(dst []byte, pages []pdfPageLines) []byte {
	for _, pg := range pages {
		first := true
		for k, l := range pg.lines {
			if pg.drop[k] {
				continue
			}
			if first && hyphenatedEnd(dst) && startsLower(l) {
				dst = dst[:len(dst)-3] // "-\n\n"
			}
			first = false
			dst = append(append(dst, l...), '\n')
		}
		if !first {
			dst = append(dst, '\n')
		}
	}
	return dst
}

// hyphenatedEnd reports whether the page text b ends with a lower-case
// letter and a hyphen, then its blank line.
func hyphenatedEnd(b []byte) bool {
	if !bytes.HasSuffix(b, []byte("-\n\n")) {
		return false
	}
	r, _ := utf8.DecodeLastRune(b[:len(b)-3])
	return unicode.IsLower(r)
}

// startsLower reports whether l starts with a lower-case letter.
func startsLower(l []byte) bool {
	r, _ := utf8.DecodeRune(l)
	return unicode.IsLower(r)
}
