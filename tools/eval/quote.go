package eval

import (
	"strings"
	"unicode"
)

// MaxQuoteDepth bounds the quote depth QuoteDepth reports and the quote
// markers the HTML reader writes.
const MaxQuoteDepth = 100

// Quoting splits the pairs of an e-mail corpus by how their two messages
// quote (see QuoteDepth).
type Quoting int

// Quoting of a pair.
const (
	// NoQuoting: neither message quotes.
	NoQuoting Quoting = iota
	// SameDepth: both quote, to the same depth.
	SameDepth
	// DepthDiffers: one quotes deeper than the other (or only one quotes).
	DepthDiffers
)

// quotingNames name Quoting values in the report.
var quotingNames = [...]string{"no quoting", "same quote depth", "quote depth differs"}

func (q Quoting) String() string { return quotingNames[q] }

// PairQuoting returns the quoting of a pair of messages of depths a and b.
func PairQuoting(a, b int) Quoting {
	switch {
	case a == 0 && b == 0:
		return NoQuoting
	case a == b:
		return SameDepth
	}
	return DepthDiffers
}

// QuoteDepth returns how deep a message body quotes: the deepest level of
// a line holding a word. A line's level is the number of its leading ">"
// markers (spaces between them allowed); below a reply header (a line
// ending in "wrote:", an Outlook "From: / Sent: / Subject:" block, a
// "----- Original Message -----" or forwarded-message line), the lines
// that follow are one level deeper than the header's, or deeper when their
// markers say so. A header quoted under n markers applies to the lines
// quoted under at least n markers after it. Levels are capped at
// MaxQuoteDepth. The body is read line by line, in constant memory
// besides the headers' stack (at most MaxQuoteDepth entries).
func QuoteDepth(body string) int {
	type header struct{ markers, depth int }
	var stack []header
	deepest, lastHeaderEnd := 0, -1
	for pos := 0; pos < len(body); {
		line, next := nextLine(body, pos)
		markers, content := quoteMarkers(line)
		for len(stack) > 0 && stack[len(stack)-1].markers > markers {
			stack = stack[:len(stack)-1]
		}
		depth := markers
		if len(stack) > 0 {
			depth = max(depth, stack[len(stack)-1].depth+1)
		}
		depth = min(depth, MaxQuoteDepth)
		if hasWord(content) {
			deepest = max(deepest, depth)
		}
		if end, ok := replyHeader(body, pos, markers, content); ok {
			// A header right after another (a forwarded-message line and
			// its From block) opens one level, not two.
			merged := lastHeaderEnd >= 0 && adjacent(body, lastHeaderEnd, pos)
			if !merged && len(stack) < MaxQuoteDepth {
				stack = append(stack, header{markers, depth})
			}
			lastHeaderEnd, next = end, end
		}
		pos = next
	}
	return deepest
}

// adjacent reports whether only blank (or marker-only) lines lie between
// offsets from and to of body.
func adjacent(body string, from, to int) bool {
	if from > to {
		return false
	}
	blank := 0
	for pos := from; pos < to; {
		line, next := nextLine(body, pos)
		if _, c := quoteMarkers(line); strings.TrimSpace(c) != "" {
			return false
		}
		blank++
		pos = next
	}
	return blank <= 1
}

// nextLine returns the line of body starting at pos (without its line
// end) and the offset of the next line.
func nextLine(body string, pos int) (string, int) {
	k := strings.IndexByte(body[pos:], '\n')
	if k < 0 {
		return strings.TrimSuffix(body[pos:], "\r"), len(body)
	}
	return strings.TrimSuffix(body[pos:pos+k], "\r"), pos + k + 1
}

// quoteMarkers counts the leading ">" of a line (white space before and
// between them allowed) and returns the rest.
func quoteMarkers(line string) (int, string) {
	n, i := 0, 0
	for i < len(line) {
		switch line[i] {
		case '>':
			n++
		case ' ', '\t':
		default:
			return n, line[i:]
		}
		i++
	}
	return n, ""
}

func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// attributions end the line of a reply header ("On … wrote:").
var attributions = []string{"wrote:", "writes:", "a écrit :", "a écrit:", "schrieb:", "escribió:", "scritto:", "napisał:"}

// replyHeader reports whether the line at pos (with the given markers and
// content) opens a quoted block, and returns the offset after the header's
// last line.
func replyHeader(body string, pos, markers int, content string) (end int, ok bool) {
	c := strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(content), "*_")))
	_, next := nextLine(body, pos)
	for _, a := range attributions {
		if strings.HasSuffix(c, a) {
			return next, true
		}
	}
	bare := strings.TrimSpace(strings.Trim(c, "-_= "))
	if c != bare && (bare == "original message" || bare == "forwarded message" || bare == "message transféré") ||
		strings.HasPrefix(c, "begin forwarded message") {
		return next, true
	}
	if !strings.HasPrefix(c, "from:") && !strings.HasPrefix(c, "de :") && !strings.HasPrefix(c, "von:") {
		return 0, false
	}
	// An Outlook block: From, then Sent (or Date) and Subject within the
	// next six lines at the same quote level.
	sent, subject := false, false
	p := next
	for k := 1; k <= 6 && p < len(body); k++ {
		line, nx := nextLine(body, p)
		m, rest := quoteMarkers(line)
		if m != markers {
			break
		}
		r := strings.ToLower(strings.Trim(strings.TrimSpace(rest), "*_"))
		sent = sent || strings.HasPrefix(r, "sent:") || strings.HasPrefix(r, "date:") || strings.HasPrefix(r, "envoyé :") || strings.HasPrefix(r, "gesendet:")
		if strings.HasPrefix(r, "subject:") || strings.HasPrefix(r, "objet :") || strings.HasPrefix(r, "betreff:") {
			subject = true
			end = nx
			break
		}
		p = nx
	}
	if sent && subject {
		return end, true
	}
	return 0, false
}
