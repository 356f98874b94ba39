package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

// Remove deletes a document version (every version of key when versionID
// is empty) with its children, under key's advisory lock, and returns the
// removed ids.
func (s *Store) Remove(ctx context.Context, key, versionID string) ([]index.DocID, error) {
	var out []index.DocID
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = nil
		var roots []int64
		b := &pgx.Batch{}
		b.Queue("SELECT pg_advisory_xact_lock($1)", lockKey("key", key))
		b.Queue(`SELECT id FROM index_documents WHERE key = $1 AND parent_id IS NULL AND ($2 = '' OR version_id = $2) ORDER BY id`,
			key, versionID).Query(func(rows pgx.Rows) error {
			var err error
			roots, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(roots) == 0 {
			return nil
		}
		removed, err := removeFamilies(ctx, tx, roots)
		for _, r := range roots {
			out = append(out, removed[r]...)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("remove %q: %w", key, err)
	}
	return out, nil
}

// removeFamilies deletes the documents roots and their descendants, and
// releases their contents; it returns each root's removed ids, children
// first. Three round trips.
func removeFamilies(ctx context.Context, tx pgx.Tx, roots []int64) (map[int64][]index.DocID, error) {
	rows, err := tx.Query(ctx, `WITH RECURSIVE fam (id, root, depth) AS (
			SELECT id, id, 0 FROM index_documents WHERE id = ANY($1)
			UNION ALL
			SELECT d.id, f.root, f.depth + 1 FROM index_documents d JOIN fam f ON d.parent_id = f.id)
		DELETE FROM index_documents d USING fam WHERE d.id = fam.id
		RETURNING d.id, fam.root, fam.depth, coalesce(d.content_id, 0)`, roots)
	if err != nil {
		return nil, fmt.Errorf("delete %d documents: %w", len(roots), err)
	}
	type gone struct{ id, root, depth, content int64 }
	var all []gone
	err = scanEach(rows, func() error {
		var g gone
		err := rows.Scan(&g.id, &g.root, &g.depth, &g.content)
		all = append(all, g)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delete %d documents: %w", len(roots), err)
	}
	// Children first, as the SQLite store reports them.
	slices.SortFunc(all, func(a, b gone) int {
		if a.depth != b.depth {
			return int(b.depth - a.depth)
		}
		return int(b.id - a.id)
	})
	out := map[int64][]index.DocID{}
	refs := map[int64]int64{}
	for _, g := range all {
		out[g.root] = append(out[g.root], index.DocID(g.id))
		if g.content != 0 {
			refs[g.content]++
		}
	}
	return out, releaseContents(ctx, tx, refs)
}

// releaseContents drops refs[c] references to each content c, and deletes
// the contents left without any, with their texts and postings.
func releaseContents(ctx context.Context, tx pgx.Tx, refs map[int64]int64) error {
	if len(refs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(refs))
	for c := range refs {
		ids = append(ids, c)
	}
	slices.Sort(ids)
	ns := make([]int64, len(ids))
	for i, c := range ids {
		ns[i] = refs[c]
	}
	rows, err := tx.Query(ctx, `UPDATE index_contents c SET refs = c.refs - x.n
		FROM unnest($1::int8[], $2::int8[]) AS x(id, n) WHERE c.id = x.id
		RETURNING c.id, c.refs, c.body, c.bands`, ids, ns)
	if err != nil {
		return fmt.Errorf("release %d contents: %w", len(ids), err)
	}
	var posts postings
	var drop []int64
	err = scanEach(rows, func() error {
		var id, left int64
		var body, bands []byte
		if err := rows.Scan(&id, &left, &body, &bands); err != nil {
			return err
		}
		if left > 0 {
			return nil
		}
		var fp index.Fingerprint
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("content %d: %w", id, err)
		}
		posts.add(index.ContentID(id), &fp, bandKeysOf(&fp, bands))
		drop = append(drop, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("release %d contents: %w", len(ids), err)
	}
	if len(drop) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	posts.queueDelete(b)
	b.Queue("DELETE FROM index_contents WHERE id = ANY($1)", drop)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("delete %d contents: %w", len(drop), err)
	}
	return nil
}
