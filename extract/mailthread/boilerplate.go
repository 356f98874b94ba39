package mailthread

import "strings"

// maxSignatureLines bounds a signature block: a longer block after a "-- "
// line is kept, as it is more likely text than a signature.
const maxSignatureLines = 15

// maxFooterLines bounds a mailing-list footer block.
const maxFooterLines = 8

// StripBoilerplate returns body without its signature blocks (from a "-- "
// delimiter line to the end of its quote level, at most
// maxSignatureLines lines) and mailing-list footers (a rule of
// underscores followed by a line naming a "mailing list"), at every quote
// depth, so that a reply that quotes its parent keeps the parent's text
// as the parent's own copy does. Header blocks and attributions end a
// block. Other lines, quote markers included, are kept as they are; when
// nothing is stripped body itself is returned.
func StripBoilerplate(body string) string {
	var b strings.Builder
	stripped := false
	for off := 0; ; {
		ln, next, ok := lineAt(body, off)
		if !ok {
			break
		}
		if n := boilerplateBlock(body, off, ln); n > 0 {
			if !stripped {
				b.Grow(len(body))
				b.WriteString(body[:off])
				stripped = true
			}
			off = skipLines(body, off, n)
			continue
		}
		if stripped {
			b.WriteString(body[off:next])
		}
		off = next
	}
	if !stripped {
		return body
	}
	return strings.TrimRight(b.String(), " \t\r\n") + "\n"
}

// boilerplateBlock returns how many lines of the signature or footer
// block starting at off (whose first line is ln) to strip, or 0.
func boilerplateBlock(body string, off int, ln line) int {
	t := strings.TrimRight(ln.text, " \t")
	var limit int
	switch {
	case t == "--" || t == "---":
		if t == "--" && strings.TrimRight(ln.text, "\t") != "-- " && ln.text != "--" {
			return 0
		}
		limit = maxSignatureLines
	case len(t) >= 20 && strings.Trim(t, "_") == "":
		window := peek(nil, body, off, 3)
		if len(window) < 2 || window[1].marker != ln.marker || !strings.Contains(strings.ToLower(window[1].text), "mailing list") {
			return 0
		}
		limit = maxFooterLines
	default:
		return 0
	}
	window := peek(nil, body, off, limit+2)
	n := 1
	for ; n < len(window); n++ {
		w := window[n]
		if w.marker != ln.marker || maybeBoundary(w.text) && (attribution(window[n:]) > 0 || firstHeader(window[n:])) {
			break
		}
	}
	if n > limit {
		return 0
	}
	return n
}

// firstHeader reports whether window starts with a header block.
func firstHeader(window []line) bool {
	n, _ := headerBlock(window)
	return n > 0
}
