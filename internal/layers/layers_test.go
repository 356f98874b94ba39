package layers

import (
	"os"
	"testing"
)

// load reads the rules and the module's imports.
func load(t *testing.T) (*rules, graph) {
	t.Helper()
	f, err := os.Open("imports.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := parse(f)
	if err != nil {
		t.Fatalf("imports.txt: %v", err)
	}
	g, err := readModule("../..", rs.known)
	if err != nil {
		t.Fatal(err)
	}
	return rs, g
}

// TestImports fails for each disagreement of the code with imports.txt:
// an import no line allows, a line no import uses, a package in no part,
// and an import of the architecture (the lines not marked "to remove")
// that breaks a floor, a never or an only.
func TestImports(t *testing.T) {
	rs, g := load(t)
	for _, p := range check(rs, g) {
		t.Error(p)
	}
}
