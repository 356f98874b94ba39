package extract

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/simdex/simdex/mailthread"
)

// Version is the version of the texts Extract produces: a text extracted
// by another version may differ for the same bytes, so a store that keeps
// texts or fingerprints made from them can tell which to make again.
//
//   - 1: the first texts.
//   - 2: an e-mail's text starts with its subject, cleaned of reply,
//     forward and list tags, and leaves out signature blocks and
//     mailing-list footers (mailthread.StripBoilerplate).
const Version = 2

// Metadata.Extra keys set on e-mail messages.
const (
	// ExtraThreadID is the thread key the message's headers give
	// (mailthread.Key): messages whose headers are complete share it.
	ExtraThreadID = "thread_id"
	// ExtraDraft is "true" on an unsent message (X-Unsent: 1).
	ExtraDraft = "draft"
	// ExtraReferences is the message's References header, its ids
	// separated by single spaces.
	ExtraReferences = "references"
	// ExtraFolder is the mailbox folder of a message read from a PST.
	ExtraFolder = "folder"
)

// maxMIMEDepth bounds the nesting of multiparts inside one message.
const maxMIMEDepth = 32

// wordDecoder decodes RFC 2047 encoded words in any charset
// golang.org/x/net/html/charset knows.
var wordDecoder = &mime.WordDecoder{CharsetReader: charset.NewReaderLabel}

// parseEML extracts an RFC 822 message: its headers into the metadata, the
// body text (text/plain, else HTML converted), and its attachments and
// attached messages as children.
func parseEML(p *parser, data []byte) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		// Not even a header block: keep the text for reviewers.
		s, _ := decodeText(data, "")
		p.setText(s)
		p.fail("read header", err)
		return
	}
	mailMeta(p, msg.Header)
	m := &mailParser{p: p}
	reviewerText(p, func() {
		m.entity(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	})
	if m.err != nil {
		p.fail("read body", m.err)
	}
}

// reviewerText writes a message's text as a reviewer reads it: its
// subject, cleaned of reply, forward and list tags, then what body writes,
// without signatures and list footers. Every e-mail format (EML, PST and
// OST items) writes its text through it, so that one message has one text
// whatever container it came in.
func reviewerText(p *parser, body func()) {
	if s := mailthread.Subject(p.d.Meta.Subject); s != "" {
		p.text.addString(s)
		p.text.addString("\n\n")
	}
	start := p.text.Len()
	body()
	stripBoilerplate(p, start)
}

// stripBoilerplate removes signatures and list footers from the body text
// written from start on (see mailthread.StripBoilerplate), and the blank
// lines that end the text.
func stripBoilerplate(p *parser, start int) {
	body := mailthread.StripBoilerplate(string(p.text.b[start:]))
	p.text.b = append(p.text.b[:start], strings.TrimRight(body, " \t\r\n")...)
	if len(p.text.b) > 0 {
		p.text.addByte('\n')
	}
}

// mailMeta copies the headers that matter into the metadata.
func mailMeta(p *parser, h mail.Header) {
	m := &p.d.Meta
	m.From = strings.Join(addressList(h.Get("From")), ", ")
	m.To = addressList(h.Get("To"))
	m.Cc = addressList(h.Get("Cc"))
	if bcc := addressList(h.Get("Bcc")); len(bcc) > 0 {
		p.d.setExtra("bcc", strings.Join(bcc, ", "))
	}
	for _, k := range []string{"Reply-To", "Sender"} {
		if v := addressList(h.Get(k)); len(v) > 0 {
			p.d.setExtra(strings.ToLower(k), strings.Join(v, ", "))
		}
	}
	m.Subject = headerText(h.Get("Subject"))
	m.MessageID = strings.TrimSpace(h.Get("Message-Id"))
	m.InReplyTo = strings.TrimSpace(h.Get("In-Reply-To"))
	if refs := strings.Join(strings.Fields(h.Get("References")), " "); refs != "" {
		p.d.setExtra(ExtraReferences, refs)
	}
	if strings.TrimSpace(h.Get("X-Unsent")) == "1" {
		p.d.setExtra(ExtraDraft, "true")
	}
	key := mailthread.Key(mailthread.Header{
		MessageID: m.MessageID, InReplyTo: m.InReplyTo, References: h.Get("References"), Subject: m.Subject,
	})
	if key != "" {
		p.d.setExtra(ExtraThreadID, key)
	}
	if d := strings.TrimSpace(h.Get("Date")); d != "" {
		if t, ok := parseMailDate(d); ok {
			m.Date = t
		} else {
			p.d.setExtra("date header", d)
		}
	}
}

