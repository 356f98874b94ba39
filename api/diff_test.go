package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// rebuild puts the two sides of a diff back together.
func rebuild(ops []DiffOp) (a, b string) {
	var sa, sb strings.Builder
	for _, op := range ops {
		switch op.Op {
		case "equal":
			sa.WriteString(op.Text)
			sb.WriteString(op.Text)
		case "delete":
			sa.WriteString(op.Text)
		case "insert":
			sb.WriteString(op.Text)
		}
	}
	return sa.String(), sb.String()
}

func TestDiffWordsHighlightsExactlyTheEditedWords(t *testing.T) {
	a := "The Licensee may copy the Software, in any medium.\nTermination: thirty days."
	b := "The Licensee may copy the Programs, in any medium.\nTermination: sixty days. Extra clause."
	ops, truncated := DiffWords(a, b)
	if truncated {
		t.Fatal("truncated")
	}
	var del, ins []string
	for _, op := range ops {
		switch op.Op {
		case "delete":
			del = append(del, op.Text)
		case "insert":
			ins = append(ins, op.Text)
		}
	}
	if strings.Join(del, "|") != "Software|thirty" || strings.Join(ins, "|") != "Programs|sixty| Extra clause." {
		t.Errorf("deleted %q, inserted %q", del, ins)
	}
	if ra, rb := rebuild(ops); ra != a || rb != b {
		t.Errorf("ops do not rebuild the texts: %q / %q", ra, rb)
	}
	if ops, _ := DiffWords("same text", "same text"); len(ops) != 1 || ops[0].Op != "equal" {
		t.Errorf("identical texts: %+v", ops)
	}
	if ops, _ := DiffWords("", ""); ops == nil || len(ops) != 0 {
		t.Errorf("empty texts: %#v, want an empty list", ops)
	}
}

func TestDiffWordsTruncatesAtACharacterBoundary(t *testing.T) {
	long := strings.Repeat("é", MaxDiffText) // two bytes each: the cut falls inside one
	ops, truncated := DiffWords(long, "x")
	if !truncated {
		t.Fatal("not reported truncated")
	}
	a, _ := rebuild(ops)
	if !utf8.ValidString(a) || len(a) > MaxDiffText || !strings.HasPrefix(long, a) {
		t.Errorf("truncated side: %d bytes, valid %v", len(a), utf8.ValidString(a))
	}
}

// FuzzDiffWords: whatever the texts, the ops rebuild both exactly and
// never put two runs of the same kind side by side.
func FuzzDiffWords(f *testing.F) {
	f.Add("The cat sat on the mat.", "The dog sat on a mat!")
	f.Add("", "abc")
	f.Add("日本語のテキスト", "日本語 テキスト\u0301")
	f.Add("\xff\xfe broken", "broken")
	f.Fuzz(func(t *testing.T, a, b string) {
		ops, _ := DiffWords(a, b)
		ra, rb := rebuild(ops)
		if ra != a || rb != b {
			t.Fatalf("rebuilt %q / %q from %q / %q", ra, rb, a, b)
		}
		for i := 1; i < len(ops); i++ {
			if ops[i].Op == ops[i-1].Op {
				t.Fatalf("two %s runs side by side: %+v", ops[i].Op, ops)
			}
		}
	})
}
