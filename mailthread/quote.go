package mailthread

import (
	"strings"
	"unicode"
)

// Kind tells how a part entered the message.
type Kind uint8

// Kinds of parts.
const (
	// New is the message's own text.
	New Kind = iota
	// Quoted is text of an earlier message quoted in a reply: under ">"
	// markers, after an "On … wrote:" attribution or under an Outlook
	// "From: … Sent: …" block.
	Quoted
	// Forwarded is a forwarded message ("---------- Forwarded message",
	// "Begin forwarded message:").
	Forwarded
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case New:
		return "new"
	case Quoted:
		return "quoted"
	case Forwarded:
		return "forwarded"
	}
	return "unknown"
}

// MaxParts bounds the parts Parse returns: text past the last part is
// added to it, so nothing is lost, only its structure.
const MaxParts = 1024

// MaxDepth bounds the quote depth counted on one line; deeper markers are
// kept as text.
const MaxDepth = 1000

// Part is one component e-mail of a message body, or a piece of one when
// a reply is interleaved with the text it quotes.
type Part struct {
	// Depth is 0 for the new text, 1 for the message it replies to or
	// forwards, 2 for that message's parent, and so on.
	Depth int
	// Kind tells how the part entered the message.
	Kind Kind
	// Header is the attribution or header block that opened the part
	// ("On Tue, Jan 3, 2023, Ann wrote:", "From: … Sent: … Subject: …"),
	// lines joined by "\n"; empty when the part was opened by quote
	// markers alone.
	Header string
	// Text is the part's lines with their quote markers removed.
	Text string
}

// Parse splits body into its parts, in the order they appear. Quote
// markers (">", "> >", ">>", "|") at any depth, attributions ("On … wrote:"
// and localized forms, on up to three lines), Outlook header blocks (with
// or without "-----Original Message-----") and forwarded-message
// separators start parts. The text of all parts together is body without
// its quote markers and header lines. Parse runs in time linear in
// len(body) and returns at most MaxParts parts.
func Parse(body string) []Part {
	ps := parser{body: body}
	ps.run()
	return ps.finish()
}

// parser holds Parse's state.
type parser struct {
	body string
	// levels are the marker depths at which a header block or an unmarked
	// attribution opened a deeper message: a line of marker depth m is at
	// depth m plus the number of levels at or below m.
	levels []int
	parts  []Part
	cur    *strings.Builder
	// pending opens the next part: its header and kind.
	pending     []string
	pendingKind Kind
	pendingSet  bool
	// window is reused by every look ahead.
	window []line
	// noHeaderBefore: no header block starts before this offset (a run of
	// field lines that did not make one was seen).
	noHeaderBefore int
}

// line is one line of the body split into its quote depth and the rest.
type line struct {
	marker int
	text   string
}

// lineAt returns the line of body starting at off and the offset of the
// next one; ok is false at the end of body.
func lineAt(body string, off int) (ln line, next int, ok bool) {
	if off >= len(body) {
		return line{}, off, false
	}
	end := strings.IndexByte(body[off:], '\n')
	if end < 0 {
		next = len(body)
	} else {
		next = off + end + 1
	}
	s := strings.TrimRight(body[off:next], "\r\n")
	m, rest := markers(s)
	return line{marker: m, text: rest}, next, true
}

// peek returns up to n lines of body from off, in buf's memory.
func peek(buf []line, body string, off, n int) []line {
	out := buf[:0]
	for len(out) < n {
		ln, next, ok := lineAt(body, off)
		if !ok {
			break
		}
		out = append(out, ln)
		off = next
	}
	return out
}

