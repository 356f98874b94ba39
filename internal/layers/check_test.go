package layers

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// rulesFile is the file the rules are read from, named in the problems.
const rulesFile = "internal/layers/imports.txt"

// partOf is the part that holds pkg: the one with the longest directory
// pkg is in, "" for none.
func (rs *rules) partOf(pkg string) string {
	best, n := "", 0
	for name, p := range rs.parts {
		for _, d := range p.dirs {
			if strings.HasPrefix(pkg+"/", d) && len(d) > n {
				best, n = name, len(d)
			}
		}
	}
	return best
}

// under reports whether part hi stands above part lo (its floors put lo
// below it, directly or through others).
func (rs *rules) under(lo, hi string) bool {
	seen := map[string]bool{}
	stack := slices.Clone(rs.below[hi])
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p == lo {
			return true
		}
		if !seen[p] {
			seen[p] = true
			stack = append(stack, rs.below[p]...)
		}
	}
	return false
}

// sorted returns g's packages in order.
func (g graph) sorted() []string { return slices.Sorted(maps.Keys(g)) }

// checkPlaces fails each package in no part, each part on no floor, each
// circle of floors, and each package the rules name that does not exist.
func checkPlaces(rs *rules, g graph) []string {
	var out []string
	for _, pkg := range g.sorted() {
		if rs.partOf(pkg) == "" {
			out = append(out, fmt.Sprintf("package %s is in no part: add its directory to a part in %s", pkg, rulesFile))
		}
	}
	for _, name := range rs.order {
		if _, ok := rs.below[name]; !ok && !slices.ContainsFunc(slices.Collect(maps.Values(rs.below)), func(l []string) bool { return slices.Contains(l, name) }) {
			out = append(out, fmt.Sprintf("%s:%d: part %s stands on no floor", rulesFile, rs.parts[name].line, name))
		}
		if rs.under(name, name) {
			out = append(out, fmt.Sprintf("%s:%d: part %s stands below itself", rulesFile, rs.parts[name].line, name))
		}
	}
	for _, e := range rs.edges {
		out = append(out, missing(rs, g, e.line, []string{e.from, e.to})...)
	}
	for _, o := range rs.onlys {
		out = append(out, missing(rs, g, o.line, rs.expand(slices.Concat(o.what, o.by)))...)
	}
	return out
}

// missing fails each of names that is no package of g, no part and no
// name outside the module.
func missing(rs *rules, g graph, line int, names []string) []string {
	var out []string
	for _, p := range names {
		if _, ok := g[p]; !ok && !external(p) && rs.parts[p] == nil {
			out = append(out, fmt.Sprintf("%s:%d: there is no package %s", rulesFile, line, p))
		}
	}
	return out
}

// checkAllowed fails each import of the code that no line allows and each
// line that allows an import the code does not make.
func checkAllowed(rs *rules, g graph) []string {
	var out []string
	for _, pkg := range g.sorted() {
		for _, imp := range slices.Sorted(maps.Keys(g[pkg])) {
			if rs.byPair[[2]string{pkg, imp}] == nil {
				out = append(out, fmt.Sprintf("%s imports %s (%s), which no line of %s allows: add \"%s < %s;\" where the architecture allows it",
					pkg, imp, g[pkg][imp], rulesFile, imp, pkg))
			}
		}
	}
	for _, e := range rs.edges {
		if _, ok := g[e.from][e.to]; !ok {
			out = append(out, fmt.Sprintf("%s:%d: %s does not import %s: delete the line (or its name)", rulesFile, e.line, e.from, e.to))
		}
	}
	return out
}

// target is g without the imports its rules mark "to remove": the
// architecture the rules describe.
func target(rs *rules, g graph) graph {
	t := graph{}
	for pkg, imps := range g {
		t[pkg] = map[string]string{}
		for imp, file := range imps {
			if e := rs.byPair[[2]string{pkg, imp}]; e == nil || !e.remove {
				t[pkg][imp] = file
			}
		}
	}
	return t
}

// checkFloors fails each import of t from a package to a part that is not
// below the package's part.
func checkFloors(rs *rules, t graph) []string {
	var out []string
	for _, pkg := range t.sorted() {
		from := rs.partOf(pkg)
		for _, imp := range slices.Sorted(maps.Keys(t[pkg])) {
			to := rs.partOf(imp)
			if external(imp) || to == from || from == "" || to == "" || rs.under(to, from) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s (%s): %s does not stand below %s in %s; mark the line \"to remove\" or move the code",
				pkg, imp, t[pkg][imp], to, from, rulesFile))
		}
	}
	return out
}

// checkNevers fails each package of t that reaches a part a never forbids
// it, directly or through packages under internal/.
func checkNevers(rs *rules, t graph) []string {
	var out []string
	for _, pkg := range t.sorted() {
		from := rs.partOf(pkg)
		for _, n := range rs.nevers {
			if n.from != from {
				continue
			}
			if path := reach(t, pkg, func(p string) bool { return rs.partOf(p) == n.to }); path != nil {
				out = append(out, fmt.Sprintf("%s:%d: %s never imports %s (%s): %s", rulesFile, n.line, n.from, n.to, n.why, strings.Join(path, " → ")))
			}
		}
	}
	return out
}

// reach returns the shortest chain of imports from pkg to a package that
// is, through packages under internal/ alone, or nil.
func reach(t graph, pkg string, is func(string) bool) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range slices.Sorted(maps.Keys(t[p])) {
			if _, ok := prev[q]; ok {
				continue
			}
			prev[q] = p
			if is(q) {
				var path []string
				for c := q; c != ""; c = prev[c] {
					path = append([]string{c}, path...)
				}
				return path
			}
			if strings.HasPrefix(q, "internal/") {
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// checkOnly fails each import of t of a name an only restricts by a
// package that only does not name, nor its part.
func checkOnly(rs *rules, t graph) []string {
	var out []string
	for _, o := range rs.onlys {
		what, by := rs.expand(o.what), rs.expand(o.by)
		for _, pkg := range t.sorted() {
			if slices.Contains(by, pkg) || slices.Contains(by, rs.partOf(pkg)) {
				continue
			}
			for _, imp := range slices.Sorted(maps.Keys(t[pkg])) {
				if slices.Contains(what, imp) {
					out = append(out, fmt.Sprintf("%s:%d: only %s may import %s (%s): %s imports it (%s)",
						rulesFile, o.line, strings.Join(o.by, ", "), imp, o.why, pkg, t[pkg][imp]))
				}
			}
		}
	}
	return out
}

// check runs every check of the rules against the code's graph g.
func check(rs *rules, g graph) []string {
	out := checkPlaces(rs, g)
	out = append(out, checkAllowed(rs, g)...)
	t := target(rs, g)
	out = append(out, checkFloors(rs, t)...)
	out = append(out, checkNevers(rs, t)...)
	return append(out, checkOnly(rs, t)...)
}
