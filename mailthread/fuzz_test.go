package mailthread

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse, QuotedText and StripBoilerplate never
// panic, never return more text than they were given, and stay within
// MaxParts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Yes\nOn Tue, Ann <a@x>\nwrote:\n> q\n> > qq\n",
		"a\n-----Original Message-----\nFrom: A\nSent: B\nTo: C\nSubject: D\n\nx\n",
		"---------- Forwarded message ---------\nFrom: A\nDate: B\nSubject: C\nTo: D\n\nx",
		"Begin forwarded message:\n\nFrom: A\n",
		"text\n-- \nsig\n___________________________\nlist mailing list\n",
		"| a | b |\n|x\n>>>>>>>>>>>>>>\n> > > > >",
		"Von: A\nGesendet: B\nAn: C\nBetreff: D\n\nx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		parts := Parse(body)
		if len(parts) > MaxParts {
			t.Fatalf("%d parts", len(parts))
		}
		n := 0
		for _, p := range parts {
			n += len(p.Text) + len(p.Header)
			if p.Depth < 0 || p.Depth > 2*MaxDepth+len(body) {
				t.Fatalf("depth %d", p.Depth)
			}
		}
		if n > len(body) {
			t.Fatalf("parts hold %d bytes of a %d-byte body", n, len(body))
		}
		if utf8.ValidString(body) {
			for _, p := range parts {
				if !utf8.ValidString(p.Text) {
					t.Fatalf("invalid UTF-8 part %q", p.Text)
				}
			}
		}
		_ = QuotedText(parts, 1)
		if s := StripBoilerplate(body); len(s) > len(body)+1 {
			t.Fatalf("StripBoilerplate grew %d to %d bytes", len(body), len(s))
		}
	})
}

// FuzzThread checks the header and subject parsers.
func FuzzThread(f *testing.F) {
	f.Add("<a@x>", "<b@x> <c@x>", "Re: [list] AW: x", "> quoted text of enough words to be looked up here\n")
	f.Add("a@x", "", "Re[2]:", "")
	f.Fuzz(func(t *testing.T, id, refs, subject, body string) {
		h := Header{MessageID: id, InReplyTo: id, References: refs, Subject: subject}
		if len(IDs(refs)) > maxIDs {
			t.Fatal("too many ids")
		}
		if s := Subject(subject); len(s) > len(subject) {
			t.Fatalf("Subject grew %q to %q", subject, s)
		}
		k, err := Resolve(context.Background(), finder{}, h, body)
		if err != nil || k != Key(h) {
			t.Fatalf("Resolve with nothing stored = %q, %v; want Key %q", k, err, Key(h))
		}
		if k != "" && len(k) != 16 {
			t.Fatalf("key %q", k)
		}
	})
}

// TestParseLarge parses 64 MB with quote markers on every line: the
// parts stay within MaxParts and hold no more text than the input.
func TestParseLarge(t *testing.T) {
	body := strings.Repeat("> > a\n", (64<<20)/6)
	parts := Parse(body)
	n := 0
	for _, p := range parts {
		n += len(p.Text)
	}
	if len(parts) > MaxParts || n > len(body) {
		t.Fatalf("%d parts, %d bytes", len(parts), n)
	}
	if s := StripBoilerplate(body); len(s) != len(body) {
		t.Fatalf("StripBoilerplate changed a body without boilerplate")
	}
}

// BenchmarkParse measures Parse on the worst inputs known: every line a
// quote, a header field or an attribution.
func BenchmarkParse(b *testing.B) {
	for _, unit := range []string{"> > a\n", "> x\n>> y\n", "From: a\nSent: b\n", "On a wrote:\n"} {
		body := strings.Repeat(unit, (1<<20)/len(unit))
		b.Run(strings.Fields(unit)[0], func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				Parse(body)
			}
		})
	}
}
