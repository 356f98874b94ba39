package index

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// candidateGraph is the content–group graph of a whole index (KDD'05's
// sorted file–chunk graph): the groups of contents sharing an LSH band key
// or a chunk (near groups: sharing one makes a candidate pair), and those
// sharing an anchor (anchor groups: a pair needs AnchorShare of the
// smaller one's anchors). Contents are numbered densely in id order, so a
// pair of numbers a < b is a pair of contents ids[a] < ids[b].
//
// Finding the candidate pairs content by content over this graph replaced
// a map of every candidate pair, whose insertions (a candidate pair is
// proposed by each band and chunk its contents share) and final sort were
// a third of a 50,000-file scan's analysis, all of it on one core: each
// content's pairs come out in order, and contents are shared among cores.
type candidateGraph struct {
	ids     []ContentID // number → content, ascending
	anchors []int32     // number → the content's anchor count
	near    groupRows
	anchor  groupRows
}

// groupRows holds groups of numbered contents in compressed rows.
type groupRows struct {
	members []int32 // every group's members, each group sorted, group after group
	end     []int32 // end[i] is where the group of members[i] ends
	at      []int32 // positions in members of each content, content after content
	first   []int32 // content c's positions are at[first[c]:first[c+1]]
}

// rawGroups collects groups as the store delivers them.
type rawGroups struct {
	members []ContentID
	starts  []int // group k is members[starts[k]:starts[k+1]]
}

func newRawGroups() *rawGroups { return &rawGroups{starts: []int{0}} }

func (g *rawGroups) add(ids []ContentID) {
	g.members = append(g.members, ids...)
	g.starts = append(g.starts, len(g.members))
}

// loadCandidateGraph reads every group of at most limit contents, or, when
// of is not nil, every such group holding one of of.
func (ix *Index) loadCandidateGraph(ctx context.Context, limit int, of []ContentID) (*candidateGraph, error) {
	near, anchor := newRawGroups(), newRawGroups()
	if err := ix.store.Groups(ctx, limit, of, func(ids []ContentID) error {
		near.add(ids)
		return ctx.Err()
	}); err != nil {
		return nil, fmt.Errorf("find candidate pairs: %w", err)
	}
	anchorCount := make(map[ContentID]int32)
	if err := ix.store.AnchorGroups(ctx, limit, of, func(ids []ContentID, counts []int) error {
		anchor.add(ids)
		for i, id := range ids {
			anchorCount[id] = int32(counts[i])
		}
		return ctx.Err()
	}); err != nil {
		return nil, fmt.Errorf("find candidate pairs by anchor: %w", err)
	}
	return newCandidateGraph(near, anchor, anchorCount), nil
}

func newCandidateGraph(near, anchor *rawGroups, anchorCount map[ContentID]int32) *candidateGraph {
	ids := make([]ContentID, 0, len(near.members)+len(anchor.members))
	ids = append(append(ids, near.members...), anchor.members...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	number := make(map[ContentID]int32, len(ids))
	for i, id := range ids {
		number[id] = int32(i)
	}
	g := &candidateGraph{ids: slices.Clip(ids), anchors: make([]int32, len(ids))}
	for id, n := range anchorCount {
		g.anchors[number[id]] = n
	}
	g.near = newGroupRows(near, number, len(ids))
	g.anchor = newGroupRows(anchor, number, len(ids))
	return g
}

func newGroupRows(raw *rawGroups, number map[ContentID]int32, contents int) groupRows {
	r := groupRows{
		members: make([]int32, len(raw.members)),
		end:     make([]int32, len(raw.members)),
		at:      make([]int32, len(raw.members)),
		first:   make([]int32, contents+1),
	}
	for i, id := range raw.members {
		r.members[i] = number[id]
	}
	for k := 0; k+1 < len(raw.starts); k++ {
		from, to := raw.starts[k], raw.starts[k+1]
		slices.Sort(r.members[from:to])
		for i := from; i < to; i++ {
			r.end[i] = int32(to)
			r.first[r.members[i]+1]++
		}
	}
	for c := range contents {
		r.first[c+1] += r.first[c]
	}
	fill := slices.Clone(r.first[:contents])
	for i, c := range r.members {
		r.at[fill[c]] = int32(i)
		fill[c]++
	}
	return r
}

// after calls fn with every member after content a in each of a's groups:
// the contents b > a it shares a group with, once per group.
func (r *groupRows) after(a int32, fn func(b int32)) {
	for _, i := range r.at[r.first[a]:r.first[a+1]] {
		for _, b := range r.members[i+1 : r.end[i]] {
			fn(b)
		}
	}
}

// pairs returns every candidate pair (a, b), a < b, by number, in order:
// the pairs sharing a near group, and those sharing at least two anchors
// and at least share of the anchors of the one with fewer. With want
// (indexed by number), only the pairs with a content wanted.
func (g *candidateGraph) pairs(ctx context.Context, share float64, workers int, want []bool) ([][2]int32, error) {
	const batch = 256 // contents per piece of work
	n := len(g.ids)
	out := make([][][2]int32, (n+batch-1)/batch)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				seen    = make([]int32, n) // seen[b] == a+1: b is already a's candidate
				shared  = make([]int32, n) // anchors a shares with b
				touched []int32
				cands   []int32
			)
			for {
				k := int(next.Add(1) - 1)
				if k >= len(out) || ctx.Err() != nil {
					return
				}
				var found [][2]int32
				for a := int32(k * batch); a < int32(min((k+1)*batch, n)); a++ {
					stamp := a + 1
					cands = cands[:0]
					g.near.after(a, func(b int32) {
						if seen[b] != stamp {
							seen[b] = stamp
							cands = append(cands, b)
						}
					})
					g.anchor.after(a, func(b int32) {
						if shared[b] == 0 {
							touched = append(touched, b)
						}
						shared[b]++
					})
					for _, b := range touched {
						s := shared[b]
						shared[b] = 0
						if seen[b] != stamp && s >= 2 && float64(s) >= share*float64(min(g.anchors[a], g.anchors[b])) {
							seen[b] = stamp
							cands = append(cands, b)
						}
					}
					touched = touched[:0]
					slices.Sort(cands)
					for _, b := range cands {
						if want == nil || want[a] || want[b] {
							found = append(found, [2]int32{a, b})
						}
					}
				}
				out[k] = found
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := 0
	for _, part := range out {
		total += len(part)
	}
	all := make([][2]int32, 0, total)
	for _, part := range out {
		all = append(all, part...)
	}
	return all, nil
}
