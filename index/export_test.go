package index

import "context"

// AnalyseInvolvingBy is AnalyseInvolving with its choice made: local reads
// only what concerns docs, otherwise the whole index.
func (ix *Index) AnalyseInvolvingBy(ctx context.Context, th Thresholds, docs []DocID, local bool) (*Analysis, error) {
	return ix.analyseInvolving(ctx, th, docs, local)
}
