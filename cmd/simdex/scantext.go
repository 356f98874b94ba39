package main

import (
	"fmt"
	"io"
	"slices"
)

// textOptions chooses what the text report shows.
type textOptions struct {
	pairs    bool    // every member and the pair table, not a summary
	limit    int     // at most this many rows per section; 0: all
	minScore float64 // pairs scoring less (resemblance and both containments) are left out
}

// shown returns how many of n rows a section shows under limit.
func (o textOptions) shown(n int) int {
	if o.limit > 0 && n > o.limit {
		return o.limit
	}
	return n
}

// more prints "… and N more" when a section was cut.
func more(w io.Writer, shown, n int, hint string) {
	if n > shown {
		fmt.Fprintf(w, "  … and %d more (%s)\n", n-shown, hint)
	}
}

func (r *report) writeText(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "%d files, %d documents indexed (attachments and archive members included), %d with errors\n", r.Files, r.Documents, len(r.Errors))
	if len(r.Errors) > 0 {
		fmt.Fprintln(w, "\nErrors (recorded in the index for manual review):")
		k := o.shown(len(r.Errors))
		for _, e := range r.Errors[:k] {
			fmt.Fprintf(w, "  %s: %s\n", e.Path, e.Error)
		}
		more(w, k, len(r.Errors), "--limit 0 lists them all")
	}
	r.writeSets(w, o)
	r.writeFamilies(w, o)
	if o.pairs {
		r.writePairs(w, o)
	} else if len(r.pairs) > 0 {
		fmt.Fprintln(w, "\n--pairs lists every near-copy pair with its scores; --json prints the whole report.")
	}
}

// writeSets prints the identical sets, largest first.
func (r *report) writeSets(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nIdentical sets: %d\n", len(r.Identical))
	sets := slices.Clone(r.Identical)
	slices.SortStableFunc(sets, func(a, b []string) int { return len(b) - len(a) })
	k := o.shown(len(sets))
	for i, set := range sets[:k] {
		if o.pairs {
			fmt.Fprintf(w, "  [%d] %d copies\n", i+1, len(set))
			for _, n := range set {
				fmt.Fprintf(w, "      %s\n", n)
			}
			continue
		}
		fmt.Fprintf(w, "  [%d] %d copies of %s\n", i+1, len(set), set[0])
	}
	more(w, k, len(sets), "--limit 0 lists them all")
}

// writeFamilies prints the near-copy families, largest first.
func (r *report) writeFamilies(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nNear-copy families: %d\n", len(r.Families))
	fams := slices.Clone(r.Families)
	slices.SortStableFunc(fams, func(a, b familyJSON) int { return len(b.Members) - len(a.Members) })
	k := o.shown(len(fams))
	for i, f := range fams[:k] {
		fmt.Fprintf(w, "  [%d] %d documents, %d links, average resemblance %.0f%%, pivot %s\n", i+1, len(f.Members), f.Links, 100*f.AvgResemblance, f.Pivot)
		if o.pairs {
			for _, m := range f.Members {
				fmt.Fprintf(w, "      %s\n", m)
			}
		}
	}
	more(w, k, len(fams), "--limit 0 lists them all")
}

// writePairs prints the near-copy pairs scoring at least o.minScore.
func (r *report) writePairs(w io.Writer, o textOptions) {
	var rows []pairJSON
	for i := range r.pairs {
		if r.pairs[i].exact {
			continue
		}
		p := r.pairs[i].json(r.names)
		if max(p.Resemblance, p.ContainmentAB, p.ContainmentBA) >= o.minScore {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNear-copy pairs: %d\n", len(rows))
	fmt.Fprintf(w, "  %-6s %-6s %-6s %-9s %-4s %s\n", "resem", "a in b", "b in a", "bytes", "ham", "a ~ b")
	k := o.shown(len(rows))
	for _, p := range rows[:k] {
		fmt.Fprintf(w, "  %5.0f%% %5.0f%% %5.0f%% %9d %4d  %s ~ %s\n", 100*p.Resemblance, 100*p.ContainmentAB, 100*p.ContainmentBA, p.BytesInCommon, p.Hamming, p.A, p.B)
	}
	more(w, k, len(rows), "--limit 0 lists them all, --min-score keeps the closest")
	fmt.Fprintln(w, bytesLegend)
}

// bytesLegend follows a table of scores: a reviewer who sees 0 bytes in
// common beside a containment of 98 % (a one-word edit of a 1 KB text,
// whose only chunk the edit changed) should know why.
const bytesLegend = "  (bytes: text in whole chunks both share, a lower bound; a short text edited anywhere may share none)"
