package sqlite

import (
	"context"
	"fmt"

	"github.com/simdex/simdex/index"
)

// Stats counts documents and contents. A container with no text of its
// own (an archive, a message of attachments only) is stored as "empty
// text" but is no failure when its members were stored: it is not counted
// in Failed, as the pipeline's extraction-error metric does not count it.
func (s *Store) Stats(ctx context.Context) (index.Stats, error) {
	var st index.Stats
	err := s.reads(ctx).QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM documents),
		(SELECT count(*) FROM contents),
		(SELECT count(*) FROM documents d WHERE d.error != ''
			AND NOT (d.error = ? AND EXISTS (SELECT 1 FROM documents c WHERE c.parent_id = d.id)))`, index.ErrEmpty.Error()).Scan(&st.Documents, &st.Contents, &st.Failed)
	if err != nil {
		return st, fmt.Errorf("read stats: %w", s.mapErr(err))
	}
	return st, nil
}
