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
	return trimEmptyTail(b.String()) + "\n"
}

// trimEmptyTail removes the lines at the end of s that hold nothing but
// quote markers and white space.
func trimEmptyTail(s string) string {
	return strings.TrimRight(s, " \t\r\n>")
}

// boilerplateBlock returns how many lines of the signature or footer
// block starting at off (whose first line is ln) to strip, or 0.
func boilerplateBlock(body string, off int, ln line) int {
	t := strings.TrimRight(ln.text, "\r")
	sig := t == "-- " || t == "--"
	if !sig && !strings.HasPrefix(t, "____") && !strings.Contains(strings.ToLower(t), "mailing list") {
		return 0
	}
	window := peek(nil, body, off, maxSignatureLines+2)
	if footerStart(window) {
		return footerLines(window)
	}
	if !sig {
		return 0
	}
	n := 1
	for ; n < len(window); n++ {
		w := window[n]
		if w.marker != ln.marker || footerStart(window[n:]) || maybeBoundary(w.text) && (attribution(window[n:]) > 0 || firstHeader(window[n:])) {
			break
		}
	}
	if n > maxSignatureLines {
		return 0
	}
	return n
}

// footerLines returns how many lines the footer at the start of window
// takes: its lines up to a blank line, or over blank lines to a line that
// looks like more of the footer (an unsubscribe line, a list address or
// link: Outlook double-spaces footers), at most maxFooterLines, never
// past an attribution or header block.
func footerLines(window []line) int {
	n := 1
	for ; n < len(window) && n < maxFooterLines && window[n].marker == window[0].marker; n++ {
		if strings.TrimSpace(window[n].text) != "" {
			if maybeBoundary(window[n].text) && (attribution(window[n:]) > 0 || firstHeader(window[n:])) {
				break
			}
			continue
		}
		next := n + 1
		for next < len(window) && strings.TrimSpace(window[next].text) == "" {
			next++
		}
		if next >= len(window) || window[next].marker != window[0].marker || !footerLike(window[next].text) {
			break
		}
	}
	return n
}

// footerLike reports whether s looks like a line of a list footer.
func footerLike(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"unsubscribe", "mailing list", "listinfo", "mailman", "list-", "@lists."} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// footerStart reports whether window starts a mailing-list footer: a rule
// of underscores followed by a line naming a "mailing list", or that line
// followed by one saying how to unsubscribe (blank lines between them
// skipped), or one line saying both, at one quote depth.
func footerStart(window []line) bool {
	if len(window) == 0 {
		return false
	}
	first := strings.ToLower(strings.TrimSpace(window[0].text))
	if strings.Contains(first, "mailing list") && strings.Contains(first, "unsubscribe") {
		return true
	}
	var second string
	for _, w := range window[1:min(len(window), 4)] {
		if w.marker != window[0].marker {
			return false
		}
		if second = strings.ToLower(w.text); strings.TrimSpace(second) != "" {
			break
		}
	}
	if len(first) >= 20 && strings.Trim(first, "_") == "" {
		return strings.Contains(second, "mailing list")
	}
	return strings.Contains(first, "mailing list") && strings.Contains(second, "unsubscribe")
}

// firstHeader reports whether window starts with a header block.
func firstHeader(window []line) bool {
	n, _ := headerBlock(window)
	return n > 0
}
