package sqlite

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/index"
)

// metaWhere selects documents by one metadata value. The paths are
// literal so that the expression indexes of migration 9 serve them.
var metaWhere = map[string]string{
	index.MetaThreadID:  "WHERE json_extract(d.meta, '$.thread_id') = ? ORDER BY d.id",
	index.MetaMessageID: "WHERE json_extract(d.meta, '$.message_id') = ? ORDER BY d.id",
}

// ByMeta returns the documents whose metadata key, index.MetaThreadID or
// index.MetaMessageID, equals value, by id.
func (s *Store) ByMeta(ctx context.Context, key, value string) ([]*index.Record, error) {
	where, ok := metaWhere[key]
	if !ok {
		return nil, fmt.Errorf("documents by metadata %q: not an indexed key", key)
	}
	return s.records(ctx, "documents with "+key, where, value)
}

var _ index.MetaFinder = (*Store)(nil)
