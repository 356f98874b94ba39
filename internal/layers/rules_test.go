package layers

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
)

// rules is imports.txt parsed: the parts, their floors, the imports
// allowed between packages, and the restrictions on them.
type rules struct {
	parts   map[string]*part    // by name
	order   []string            // part names in the order they are defined
	aliases map[string][]string // NAME = packages;
	below   map[string][]string // part → the parts directly below it
	edges   []edge              // "a < b": b imports a
	nevers  []never             // "A !< B"
	onlys   []only              // "only a < B"
	known   map[string]bool     // names outside the module the rules track
	byPair  map[[2]string]*edge // importer, imported → its line
}

// part is a part of the architecture: the packages under its directories.
type part struct {
	name string
	dirs []string // inside the module, each ending in "/"
	says string   // what it is, from the comment of its line
	line int
}

// edge allows one import: from imports to.
type edge struct {
	from, to string
	remove   bool   // today's, and the architecture forbids it
	why      string // the comment of its line
	line     int
}

// never forbids the packages of part from to import those of part to.
type never struct {
	from, to string
	why      string
	line     int
}

// only allows the names of what to be imported by the packages and parts
// of by alone.
type only struct {
	what, by []string
	why      string
	line     int
}

// statement is the text of one statement, without its comments.
type statement struct {
	tokens []string
	why    string // the comments on its lines
	line   int    // where it begins
}

