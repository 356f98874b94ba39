package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/simdex/simdex"

// parts names the part of the architecture each top-level directory of
// the module is (docs/architecture.md). internal/ holds support packages
// that are in no part; a new top-level directory must be added here.
var parts = map[string]string{
	"cmd":        "Cli",
	"daemon":     "Daemon",
	"api":        "Api",
	"webui":      "Webui",
	"ingest":     "Ingest",
	"connectors": "Connectors",
	"extract":    "Extract",
	"mailthread": "Mailthread",
	"index":      "Index",
	"policy":     "Policy",
	"notifier":   "Notifier",
	"auth":       "Auth",
	"export":     "Export",
}

// edge is an import that must never exist: no package of part from may
// import a package of part to, directly or through other packages.
type edge struct{ from, to, why string }

// never is the whiteboard's list of imports that must never exist, copied
// (the test does not read it).
var never = []edge{
	{"Index", "Connectors", "the engine knows no source"},
	{"Index", "Policy", "the engine knows no rule"},
	{"Index", "Daemon", "the engine is a library"},
	{"Index", "Extract", "the engine takes text"},
	{"Index", "Ingest", "the engine is below the pipeline"},
	{"Extract", "Index", "extraction is pure"},
	{"Connectors", "Index", "a source only delivers events"},
	{"Connectors", "Policy", "a source only delivers events"},
	{"Notifier", "Policy", "channels know no rules"},
	{"Notifier", "Index", "channels know no engine"},
	{"Policy", "Connectors", "rules know no source"},
	{"Policy", "Daemon", "policy is a library"},
	{"Policy", "Api", "the API calls policy, not back"},
	{"Ingest", "Api", "the pipeline serves no HTTP"},
	{"Ingest", "Policy", "the pipeline hands ids to observers the wiring chose"},
	{"Notifier", "Connectors", "channels know no source"},
	{"Mailthread", "Index", "the e-mail grammar is shared by extraction and the index"},
	{"Mailthread", "Extract", "the e-mail grammar is shared by extraction and the index"},
}

// below are the parts that import nothing above them, and above is what
// is above them.
var (
	below = []string{"Index", "Extract", "Mailthread", "Connectors"}
	above = []string{"Daemon", "Ingest", "Policy", "Notifier", "Api", "Auth", "Export", "Cli"}
)

// importedOnlyBy lists parts that only the parts in by import directly
// (test-support packages too, where tests is set).
var importedOnlyBy = []struct {
	part  string
	by    []string
	tests bool
	why   string
}{
	{"Api", []string{"Daemon", "Cli"}, false, "only the wiring and the CLI use the API"},
	{"Daemon", []string{"Cli"}, true, "the wiring is started by the CLI and test harnesses only"},
}

// rules is never with the edges from each part in below to each in above.
func rules() []edge {
	r := slices.Clone(never)
	for _, b := range below {
		for _, a := range above {
			r = append(r, edge{b, a, "imports nothing above it"})
		}
	}
	return r
}

// graph is the module's own import graph: package path → the module's
// packages it imports (test files excluded).
type graph map[string][]string

// load lists the module's packages with `go list`.
func load(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") {
				g[p.ImportPath] = append(g[p.ImportPath], imp)
			}
		}
		if _, ok := g[p.ImportPath]; !ok {
			g[p.ImportPath] = nil
		}
	}
	return g
}

// rel is pkg's path inside the module.
func rel(pkg string) string { return strings.TrimPrefix(pkg, module+"/") }

// partOf is pkg's part, "" for a support package under internal/, and ok
// false for a package in no known directory.
func partOf(pkg string) (part string, ok bool) {
	top, _, _ := strings.Cut(rel(pkg), "/")
	if top == "internal" {
		return "", true
	}
	part, ok = parts[top]
	return part, ok
}

// testSupport reports whether pkg is a package for tests (natstest,
// daemontest, storetest).
func testSupport(pkg string) bool {
	return strings.HasSuffix(pkg[strings.LastIndex(pkg, "/")+1:], "test")
}

// paths returns, for every package reachable from pkg, the shortest
// chain of imports from pkg to it.
func (g graph) paths(pkg string) map[string][]string {
	seen := map[string][]string{pkg: {pkg}}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g[p] {
			if _, ok := seen[q]; !ok {
				seen[q] = append(slices.Clone(seen[p]), q)
				queue = append(queue, q)
			}
		}
	}
	return seen
}

// chain writes a chain of imports as "a → b → c" inside the module.
func chain(path []string) string {
	s := make([]string, len(path))
	for i, p := range path {
		s[i] = rel(p)
	}
	return strings.Join(s, " → ")
}

// TestPartsKnown fails for a package in no part, and for a rule naming a
// part that does not exist, so that the tables cannot go stale silently.
func TestPartsKnown(t *testing.T) {
	for pkg := range load(t) {
		if _, ok := partOf(pkg); !ok {
			t.Errorf("%s is in no part: add its directory to parts in this test and to docs/architecture.md", rel(pkg))
		}
	}
	known := map[string]bool{}
	for _, p := range parts {
		known[p] = true
	}
	for _, r := range rules() {
		if !known[r.from] || !known[r.to] {
			t.Errorf("rule %s → %s names an unknown part", r.from, r.to)
		}
	}
}

// TestNeverImports fails for each package that reaches a forbidden part,
// directly or through other packages, naming the rule and the shortest
// chain of imports into that part. A chain whose first step stays in the
// package's own part is reported at that step's package instead.
func TestNeverImports(t *testing.T) {
	g := load(t)
	forbidden := map[[2]string]string{}
	for _, r := range rules() {
		forbidden[[2]string{r.from, r.to}] = r.why
	}
	for _, pkg := range slices.Sorted(maps.Keys(g)) {
		from, _ := partOf(pkg)
		shortest := map[string][]string{} // forbidden part → chain
		for dep, path := range g.paths(pkg) {
			to, _ := partOf(dep)
			if _, ok := forbidden[[2]string{from, to}]; !ok || from == "" {
				continue
			}
			if next, _ := partOf(path[1]); next == from {
				continue
			}
			if old, ok := shortest[to]; !ok || len(path) < len(old) || len(path) == len(old) && dep < old[len(old)-1] {
				shortest[to] = path
			}
		}
		for _, to := range slices.Sorted(maps.Keys(shortest)) {
			t.Errorf("%s → %s is forbidden (%s): %s", from, to, forbidden[[2]string{from, to}], chain(shortest[to]))
		}
	}
}

// TestImportedOnlyBy fails for each direct import of a part by a package
// outside the parts allowed to import it.
func TestImportedOnlyBy(t *testing.T) {
	g := load(t)
	for _, pkg := range slices.Sorted(maps.Keys(g)) {
		from, _ := partOf(pkg)
		for _, dep := range g[pkg] {
			to, _ := partOf(dep)
			for _, r := range importedOnlyBy {
				if to != r.part || from == r.part || slices.Contains(r.by, from) || (r.tests && testSupport(pkg)) {
					continue
				}
				t.Errorf("only %s may import %s (%s): %s imports %s", strings.Join(r.by, " and "), r.part, r.why, rel(pkg), rel(dep))
			}
		}
	}
}