// headerText decodes encoded words and stray 8-bit bytes of a header.
func headerText(s string) string {
	if s == "" {
		return ""
	}
	if !utf8.ValidString(s) {
		s, _ = decodeText([]byte(s), "")
	}
	if dec, err := wordDecoder.DecodeHeader(s); err == nil {
		s = dec
	}
	return strings.Join(strings.Fields(s), " ")
}

// addressList parses an address header into "Name <addr>" strings, or
// splits it at commas when it does not parse.
func addressList(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	ap := mail.AddressParser{WordDecoder: wordDecoder}
	if list, err := ap.ParseList(s); err == nil {
		out := make([]string, 0, len(list))
		for _, a := range list {
			if a.Name != "" {
				out = append(out, a.Name+" <"+a.Address+">")
			} else {
				out = append(out, a.Address)
			}
		}
		return out
	}
	var out []string
	for _, part := range strings.Split(headerText(s), ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseMailDate parses an RFC 5322 date, with a few common deviations.
func parseMailDate(s string) (time.Time, bool) {
	if t, err := mail.ParseDate(s); err == nil {
		return t, true
	}
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	for _, layout := range []string{
		"Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700",
		"Mon, 2 Jan 06 15:04:05 -0700", "Mon, 2 Jan 2006 15:04 -0700", "Mon Jan 2 15:04:05 2006",
		"Mon, 02 Jan 2006 15:04:05", time.RFC3339,
	} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type mailParser struct {
	p      *parser
	err    error
	nparts int
	inline int
}

// entity handles one MIME entity: multiparts are walked, inline text goes
// to the body, anything else becomes a child.
func (m *mailParser) entity(h textproto.MIMEHeader, body io.Reader, depth int) {
	p := m.p
	if p.cancelled() {
		return
	}
	ct, params := contentType(h.Get("Content-Type"))
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	filename := dparams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	filename = headerText(filename)
	cte := strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))

	switch {
	case strings.HasPrefix(ct, "multipart/"):
		m.multipart(ct, params, body, depth)
		return
	case ct == "application/pgp-signature" || ct == "application/pkcs7-signature" || ct == "application/x-pkcs7-signature":
		return // signatures carry no content
	case ct == "application/pkcs7-mime" || ct == "application/x-pkcs7-mime":
		if strings.Contains(strings.ToLower(params["smime-type"]), "enveloped") {
			p.d.setExtra("encrypted", "true")
			p.fail("decrypt", fmt.Errorf("%w: S/MIME encrypted message", ErrEncrypted))
			return
		}
	}
	data, err := decodeTransfer(body, cte)
	if err != nil {
		m.setErr(err)
	}
	inlineText := (ct == "text/plain" || ct == "text/html" || ct == "text/enriched") && disp != "attachment" && filename == ""
	if inlineText {
		if m.inline > 0 {
			p.text.newline()
			p.text.addByte('\n')
		}
		m.inline++
		declared := ct + "; charset=" + params["charset"]
		if ct == "text/html" {
			html, _ := htmlToUTF8(data, declared)
			var ignore Metadata
			if err := htmlText(p, html, &ignore); err != nil {
				m.setErr(err)
			}
			return
		}
		s, _ := decodeText(data, declared)
		p.text.addString(strings.ReplaceAll(s, "\r\n", "\n"))
		return
	}
	m.nparts++
	if !p.admit() {
		return
	}
	name := filename
	if name == "" {
		name = "attachment-" + strconv.Itoa(m.nparts) + extFor(ct)
	}
	name = path.Base(cleanName(name))
	declared := ct
	if cs := params["charset"]; cs != "" {
		declared += "; charset=" + cs
	}
	p.child(name, declared, data)
}

func (m *mailParser) setErr(err error) {
	if m.err == nil {
		m.err = err
	}
}

// multipart walks the parts of a multipart entity. Of the alternatives of
// multipart/alternative only one is kept: text/plain if there is one,
// else the last (richest).
func (m *mailParser) multipart(ct string, params map[string]string, body io.Reader, depth int) {
	p := m.p
	if ct == "multipart/encrypted" {
		p.d.setExtra("encrypted", "true")
		p.fail("decrypt", fmt.Errorf("%w: encrypted message (%s)", ErrEncrypted, params["protocol"]))
		return
	}
	if depth >= maxMIMEDepth {
		m.setErr(fmt.Errorf("%w: multiparts nested deeper than %d", ErrTooDeep, maxMIMEDepth))
		return
	}
	boundary := params["boundary"]
	if boundary == "" {
		m.setErr(fmt.Errorf("%w: %s without boundary", ErrMalformed, ct))
		return
	}
	mr := multipart.NewReader(body, boundary)
	type alt struct {
		h    textproto.MIMEHeader
		data []byte
	}
	var alts []alt
	for {
		if p.cancelled() {
			return
		}
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			m.setErr(fmt.Errorf("%w: %s: %w", ErrMalformed, ct, err))
			break
		}
		if ct == "multipart/alternative" {
			data, err := io.ReadAll(part)
			if err != nil {
				m.setErr(fmt.Errorf("%w: %s: %w", ErrMalformed, ct, err))
			}
			alts = append(alts, alt{part.Header, data})
			continue
		}
		m.entity(part.Header, part, depth+1)
	}
	if len(alts) == 0 {
		return
	}
	best := len(alts) - 1
	for i, a := range alts {
		if t, _ := contentType(a.h.Get("Content-Type")); t == "text/plain" {
			best = i
			break
		}
	}
	m.entity(alts[best].h, bytes.NewReader(alts[best].data), depth+1)
}

