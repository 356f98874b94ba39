package eval

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
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding/htmlindex"
)

// The truth reads an e-mail on its own, with the standard library, not
// with package extract: its text is the Subject followed by the decoded
// inline text parts, as a reviewer reads the message. A part is inline
// text when it is text/plain, text/html or text/enriched, is not marked
// as an attachment and has no file name; of a multipart/alternative only
// text/plain is read when there is one, else the last text alternative.
// Attachments (files, attached messages) are documents of their own, as
// the daemon indexes them. HTML is reduced to its text, each nested
// <blockquote> prefixing its lines with "> " so that quote depth is seen
// as in plain text.

// maxMailDepth bounds the nesting of multiparts the truth reads.
const maxMailDepth = 20

// ErrMail reports a message the truth cannot read at all (no header).
var ErrMail = errors.New("unreadable e-mail")

// MailText is an e-mail as the truth reads it.
type MailText struct {
	// Subject is the decoded Subject header.
	Subject string
	// Body is the decoded inline text, parts separated by blank lines.
	Body string
	// Problems lists the parts that could not be decoded in full (their
	// readable text is kept).
	Problems []string
}

// Text returns the truth text: the subject, a blank line, the body.
func (m *MailText) Text() []byte {
	return []byte(m.Subject + "\n\n" + m.Body)
}

// ReadMail reads a message as the truth does. A message whose header
// cannot be parsed is ErrMail; a broken part is recorded in Problems and
// the rest of the message is read.
func ReadMail(raw []byte) (*MailText, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMail, err)
	}
	m := &MailText{Subject: decodeHeader(msg.Header.Get("Subject"))}
	var body strings.Builder
	r := mailReader{out: &body, m: m}
	r.entity(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	m.Body = body.String()
	return m, nil
}

// decodeHeader decodes RFC 2047 words, keeping the raw value when it
// cannot.
func decodeHeader(v string) string {
	d := mime.WordDecoder{CharsetReader: charsetReader}
	s, err := d.DecodeHeader(v)
	if err != nil {
		return v
	}
	return s
}

func charsetReader(charset string, in io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, fmt.Errorf("charset %q: %w", charset, err)
	}
	return enc.NewDecoder().Reader(in), nil
}

type mailReader struct {
	out *strings.Builder
	m   *MailText
}

func (r *mailReader) problem(format string, args ...any) {
	r.m.Problems = append(r.m.Problems, fmt.Sprintf(format, args...))
}

// entity reads one MIME entity into the body.
func (r *mailReader) entity(h textproto.MIMEHeader, body io.Reader, depth int) {
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || ct == "" {
		ct, params = "text/plain", map[string]string{"charset": "us-ascii"}
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	if strings.HasPrefix(ct, "multipart/") {
		r.multipart(ct, params, body, depth)
		return
	}
	if ct != "text/plain" && ct != "text/html" && ct != "text/enriched" {
		return
	}
	if disp == "attachment" || dparams["filename"] != "" || params["name"] != "" {
		return
	}
	data, err := decodeTransfer(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		r.problem("%s part: %v", ct, err)
	}
	text, err := decodeCharset(params["charset"], data)
	if err != nil {
		r.problem("%s part: %v", ct, err)
	}
	if ct == "text/html" {
		text = htmlText(text)
	}
	if r.out.Len() > 0 {
		r.out.WriteString("\n\n")
	}
	r.out.WriteString(strings.ReplaceAll(text, "\r\n", "\n"))
}

// multipart reads the parts of a multipart entity.
func (r *mailReader) multipart(ct string, params map[string]string, body io.Reader, depth int) {
	if depth >= maxMailDepth {
		r.problem("%s nested deeper than %d", ct, maxMailDepth)
		return
	}
	if params["boundary"] == "" {
		r.problem("%s without boundary", ct)
		return
	}
	type part struct {
		h    textproto.MIMEHeader
		data []byte
	}
	var parts []part
	mr := multipart.NewReader(body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.problem("%s: %v", ct, err)
			break
		}
		data, err := io.ReadAll(p)
		if err != nil {
			r.problem("%s: %v", ct, err)
		}
		parts = append(parts, part{p.Header, data})
	}
	if ct == "multipart/alternative" {
		pick := -1
		for k, p := range parts {
			pt, _, _ := mime.ParseMediaType(p.h.Get("Content-Type"))
			if pt == "text/plain" {
				pick = k
				break
			}
			if strings.HasPrefix(pt, "text/") || strings.HasPrefix(pt, "multipart/") {
				pick = k
			}
		}
		if pick < 0 {
			return
		}
		parts = parts[pick : pick+1]
	}
	for _, p := range parts {
		r.entity(p.h, bytes.NewReader(p.data), depth+1)
	}
}

// decodeTransfer undoes a content transfer encoding; what cannot be
// decoded is kept as it was read, with the error.
func decodeTransfer(cte string, body io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return raw, fmt.Errorf("read part: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return out, fmt.Errorf("quoted-printable: %w", err)
		}
		return out, nil
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, raw)
		clean = bytes.TrimRight(clean, "=")
		out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
		n, err := base64.RawStdEncoding.Decode(out, clean)
		if err != nil {
			return out[:n], fmt.Errorf("base64: %w", err)
		}
		return out[:n], nil
	}
	return raw, nil
}

// decodeCharset converts data from charset to UTF-8 (UTF-8 or US-ASCII
// when none is declared); an unknown charset is read as UTF-8 with an
// error.
func decodeCharset(charset string, data []byte) (string, error) {
	cs := strings.ToLower(strings.TrimSpace(charset))
	if cs == "" || cs == "utf-8" || cs == "us-ascii" || cs == "utf8" {
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), fmt.Errorf("charset %q: %w", charset, err)
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), fmt.Errorf("charset %q: %w", charset, err)
	}
	return string(out), nil
}

// htmlText returns the text of an HTML document: text nodes outside
// script, style and head, a line break at each block element, and "> "
// before each line inside n nested blockquotes, n times (at most
// MaxQuoteDepth).
func htmlText(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	quote, skip := 0, 0
	lineStart := true
	newline := func() {
		if !lineStart {
			b.WriteByte('\n')
			lineStart = true
		}
	}
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for k, line := range strings.Split(string(z.Text()), "\n") {
				if k > 0 {
					newline()
				}
				if strings.TrimSpace(line) == "" {
					continue
				}
				if lineStart {
					b.WriteString(strings.Repeat("> ", min(quote, MaxQuoteDepth)))
					lineStart = false
				}
				b.WriteString(line)
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tok := z.Token()
			end := tok.Type == html.EndTagToken
			switch string(name) {
			case "script", "style", "head", "title":
				if tok.Type == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
			case "blockquote":
				newline()
				if end && quote > 0 {
					quote--
				} else if !end {
					quote++
				}
			case "br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "ul", "ol", "hr":
				newline()
			}
		}
	}
}
