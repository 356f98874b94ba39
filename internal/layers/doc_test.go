package layers

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's section written from imports.txt")

const (
	archDoc  = "../../docs/architecture.md"
	docBegin = "<!-- Written from internal/layers/imports.txt by `go generate ./internal/layers`: edit that file, not this section. -->\n"
	docEnd   = "<!-- End of the section written from internal/layers/imports.txt. -->\n"
	topPart  = "Cli" // the diagram draws this part and the parts below it
)

// TestArchitectureDoc fails when docs/architecture.md's section on the
// layers differs from what imports.txt says; -update rewrites it.
func TestArchitectureDoc(t *testing.T) {
	rs, _ := load(t)
	old, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok1 := bytes.Cut(old, []byte(docBegin))
	_, tail, ok2 := bytes.Cut(rest, []byte(docEnd))
	if !ok1 || !ok2 {
		t.Fatalf("%s has no section between %q and %q", archDoc, docBegin, docEnd)
	}
	doc := slices.Concat(head, []byte(docBegin), []byte(section(rs)), []byte(docEnd), tail)
	switch {
	case bytes.Equal(doc, old):
	case *update:
		if err := os.WriteFile(archDoc, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Errorf("docs/architecture.md's layers differ from internal/layers/imports.txt: run go generate ./internal/layers")
	}
}

// section writes the diagram and the tables of the rules.
func section(rs *rules) string {
	var b strings.Builder
	diagram(&b, rs)
	floorsTable(&b, rs)
	neversTable(&b, rs)
	onlyTable(&b, rs)
	removeTable(&b, rs)
	return b.String()
}

// drawn reports whether the diagram draws part p.
func (rs *rules) drawn(p string) bool { return p == topPart || rs.under(p, topPart) }

// partEdges is each pair of drawn parts with an import between them: true
// when one of its imports is not marked to remove.
func partEdges(rs *rules) map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, e := range rs.edges {
		from, to := rs.partOf(e.from), rs.partOf(e.to)
		if from == to || !rs.drawn(from) || !rs.drawn(to) {
			continue
		}
		k := [2]string{from, to}
		out[k] = out[k] || !e.remove
	}
	return out
}

// diagram writes the parts and the imports between them as a mermaid
// flowchart, one line for each part's solid arrows and one for its dotted
// ones (imports marked to remove).
func diagram(b *strings.Builder, rs *rules) {
	edges := partEdges(rs)
	b.WriteString("```mermaid\nflowchart TD\n")
	for _, name := range rs.order {
		p := rs.parts[name]
		if !rs.drawn(name) || !slices.ContainsFunc(slices.Collect(maps.Keys(edges)), func(k [2]string) bool { return k[0] == name || k[1] == name }) {
			continue
		}
		label := name
		if len(p.dirs) == 1 {
			label = p.dirs[0]
		}
		fmt.Fprintf(b, "  %s[\"%s<br/>%s\"]\n", name, label, p.says)
	}
	for _, from := range rs.order {
		for _, kind := range []bool{true, false} {
			var to []string
			for _, k := range slices.SortedFunc(maps.Keys(edges), cmpPair(rs)) {
				if k[0] == from && edges[k] == kind {
					to = append(to, k[1])
				}
			}
			arrow := map[bool]string{true: "-->", false: "-. \"to remove\" .->"}[kind]
			if len(to) > 0 {
				fmt.Fprintf(b, "  %s %s %s\n", from, arrow, strings.Join(to, " & "))
			}
		}
	}
	b.WriteString("```\n\n")
}

// cmpPair orders pairs of parts by the order the parts are defined in.
func cmpPair(rs *rules) func(a, b [2]string) int {
	return func(a, b [2]string) int {
		for i := range a {
			if d := slices.Index(rs.order, a[i]) - slices.Index(rs.order, b[i]); d != 0 {
				return d
			}
		}
		return 0
	}
}

// level is part p's floor, 1 for the ground.
func (rs *rules) level(p string) int {
	n := 0
	for _, q := range rs.below[p] {
		n = max(n, rs.level(q))
	}
	return n + 1
}

// floorsTable writes the parts floor by floor, from the top.
func floorsTable(b *strings.Builder, rs *rules) {
	b.WriteString("| floor | part | packages | what |\n|--:|---|---|---|\n")
	byLevel := slices.Clone(rs.order)
	slices.SortStableFunc(byLevel, func(x, y string) int { return rs.level(y) - rs.level(x) })
	for _, name := range byLevel {
		p := rs.parts[name]
		fmt.Fprintf(b, "| %d | %s | %s | %s |\n", rs.level(name), name, code(p.dirs), p.says)
	}
	b.WriteString("\n")
}

// code writes names as code, separated by commas.
func code(names []string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}

// neversTable writes the imports that must never exist.
func neversTable(b *strings.Builder, rs *rules) {
	b.WriteString("Imports that must never exist, directly or through packages under `internal/`:\n\n| part | never imports | because |\n|---|---|---|\n")
	for _, n := range rs.nevers {
		fmt.Fprintf(b, "| %s | %s | %s |\n", n.from, n.to, n.why)
	}
	b.WriteString("\n")
}

// onlyTable writes the names that only some packages may import.
func onlyTable(b *strings.Builder, rs *rules) {
	b.WriteString("Imported only by some (")
	for i, name := range slices.Sorted(maps.Keys(rs.aliases)) {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(b, "%s: %s", name, code(rs.expand([]string{name})))
	}
	b.WriteString("):\n\n| only | imported by | because |\n|---|---|---|\n")
	for _, o := range rs.onlys {
		fmt.Fprintf(b, "| %s | %s | %s |\n", strings.Join(o.what, ", "), strings.Join(o.by, ", "), o.why)
	}
	b.WriteString("\n")
}

// removeTable writes today's imports that the architecture forbids.
func removeTable(b *strings.Builder, rs *rules) {
	b.WriteString("Imports of today that the architecture forbids, each to remove with its line of `imports.txt`:\n\n| package | imports | why |\n|---|---|---|\n")
	for _, e := range rs.edges {
		if e.remove {
			fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", e.from, e.to, removeWhy(e.why))
		}
	}
	b.WriteString("\n")
}

// removeWhy turns "to remove (issue 45): reason" into "reason (issue 45)".
func removeWhy(comment string) string {
	why := strings.TrimSpace(strings.TrimPrefix(comment, "to remove"))
	if ref, rest, ok := strings.Cut(why, ")"); ok && strings.HasPrefix(ref, "(") {
		why = strings.TrimSpace(strings.TrimSpace(strings.TrimPrefix(rest, ":")) + " " + ref + ")")
	}
	return why
}
