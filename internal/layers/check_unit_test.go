package layers

import (
	"slices"
	"strings"
	"testing"
)

// small are rules of a small module: parts Low, Mid, Top and Help, floors
// Help < Low < Mid < Top, a never and an only.
const small = `
Low = low/; Mid = mid/; Top = top/;   # three parts
Help = internal/;                     # helpers
Help < Low < Mid < Top;
Low !< Top;                           # the top skips no floor
only example.com/db < mid;            # only mid opens the database
low < mid;
mid, example.com/db < top;            # to remove: the top opens the database
`

// smallGraph is the code of the small module, with extra imports added.
func smallGraph(extra ...[2]string) graph {
	g := graph{"low": {}, "mid": {"low": "mid/a.go"}, "top": {"mid": "top/a.go", "example.com/db": "top/a.go"}, "internal/h": {}}
	for _, e := range extra {
		g[e[0]][e[1]] = e[0] + "/b.go"
	}
	return g
}

// problems runs every check of rules on g.
func problems(t *testing.T, text string, g graph) []string {
	t.Helper()
	rs, err := parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return check(rs, g)
}

// wantOne fails unless got holds exactly one problem, containing want.
func wantOne(t *testing.T, got []string, want string) {
	t.Helper()
	if len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("problems %q, want one containing %q", got, want)
	}
}

func TestSmallModuleAgrees(t *testing.T) {
	if p := problems(t, small, smallGraph()); len(p) > 0 {
		t.Errorf("problems %q, want none", p)
	}
}

// TestUndeclaredImportFails is the regression test of issue 45: an import
// between the module's packages that no line allows failed nothing.
func TestUndeclaredImportFails(t *testing.T) {
	wantOne(t, problems(t, small, smallGraph([2]string{"low", "internal/h"})),
		`low imports internal/h (low/b.go), which no line of internal/layers/imports.txt allows: add "internal/h < low;"`)
}

func TestUnusedLineFails(t *testing.T) {
	wantOne(t, problems(t, small+"internal/h < low;\n", smallGraph()), "imports.txt:9: low does not import internal/h: delete the line")
}

func TestPackageInNoPartFails(t *testing.T) {
	g := smallGraph()
	g["other"] = map[string]string{}
	wantOne(t, problems(t, small, g), "package other is in no part")
}

func TestUpwardImportFails(t *testing.T) {
	wantOne(t, problems(t, small+"mid < low;\n", smallGraph([2]string{"low", "mid"})),
		"low imports mid (low/b.go): Mid does not stand below Low")
	if p := problems(t, small+"mid < low; # to remove: an old shortcut\n", smallGraph([2]string{"low", "mid"})); len(p) > 0 {
		t.Errorf("a line marked to remove: problems %q, want none", p)
	}
}

func TestNeverThroughInternalFails(t *testing.T) {
	text := small + "Side = internal/side/; Low < Side < Top; low < internal/side; internal/side < top;\n"
	g := smallGraph([2]string{"top", "internal/side"})
	g["internal/side"] = map[string]string{"low": "internal/side/a.go"}
	wantOne(t, problems(t, text, g), "Top never imports Low (the top skips no floor): top → internal/side → low")
}

func TestOnlyFails(t *testing.T) {
	text := strings.Replace(small, "# to remove: the top opens the database", "", 1)
	wantOne(t, problems(t, text, smallGraph()), "only mid may import example.com/db (only mid opens the database): top imports it (top/a.go)")
}

func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"A = a/;\nA < b;":        "line 2: A < b mixes parts and packages",
		"a < b":                  "line 1: statement has no closing ;",
		"A = a/, b;":             "line 1: A mixes directories",
		"a < b; a < b;":          "line 1: a < b is allowed twice",
		"A = a/; A !< B;":        "names no part",
		"A = a/; only A < b;":    "only names part A",
		"A = a/; A < B; B = b/;": "",
	} {
		_, err := parse(strings.NewReader(text))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("parse(%q) = %v, want %q", text, err, want)
		}
	}
}

func TestUnknownPackageFails(t *testing.T) {
	wantOne(t, problems(t, small+"only low < mid, nowhere;\n", smallGraph()), "imports.txt:9: there is no package nowhere")
}

func TestPartOfLongestDirectory(t *testing.T) {
	rs, err := parse(strings.NewReader("A = a/; B = a/b/; A < B;"))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{rs.partOf("a"), rs.partOf("a/c"), rs.partOf("a/b"), rs.partOf("a/b/c"), rs.partOf("ab")}
	if want := []string{"A", "A", "B", "B", ""}; !slices.Equal(got, want) {
		t.Errorf("parts %q, want %q", got, want)
	}
}
