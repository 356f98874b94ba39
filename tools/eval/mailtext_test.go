package eval

import (
	"errors"
	"strings"
	"testing"
)

func TestReadMail(t *testing.T) {
	for _, tc := range []struct {
		name, raw     string
		subject, body string // body: substrings expected, "|"-separated
		absent        string // substrings that must not be there
		problems      bool
	}{
		{"plain", "Subject: Hello\r\n\r\nBody text.\r\n", "Hello", "Body text.", "", false},
		{"encoded subject", "Subject: =?utf-8?q?Caf=C3=A9_=E2=82=AC?=\n\nx\n", "Café €", "x", "", false},
		{"latin-1 subject", "Subject: =?iso-8859-1?q?R=E9sum=E9?=\n\nx\n", "Résumé", "x", "", false},
		{"quoted-printable latin-1", "Subject: s\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\nd=E9j=E0 vu soft=\nbreak\n", "s", "déjà vu softbreak", "", false},
		{"base64", "Subject: s\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\naGVsbG8g\nd29ybGQ=\n", "s", "hello world", "", false},
		{"alternative prefers plain", "Subject: s\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\nplain part\n--b\nContent-Type: text/html\n\n<p>html part</p>\n--b--\n", "s", "plain part", "html part", false},
		{"html only", "Subject: s\nContent-Type: text/html\n\n<html><head><style>p{}</style></head><body><p>one</p><blockquote>two<blockquote>three</blockquote></blockquote><script>x()</script></body></html>", "s", "one|> two|> > three", "p{}|x()", false},
		{"attachments left out", "Subject: s\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nbody\n--b\nContent-Type: text/plain; name=log.txt\nContent-Disposition: attachment; filename=log.txt\n\nattached log\n--b\nContent-Type: message/rfc822\n\nSubject: inner\n\ninner body\n--b--\n", "s", "body", "attached log|inner body", false},
		{"unknown charset kept", "Subject: s\nContent-Type: text/plain; charset=x-nonsense\n\nstill read\n", "s", "still read", "", true},
		{"no boundary", "Subject: s\nContent-Type: multipart/mixed\n\nlost\n", "s", "", "lost", true},
		{"bad base64 keeps what decodes", "Subject: s\nContent-Transfer-Encoding: base64\n\naGVsbG8g!!!\n", "s", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadMail([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject != tc.subject {
				t.Errorf("subject %q, want %q", m.Subject, tc.subject)
			}
			for _, w := range strings.Split(tc.body, "|") {
				if !strings.Contains(m.Body, w) {
					t.Errorf("body %q lacks %q", m.Body, w)
				}
			}
			for _, w := range strings.Split(tc.absent, "|") {
				if w != "" && strings.Contains(m.Body, w) {
					t.Errorf("body %q has %q", m.Body, w)
				}
			}
			if (len(m.Problems) > 0) != tc.problems {
				t.Errorf("problems %q, want some: %v", m.Problems, tc.problems)
			}
			if !strings.HasPrefix(string(m.Text()), m.Subject+"\n") {
				t.Errorf("truth text %q does not start with the subject", m.Text())
			}
		})
	}
	if _, err := ReadMail([]byte("no header at all")); !errors.Is(err, ErrMail) {
		t.Errorf("headerless message: %v, want ErrMail", err)
	}
}

func TestReadMailDeepNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("Subject: s\n")
	for i := range 50 {
		b.WriteString("Content-Type: multipart/mixed; boundary=b" + strings.Repeat("x", i) + "\n\n--b" + strings.Repeat("x", i) + "\n")
	}
	b.WriteString("Content-Type: text/plain\n\ndeep\n")
	m, err := ReadMail([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) == 0 {
		t.Error("50 nested multiparts read without a problem recorded")
	}
}

func FuzzReadMail(f *testing.F) {
	f.Add([]byte("Subject: s\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/html; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n<blockquote>=E9</blockquote>\n--b--\n"))
	f.Add([]byte("Subject: =?utf-8?b?w6k=?=\nContent-Transfer-Encoding: base64\n\nw6k=\n"))
	f.Add([]byte("Subject: s\n\n> On Mon, a wrote:\n> > b\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ReadMail(raw)
		if err != nil {
			if !errors.Is(err, ErrMail) {
				t.Fatalf("error %v is not ErrMail", err)
			}
			return
		}
		// Decoding never grows a text more than its charset conversion
		// (at most 3 bytes per input byte) and the quote markers of
		// HTML (at most MaxQuoteDepth per line) can.
		if limit := 3*len(raw) + 2*MaxQuoteDepth*(strings.Count(string(raw), "<")+1); len(m.Body) > limit {
			t.Fatalf("body of %d bytes from %d bytes of message", len(m.Body), len(raw))
		}
		d := QuoteDepth(m.Body)
		if d < 0 || d > MaxQuoteDepth {
			t.Fatalf("quote depth %d", d)
		}
	})
}