// contentType parses a Content-Type header, defaulting to text/plain.
func contentType(v string) (string, map[string]string) {
	if strings.TrimSpace(v) == "" {
		return "text/plain", map[string]string{}
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		// Keep what parses: the type before the first parameter.
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
		if params == nil {
			params = map[string]string{}
		}
		if i := strings.Index(strings.ToLower(v), "boundary="); i >= 0 {
			params["boundary"] = strings.Trim(strings.Fields(v[i+len("boundary="):] + " ")[0], `";`)
		}
		if !strings.Contains(mt, "/") {
			mt = "text/plain"
		}
	}
	return mt, params
}

// extFor returns a file extension for an unnamed part of type ct.
func extFor(ct string) string {
	switch ct {
	case "message/rfc822", "message/global":
		return ".eml"
	case "text/plain":
		return ".txt"
	case "text/html":
		return ".html"
	case "text/calendar":
		return ".ics"
	case "application/pdf":
		return ".pdf"
	}
	return ""
}

// decodeTransfer reads body and undoes its Content-Transfer-Encoding,
// leniently: bad base64 characters are skipped, bad quoted-printable is
// kept as it is.
func decodeTransfer(body io.Reader, cte string) ([]byte, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		err = fmt.Errorf("%w: read part: %w", ErrMalformed, err)
	}
	switch cte {
	case "base64":
		return decodeBase64(raw), err
	case "quoted-printable":
		out, qerr := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if qerr != nil {
			return raw, err
		}
		return out, err
	}
	return raw, err
}

// decodeBase64 decodes base64, ignoring anything outside the alphabet
// and a truncated final group.
func decodeBase64(raw []byte) []byte {
	clean := make([]byte, 0, len(raw))
	for _, c := range raw {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, _ := base64.RawStdEncoding.Decode(out, clean)
	return out[:n]
}

// parseMBOX splits an mbox (mboxo or mboxrd) at its "From " separator
// lines; each message becomes a child.
func parseMBOX(p *parser, data []byte) {
	n := 0
	for start := 0; start < len(data); {
		if p.cancelled() {
			return
		}
		end := nextFromLine(data, start)
		msg := data[start:end]
		start = end
		// Drop the separator line itself.
		if i := bytes.IndexByte(msg, '\n'); bytes.HasPrefix(msg, []byte("From ")) && i >= 0 {
			msg = msg[i+1:]
		} else if bytes.HasPrefix(msg, []byte("From ")) {
			continue
		}
		if len(bytes.TrimSpace(msg)) == 0 {
			continue
		}
		n++
		if !p.admit() {
			break
		}
		p.child("message "+strconv.Itoa(n), mediaEML, unescapeFrom(msg))
	}
	p.d.setExtra("messages", strconv.Itoa(n))
}

// nextFromLine returns the offset of the next message separator after the
// one at start: a "From " line after a blank line, or followed by a
// header line.
func nextFromLine(data []byte, start int) int {
	for i := start + 1; ; {
		j := bytes.Index(data[i:], []byte("\nFrom "))
		if j < 0 {
			return len(data)
		}
		at := i + j + 1
		blankBefore := at >= 2 && data[at-2] == '\n' || at >= 3 && data[at-2] == '\r' && data[at-3] == '\n'
		if blankBefore || isEML(lineAfter(data, at)) {
			return at
		}
		i = at
	}
}

func lineAfter(data []byte, at int) []byte {
	i := bytes.IndexByte(data[at:], '\n')
	if i < 0 {
		return nil
	}
	return data[at+i+1 : min(len(data), at+i+1+2048)]
}

// unescapeFrom undoes mboxrd/mboxo quoting: ">From " lines lose one '>'.
func unescapeFrom(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(">From ")) {
		return msg
	}
	out := make([]byte, 0, len(msg))
	for line := range bytes.Lines(msg) {
		if k := len(line) - len(bytes.TrimLeft(line, ">")); k > 0 && bytes.HasPrefix(line[k:], []byte("From ")) {
			line = line[1:]
		}
		out = append(out, line...)
	}
	return out
}