// markers counts the quote markers at the start of s (">" or "|", each
// optionally followed by spaces; the first ">" may be indented) and
// returns the rest of the line.
func markers(s string) (int, string) {
	n, i := 0, 0
	if t := strings.TrimLeft(s, " \t"); strings.HasPrefix(t, ">") {
		i = len(s) - len(t) // an indented quote
	}
	for i < len(s) && n < MaxDepth {
		switch s[i] {
		case '>':
		case '|':
			if isTableRow(s[i:]) {
				return n, s[i:]
			}
		default:
			return n, s[i:]
		}
		n++
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	return n, s[i:]
}

// isTableRow tells a "| a | b |" table row from a "|" quote marker.
func isTableRow(s string) bool {
	t := strings.TrimRight(s, " \t")
	return len(t) > 1 && strings.HasSuffix(t, "|") && strings.Count(t, "|") >= 3
}

func (ps *parser) run() {
	for off := 0; ; {
		ln, next, ok := lineAt(ps.body, off)
		if !ok {
			return
		}
		ps.popLevels(ln.marker)
		if maybeBoundary(ln.text) {
			ps.window = peek(ps.window, ps.body, off, headerWindow)
			window := ps.window
			if off >= ps.noHeaderBefore {
				n, kind := headerBlock(window)
				if n > 0 {
					ps.push(ln.marker)
					ps.open(kind, window[:n])
					off = skipLines(ps.body, off, n)
					continue
				}
				if f, _ := fields(window, ln.marker); f > 1 {
					// The lines of this run of fields start no block either
					// (unless the run is longer than a window: rare, and missed).
					ps.noHeaderBefore = skipLines(ps.body, off, f)
				}
			}
			if n := attribution(window); n > 0 {
				if !deeper(window[n:], ln.marker) {
					ps.push(ln.marker)
				}
				ps.open(Quoted, window[:n])
				off = skipLines(ps.body, off, n)
				continue
			}
		}
		ps.add(ln)
		off = next
	}
}

// skipLines returns the offset n lines after off.
func skipLines(body string, off, n int) int {
	for ; n > 0; n-- {
		_, off, _ = lineAt(body, off)
	}
	return off
}

// push opens a level at marker, up to MaxDepth levels.
func (ps *parser) push(marker int) {
	if len(ps.levels) < MaxDepth {
		ps.levels = append(ps.levels, marker)
	}
}

// popLevels forgets the levels opened deeper than marker: the text has
// come back up, as in an inline reply.
func (ps *parser) popLevels(marker int) {
	for len(ps.levels) > 0 && ps.levels[len(ps.levels)-1] > marker {
		ps.levels = ps.levels[:len(ps.levels)-1]
	}
}

// open makes the next line start a new part of kind, under header.
func (ps *parser) open(kind Kind, header []line) {
	ps.pending = ps.pending[:0]
	for _, h := range header {
		ps.pending = append(ps.pending, h.text)
	}
	ps.pendingKind, ps.pendingSet = kind, true
}

// add appends ln to the current part, or starts a part when its depth
// differs or a header is pending. Blank lines never start a part.
func (ps *parser) add(ln line) {
	depth := ln.marker + len(ps.levels)
	blank := strings.TrimSpace(ln.text) == ""
	last := len(ps.parts) - 1
	switch {
	case last >= 0 && (blank && !ps.pendingSet || len(ps.parts) >= MaxParts):
	case last >= 0 && !ps.pendingSet && ps.parts[last].Depth == depth:
	case blank:
		return // leading blank lines
	default:
		ps.newPart(depth)
	}
	if ps.cur.Len() > 0 {
		ps.cur.WriteByte('\n')
	}
	ps.cur.WriteString(ln.text)
}

func (ps *parser) newPart(depth int) {
	ps.flush()
	kind := Quoted
	if depth == 0 {
		kind = New
	}
	p := Part{Depth: depth, Kind: kind}
	if ps.pendingSet {
		p.Header = strings.Join(ps.pending, "\n")
		if depth > 0 {
			p.Kind = ps.pendingKind
		}
		ps.pendingSet = false
	}
	ps.parts = append(ps.parts, p)
	ps.cur = &strings.Builder{}
}

// flush stores the current part's text.
func (ps *parser) flush() {
	if ps.cur != nil && len(ps.parts) > 0 {
		ps.parts[len(ps.parts)-1].Text = ps.cur.String()
	}
}

func (ps *parser) finish() []Part {
	ps.flush()
	return ps.parts
}

// QuotedText returns the text of the parts at depth, joined by blank lines:
// at depth 1, the text of the message replied to or forwarded, as far as
// the reply keeps it.
func QuotedText(parts []Part, depth int) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Depth != depth {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
