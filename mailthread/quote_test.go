package mailthread

import (
	"strings"
	"testing"
)

// part is a compact Part for test tables: depth, kind and text.
type part struct {
	depth int
	kind  Kind
	text  string
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want []part
	}{
		{"plain", "Hello\nworld\n", []part{{0, New, "Hello\nworld"}}},
		{"inline one level", "Yes.\n\nOn Tue, Jan 3, 2023 at 10:00 AM Ann <a@x.com> wrote:\n> Is it ready?\n> Ann\n",
			[]part{{0, New, "Yes.\n"}, {1, Quoted, "Is it ready?\nAnn"}}},
		{"nested markers", "C\n> B\n> > A\n>> A2\n> B2\n",
			[]part{{0, New, "C"}, {1, Quoted, "B"}, {2, Quoted, "A\nA2"}, {1, Quoted, "B2"}}},
		{"pipe markers", "C\n| B\n| | A\n", []part{{0, New, "C"}, {1, Quoted, "B"}, {2, Quoted, "A"}}},
		{"table is not quoted", "| a | b |\n| 1 | 2 |\n", []part{{0, New, "| a | b |\n| 1 | 2 |"}}},
		{"interleaved", "> q1\na1\n> q2\na2\n",
			[]part{{1, Quoted, "q1"}, {0, New, "a1"}, {1, Quoted, "q2"}, {0, New, "a2"}}},
		{"top-posted gmail wrapped attribution", "Sure.\n\nOn Tue, Jan 3, 2023 at 10:00 AM Ann Smith <\nann@x.com> wrote:\n\nIs it ready?\n",
			[]part{{0, New, "Sure.\n"}, {1, Quoted, "Is it ready?"}}},
		{"german attribution", "Ja.\nAm 03.01.2023 um 10:00 schrieb Hans Meier:\n> Fertig?\n",
			[]part{{0, New, "Ja."}, {1, Quoted, "Fertig?"}}},
		{"french attribution top-posted", "Oui.\nLe mar. 3 janv. 2023 à 10:00, Ann <a@x.fr> a écrit :\nPrêt ?\n",
			[]part{{0, New, "Oui."}, {1, Quoted, "Prêt ?"}}},
		{"bare writer attribution needs quotes", "Ann wrote:\nthat was it\n", []part{{0, New, "Ann wrote:\nthat was it"}}},
		{"bare writer attribution", "Agreed.\nAnn Smith wrote:\n> that was it\n", []part{{0, New, "Agreed."}, {1, Quoted, "that was it"}}},
		{"outlook block", "Fine by me.\n\nFrom: Ann Smith <a@x.com>\nSent: Tuesday, January 3, 2023 10:00 AM\nTo: Bob <b@x.com>;\n  Carol <c@x.com>\nSubject: RE: Budget\n\nHere it is.\n",
			[]part{{0, New, "Fine by me.\n"}, {1, Quoted, "Here it is."}}},
		{"original message", "OK\n-----Original Message-----\nFrom: Ann\nSent: Monday\nTo: Bob\nSubject: Budget\n\nNumbers\n",
			[]part{{0, New, "OK"}, {1, Quoted, "Numbers"}}},
		{"outlook nested", "C\nFrom: B\nSent: 2\nTo: C\nSubject: s\n\nB text\nFrom: A\nSent: 1\nTo: B\nSubject: s\n\nA text\n",
			[]part{{0, New, "C"}, {1, Quoted, "B text"}, {2, Quoted, "A text"}}},
		{"german outlook block", "Danke\nVon: Hans\nGesendet: Montag\nAn: Eva\nBetreff: Angebot\n\nHier\n",
			[]part{{0, New, "Danke"}, {1, Quoted, "Hier"}}},
		{"from line alone is text", "From: the start\nto the end\n", []part{{0, New, "From: the start\nto the end"}}},
		{"gmail forward", "FYI\n\n---------- Forwarded message ---------\nFrom: Ann <a@x.com>\nDate: Tue, Jan 3, 2023\nSubject: Budget\nTo: Bob <b@x.com>\n\nNumbers\n",
			[]part{{0, New, "FYI\n"}, {1, Forwarded, "Numbers"}}},
		{"apple forward", "FYI\nBegin forwarded message:\n\nFrom: Ann\nSubject: Budget\nDate: 3 January\n\nNumbers\n",
			[]part{{0, New, "FYI"}, {1, Forwarded, "Numbers"}}},
		{"quoted outlook block", "C\n> B\n> From: A\n> Sent: 1\n> To: B\n> Subject: s\n>\n> A text\n",
			[]part{{0, New, "C"}, {1, Quoted, "B"}, {2, Quoted, "A text"}}},
		{"indented quote", "a\n   > b\n", []part{{0, New, "a"}, {1, Quoted, "b"}}},
		{"crlf", "a\r\n> b\r\n", []part{{0, New, "a"}, {1, Quoted, "b"}}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse(tc.body)
			if len(got) != len(tc.want) {
				t.Fatalf("Parse returned %d parts, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Depth != w.depth || g.Kind != w.kind || g.Text != w.text {
					t.Errorf("part %d = {%d %v %q}, want {%d %v %q}", i, g.Depth, g.Kind, g.Text, w.depth, w.kind, w.text)
				}
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	parts := Parse("Yes\nOn Tue, Ann\nwrote:\n> q\n")
	if len(parts) != 2 || parts[1].Header != "On Tue, Ann\nwrote:" {
		t.Fatalf("parts = %+v, want the attribution as the quoted part's header", parts)
	}
}

func TestParseDeep(t *testing.T) {
	var b strings.Builder
	for d := 0; d <= 100; d++ {
		b.WriteString(strings.Repeat("> ", d) + "level\n")
	}
	parts := Parse(b.String())
	if len(parts) != 101 {
		t.Fatalf("got %d parts, want 101", len(parts))
	}
	for d, p := range parts {
		if p.Depth != d || p.Text != "level" {
			t.Fatalf("part %d = %+v", d, p)
		}
	}
	if got := QuotedText(parts, 100); got != "level" {
		t.Errorf("QuotedText(100) = %q", got)
	}
}

func TestParseMaxParts(t *testing.T) {
	body := strings.Repeat("a\n> b\n", MaxParts)
	parts := Parse(body)
	if len(parts) != MaxParts {
		t.Fatalf("got %d parts, want %d", len(parts), MaxParts)
	}
	total := 0
	for _, p := range parts {
		total += strings.Count(p.Text, "a") + strings.Count(p.Text, "b")
	}
	if total != 2*MaxParts {
		t.Errorf("parts hold %d lines, want %d: text was lost", total, 2*MaxParts)
	}
}

func TestStripBoilerplate(t *testing.T) {
	footer := "_______________________________________________\nUSRP-users mailing list -- usrp-users@lists.ettus.com\nTo unsubscribe send an email to usrp-users-leave@lists.ettus.com\n"
	for _, tc := range []struct{ name, in, want string }{
		{"none", "text\n", "text\n"},
		{"signature", "text\n-- \nAnn Smith\nACME\n", "text\n"},
		{"footer", "text\n\n" + footer, "text\n"},
		{"signature and footer", "text\n-- \nAnn\n\n" + footer, "text\n"},
		{"quoted signature", "reply\n> text\n> -- \n> Ann\nmore\n", "reply\n> text\nmore\n"},
		{"signature ends at attribution", "reply\n-- \nBob\nOn Mon, Ann wrote:\n> q\n", "reply\nOn Mon, Ann wrote:\n> q\n"},
		{"long block is not a signature", "a\n-- \n" + strings.Repeat("line\n", 20), "a\n-- \n" + strings.Repeat("line\n", 20)},
		{"repeated quoted footers", "a\n>\n> " + strings.ReplaceAll(strings.TrimSuffix(footer, "\n"), "\n", "\n> ") + "\n>\n> " + strings.ReplaceAll(strings.TrimSuffix(footer, "\n"), "\n", "\n> ") + "\n", "a\n"},
		{"footer without its rule", "a\n>> USRP-users mailing list -- u@x\n>> To unsubscribe send an email to v@x\n>\n", "a\n"},
		{"footer on one line", "a\n> ____ L mailing list -- l@x To unsubscribe send an email to m@x\n", "a\n"},
		{"double-spaced footer", "a\n\n____________________________\n\nL mailing list -- l@x\n\nTo unsubscribe send an email to m@x\n\nINTERNAL\n", "a\n\n\nINTERNAL\n"},
		{"footer ends before an attribution", "a\n" + strings.Repeat("_", 30) + "\nL mailing list\nl@lists.x.org\nhttps://lists.x.org/mailman/listinfo/l\n\nOn Thu, Rosa wrote:\nZoë,\n", "a\n\nOn Thu, Rosa wrote:\nZoë,\n"},
		{"rule alone is kept", "a\n" + strings.Repeat("_", 30) + "\nb\n", "a\n" + strings.Repeat("_", 30) + "\nb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripBoilerplate(tc.in); got != tc.want {
				t.Errorf("StripBoilerplate(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
