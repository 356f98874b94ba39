package eval

import (
	"strings"
	"testing"
)

func TestQuoteDepth(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"no quoting", "Hello,\nplain text.\n", 0},
		{"one marker", "I agree.\n> the original\n", 1},
		{"markers with spaces", "reply\n> > > deep\n> shallow\n", 3},
		{"markers without spaces", "reply\n>>deep\n", 2},
		{"marker-only lines do not count", "reply\n> > >\n> text\n", 1},
		{"top-posted gmail", "Thanks!\n\nOn Tue, Jan 3, 2023 at 9:30 AM Ann <a@b.c> wrote:\n> question\n> > older\n", 2},
		{"wrote header without markers below", "Thanks!\n\nAnn wrote:\nquestion without markers\n", 1},
		{"outlook block", "Answer.\n\nFrom: Ann <a@b.c>\nSent: Tuesday, January 3, 2023 9:30 AM\nTo: list\nSubject: RE: question\n\nquestion\n", 1},
		{"outlook bold from html", "Answer.\n*From:* Ann\n*Sent:* Tuesday\n*Subject:* q\nquestion\n", 1},
		{"nested outlook blocks", "A\nFrom: x\nSent: d\nSubject: s\nB\nFrom: y\nSent: d\nSubject: s\nC\n", 2},
		{"forward line and its block are one level", "FYI\n---------- Forwarded message ---------\nFrom: x\nDate: d\nSubject: s\nTo: y\n\nforwarded text\n", 1},
		{"original message separator", "A\n-----Original Message-----\nB\n", 1},
		{"outlook block quoting inline quotes", "A\nFrom: x\nSent: d\nSubject: s\nB\nOn Mon, y wrote:\n> C\n", 2},
		{"header quoted inline applies to deeper lines only", "> On Mon, x wrote:\n> > old\n> mid\nnew reply text\n", 2},
		{"from line alone is not a header", "From: the beginning\nof time\n", 0},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QuoteDepth(tc.body); got != tc.want {
				t.Errorf("QuoteDepth = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestQuoteDepthBounded(t *testing.T) {
	deep := strings.Repeat(">", 500) + " text\n"
	if got := QuoteDepth(deep); got != MaxQuoteDepth {
		t.Errorf("500 markers: depth %d, want %d", got, MaxQuoteDepth)
	}
	nested := strings.Repeat("x\nOn Mon, y wrote:\n", 300) + "z\n"
	if got := QuoteDepth(nested); got != MaxQuoteDepth {
		t.Errorf("300 nested headers: depth %d, want %d", got, MaxQuoteDepth)
	}
}

func TestPairQuoting(t *testing.T) {
	for _, tc := range []struct {
		a, b int
		want Quoting
	}{{0, 0, NoQuoting}, {1, 1, SameDepth}, {3, 3, SameDepth}, {0, 1, DepthDiffers}, {2, 1, DepthDiffers}} {
		if got := PairQuoting(tc.a, tc.b); got != tc.want {
			t.Errorf("PairQuoting(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzQuoteDepth(f *testing.F) {
	f.Add("> a\n> > b\nOn x wrote:\nc\nFrom: a\nSent: b\nSubject: c\nd\n")
	f.Add("-----Original Message-----\n\n\nFrom: a\r\nDate: b\r\nSubject: c\r\n")
	f.Fuzz(func(t *testing.T, body string) {
		d := QuoteDepth(body)
		if d < 0 || d > MaxQuoteDepth {
			t.Fatalf("depth %d", d)
		}
		if !strings.ContainsAny(body, ">:-=_") && d != 0 {
			t.Fatalf("depth %d without any marker or header", d)
		}
	})
}

func BenchmarkQuoteDepth(b *testing.B) {
	body := strings.Repeat("> > quoted line of text\n>\nOn Mon, x wrote:\nFrom: a\nSent: b\nSubject: c\n\n", 20000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		QuoteDepth(body)
	}
}
