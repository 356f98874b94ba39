package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// FamilyEdge is a scored near-copy pair inside a family, A < B.
type FamilyEdge struct {
	A DocID `json:"a"`
	B DocID `json:"b"`
	Scores
}

// FamilyWalk is the near-copy family of one document (the transitive
// closure of its near-copies, as union-find builds Family for scan), as far
// as it was walked.
type FamilyWalk struct {
	// Pivot is the member most like the others, as BetterPivot defines it
	// for every view of a family.
	Pivot DocID
	// Members are the members, by id.
	Members []*Record
	// Edges are the scored pairs between members, by A then B, with their
	// scores rounded as reported; never nil.
	Edges []FamilyEdge
	// Truncated reports that the family has more members than the limit.
	Truncated bool
}

// Family walks the near-copies of root breadth first up to limit members
// and scores every pair found on the way, leaving out the documents
// visible rejects.
func (ix *Index) Family(ctx context.Context, root *Record, th Thresholds, limit int, visible func(*Record) bool) (*FamilyWalk, error) {
	members := map[DocID]*Record{root.ID: root}
	order := []DocID{root.ID}
	type pair struct{ a, b DocID }
	edges := map[pair]FamilyEdge{}
	out := &FamilyWalk{Pivot: root.ID, Edges: []FamilyEdge{}}
	for next := 0; next < len(order); next++ {
		id := order[next]
		ms, err := ix.Similar(ctx, id, th)
		if err != nil {
			return nil, fmt.Errorf("family of document %d: %w", root.ID, err)
		}
		for _, m := range ms {
			if !visible(m.Record) {
				continue
			}
			if _, in := members[m.Record.ID]; !in {
				if len(members) >= limit {
					out.Truncated = true
					continue
				}
				members[m.Record.ID] = m.Record
				order = append(order, m.Record.ID)
			}
			e := FamilyEdge{A: id, B: m.Record.ID, Scores: m.Scores.Rounded()}
			if e.A > e.B {
				e.A, e.B, e.ContainmentAB, e.ContainmentBA = e.B, e.A, e.ContainmentBA, e.ContainmentAB
			}
			edges[pair{e.A, e.B}] = e
		}
	}
	weight := map[DocID]float64{}
	for _, e := range edges {
		out.Edges = append(out.Edges, e)
		weight[e.A] += e.Resemblance
		weight[e.B] += e.Resemblance
	}
	slices.SortFunc(out.Edges, func(x, y FamilyEdge) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	slices.Sort(order)
	for _, id := range order {
		out.Members = append(out.Members, members[id])
		if BetterPivot(weight[id], weight[out.Pivot], members[id].TextSize, members[out.Pivot].TextSize, id, out.Pivot) {
			out.Pivot = id
		}
	}
	return out, nil
}

// Rounded returns s with its resemblance and containments rounded to three
// decimals, as reports show them.
func (s Scores) Rounded() Scores {
	s.Resemblance, s.ContainmentAB, s.ContainmentBA = round3(s.Resemblance), round3(s.ContainmentAB), round3(s.ContainmentBA)
	return s
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