// statements splits the text into statements, each ending with ";".
func statements(r io.Reader) ([]statement, error) {
	var out []statement
	cur := statement{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text, comment, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(text) == "" {
			continue
		}
		for {
			part, rest, done := strings.Cut(text, ";")
			if f := strings.FieldsFunc(part, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }); len(f) > 0 {
				if len(cur.tokens) == 0 {
					cur.line = n
				}
				cur.tokens = append(cur.tokens, f...)
			}
			if c := strings.TrimSpace(comment); c != "" && len(cur.tokens) > 0 {
				cur.why = strings.TrimSpace(cur.why + " " + c)
			}
			if !done {
				break
			}
			if len(cur.tokens) > 0 {
				out = append(out, cur)
			}
			cur, text = statement{}, rest
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	if len(cur.tokens) > 0 {
		return nil, fmt.Errorf("line %d: statement has no closing ;", cur.line)
	}
	return out, nil
}

// parse reads the rules.
func parse(r io.Reader) (*rules, error) {
	stmts, err := statements(r)
	if err != nil {
		return nil, err
	}
	rs := &rules{parts: map[string]*part{}, aliases: map[string][]string{}, below: map[string][]string{},
		known: map[string]bool{}, byPair: map[[2]string]*edge{}}
	for _, s := range stmts {
		if len(s.tokens) > 1 && s.tokens[1] == "=" {
			err = rs.define(s)
		} else if s.tokens[0] == "only" {
			err = rs.only(s)
		} else if i := slices.Index(s.tokens, "!<"); i >= 0 {
			err = rs.never(s, i)
		} else {
			err = rs.chain(s)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", s.line, err)
		}
	}
	return rs, rs.resolve()
}

// isName reports whether tok names a part or an alias (it begins with a
// capital letter) rather than a package.
func isName(tok string) bool { return tok != "" && unicode.IsUpper(rune(tok[0])) }

// define reads "NAME = dir/, ...;" (a part) or "NAME = a, b;" (an alias).
func (rs *rules) define(s statement) error {
	name, items := s.tokens[0], s.tokens[2:]
	if !isName(name) || rs.parts[name] != nil || rs.aliases[name] != nil {
		return fmt.Errorf("%q is no new capitalised name", name)
	}
	dirs := 0
	for _, it := range items {
		if strings.HasSuffix(it, "/") {
			dirs++
		}
	}
	switch {
	case len(items) == 0:
		return fmt.Errorf("%s names nothing", name)
	case dirs == len(items):
		rs.parts[name] = &part{name: name, dirs: items, says: s.why, line: s.line}
		rs.order = append(rs.order, name)
	case dirs == 0:
		rs.aliases[name] = items
	default:
		return fmt.Errorf("%s mixes directories (a part) and packages (an alias)", name)
	}
	return nil
}

// lists splits tokens at each sep.
func lists(tokens []string, sep string) [][]string {
	var out [][]string
	cur := []string{}
	for _, t := range tokens {
		if t == sep {
			out, cur = append(out, cur), []string{}
			continue
		}
		cur = append(cur, t)
	}
	return append(out, cur)
}

// only reads "only a, b < c, D;".
func (rs *rules) only(s statement) error {
	l := lists(s.tokens[1:], "<")
	if len(l) != 2 || len(l[0]) == 0 || len(l[1]) == 0 {
		return fmt.Errorf("want only WHAT < BY")
	}
	rs.onlys = append(rs.onlys, only{what: l[0], by: l[1], why: s.why, line: s.line})
	return nil
}

// never reads "A !< B;": no package of B imports one of A.
func (rs *rules) never(s statement, i int) error {
	l := lists(s.tokens, "!<")
	if len(l) != 2 || len(l[0]) == 0 || len(l[1]) == 0 {
		return fmt.Errorf("want PARTS !< PARTS")
	}
	for _, to := range l[0] {
		for _, from := range l[1] {
			rs.nevers = append(rs.nevers, never{from: from, to: to, why: s.why, line: s.line})
		}
	}
	return nil
}

// chain reads "a < b < c;": floors of parts when its names are
// capitalised, else imports (b imports a, c imports b).
func (rs *rules) chain(s statement) error {
	l := lists(s.tokens, "<")
	if len(l) < 2 {
		return fmt.Errorf("want A < B, an alias NAME = ..., or only A < B")
	}
	for i := 1; i < len(l); i++ {
		for _, lo := range l[i-1] {
			for _, hi := range l[i] {
				if err := rs.link(lo, hi, s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// link records that hi stands above lo (parts) or imports it (packages).
func (rs *rules) link(lo, hi string, s statement) error {
	switch {
	case lo == "" || hi == "":
		return fmt.Errorf("an empty list")
	case isName(lo) != isName(hi):
		return fmt.Errorf("%s < %s mixes parts and packages", lo, hi)
	case isName(lo):
		rs.below[hi] = append(rs.below[hi], lo)
	default:
		if rs.byPair[[2]string{hi, lo}] != nil {
			return fmt.Errorf("%s < %s is allowed twice", lo, hi)
		}
		e := &edge{from: hi, to: lo, why: s.why, line: s.line, remove: strings.HasPrefix(s.why, "to remove")}
		rs.byPair[[2]string{hi, lo}] = e
		rs.edges = append(rs.edges, *e)
	}
	return nil
}

// resolve checks the names the statements use and notes the names outside
// the module that they track.
func (rs *rules) resolve() error {
	for hi, los := range rs.below {
		for _, p := range append([]string{hi}, los...) {
			if rs.parts[p] == nil {
				return fmt.Errorf("floors name %s, which is no part", p)
			}
		}
	}
	for _, n := range rs.nevers {
		if rs.parts[n.from] == nil || rs.parts[n.to] == nil {
			return fmt.Errorf("line %d: %s !< %s names no part", n.line, n.to, n.from)
		}
	}
	for _, o := range rs.onlys {
		for _, w := range rs.expand(o.what) {
			if rs.parts[w] != nil {
				return fmt.Errorf("line %d: only names part %s: a part is restricted by its floor", o.line, w)
			}
			if external(w) {
				rs.known[w] = true
			}
		}
	}
	for _, e := range rs.edges {
		if external(e.to) {
			rs.known[e.to] = true
		}
	}
	return nil
}

// expand replaces the aliases in names by their members.
func (rs *rules) expand(names []string) []string {
	var out []string
	for _, n := range names {
		if a, ok := rs.aliases[n]; ok {
			out = append(out, rs.expand(a)...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// external reports whether name is outside the module: a module's path,
// whose first element has a dot.
func external(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return strings.Contains(first, ".")
}
