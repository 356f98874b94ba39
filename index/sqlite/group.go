package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/simdex/simdex/index"
)

// Groups calls fn with every set of contents sharing a band key or a chunk
// held by at most maxChunkDocs contents; with of, only the sets holding
// one of of. A bulk load's view answers while it holds (bulkview.go).
func (s *Store) Groups(ctx context.Context, maxChunkDocs int, of []index.ContentID, fn func([]index.ContentID) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if v, err := s.load.postingsView(ctx); err != nil || v != nil {
		if err != nil {
			return fmt.Errorf("group contents: %w", err)
		}
		return v.groups(maxChunkDocs, of, fn)
	}
	tx, end, keys, err := s.groupingTx(ctx, of)
	if err != nil {
		return fmt.Errorf("group contents: %w", err)
	}
	defer end()
	for i, table := range []string{"band_postings", "chunk_postings"} {
		limit := int(^uint(0) >> 1)
		if table == "chunk_postings" {
			limit = maxChunkDocs
		}
		var group []index.ContentID
		var cur int64 = -1
		flush := func() error {
			if len(group) >= 2 && len(group) <= limit {
				return fn(group)
			}
			return nil
		}
		err := s.postingsByKey(ctx, tx, "SELECT h, c FROM "+table, "h", of != nil, keys[i], func(rows *sql.Rows) error {
			var h, c int64
			if err := rows.Scan(&h, &c); err != nil {
				return err
			}
			if h != cur {
				if err := flush(); err != nil {
					return err
				}
				group, cur = group[:0], h
			}
			group = append(group, index.ContentID(c))
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("group %s: %w", table, s.mapErr(err))
		}
	}
	return nil
}

// groupKeys are posting keys, sorted and distinct: band keys, chunk keys
// and anchor keys.
type groupKeys [3][]int64

// groupingTx starts the read transaction Groups and AnchorGroups read
// in, and reads there the posting keys of of, when not nil: the keys and
// their postings are then of one moment.
func (s *Store) groupingTx(ctx context.Context, of []index.ContentID) (*sql.Tx, func(), groupKeys, error) {
	var keys groupKeys
	tx, end, err := s.readTx(ctx)
	if err != nil || of == nil {
		return tx, end, keys, err
	}
	if keys, err = s.groupKeysOf(ctx, tx, of); err != nil {
		end()
		return nil, nil, keys, err
	}
	return tx, end, keys, nil
}

// groupKeysBatch is how many keys one statement reads the postings of.
const groupKeysBatch = 8192

// groupKeysOf returns the posting keys of contents.
func (s *Store) groupKeysOf(ctx context.Context, tx *sql.Tx, contents []index.ContentID) (groupKeys, error) {
	var keys groupKeys
	for batch := range slices.Chunk(contents, groupKeysBatch) {
		list, err := json.Marshal(batch)
		if err != nil {
			return keys, err
		}
		var fp index.Fingerprint
		rows, err := tx.QueryContext(ctx, "SELECT body, bands FROM contents WHERE id IN (SELECT value FROM json_each(?))", string(list))
		err = eachRow(rows, err, func(rows *sql.Rows) error {
			var body, bands []byte
			if err := rows.Scan(&body, &bands); err != nil {
				return err
			}
			if err := fp.DecodeBody(body); err != nil {
				return err
			}
			keys[0] = append(keys[0], bandKeysOf(&fp, bands)...)
			for _, c := range fp.Chunks {
				keys[1] = append(keys[1], postingKey(c.Hash))
			}
			for _, a := range fp.Anchors() {
				keys[2] = append(keys[2], postingKey(a))
			}
			return nil
		})
		if err != nil {
			return keys, fmt.Errorf("read the keys of %d contents: %w", len(batch), s.mapErr(err))
		}
	}
	for i := range keys {
		slices.Sort(keys[i])
		keys[i] = slices.Compact(keys[i])
	}
	return keys, nil
}

// postingsByKey runs query (a SELECT of a posting table, without WHERE or
// ORDER BY) in key order, every row or, when only, only the rows of keys,
// calling row for each.
func (s *Store) postingsByKey(ctx context.Context, tx *sql.Tx, query, order string, only bool, keys []int64, row func(*sql.Rows) error) error {
	if !only {
		rows, err := tx.QueryContext(ctx, query+" ORDER BY "+order)
		return eachRow(rows, err, row)
	}
	for batch := range slices.Chunk(keys, groupKeysBatch) {
		list, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, query+" WHERE h IN (SELECT value FROM json_each(?)) ORDER BY "+order, string(list))
		if err := eachRow(rows, err, row); err != nil {
			return err
		}
	}
	return nil
}

// ChunkContents counts the contents holding each chunk, from a bulk
// load's view if there is one. It is taken as it is, without asking
// whether another process has added contents since (postingsView): a
// scan's analysis asks for each of its shared chunks, and the question
// cost more than the counts. A count only decides whether a chunk is
// ubiquitous, held by more than a share of all contents, which a few
// contents added meanwhile hardly change; Groups and AnchorGroups do ask,
// and drop the view.
func (s *Store) ChunkContents(ctx context.Context, hashes []uint64) (map[uint64]int, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if v := s.load.loadView(); v != nil {
		return v.chunkContents(hashes), nil
	}
	out := make(map[uint64]int, len(hashes))
	// One read transaction for every count, on one connection.
	tx, end, err := s.readTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("count chunk contents: %w", err)
	}
	defer end()
	stmt, err := s.rs.in(ctx, tx, "SELECT count(*) FROM chunk_postings WHERE h = ?")
	if err != nil {
		return nil, fmt.Errorf("count chunk contents: %w", s.mapErr(err))
	}
	for _, h := range hashes {
		if _, ok := out[h]; ok {
			continue
		}
		var n int
		if err := stmt.QueryRowContext(ctx, postingKey(h)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count chunk contents: %w", s.mapErr(err))
		}
		out[h] = n
	}
	return out, nil
}

// AnchorGroups implements index.Grouper, from a bulk load's view while
// it holds.
func (s *Store) AnchorGroups(ctx context.Context, maxDocs int, of []index.ContentID, fn func([]index.ContentID, []int) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if v, err := s.load.postingsView(ctx); err != nil || v != nil {
		if err != nil {
			return fmt.Errorf("group anchors: %w", err)
		}
		return v.anchorGroups(maxDocs, of, fn)
	}
	// One snapshot: the postings carry each content's anchor count.
	tx, end, keys, err := s.groupingTx(ctx, of)
	if err != nil {
		return fmt.Errorf("group anchors: %w", err)
	}
	defer end()
	var (
		group   []index.ContentID
		ns      []int
		cur     int64 = -1
		skipped bool
	)
	flush := func() error {
		if len(group) >= 2 && len(group) <= maxDocs {
			return fn(group, ns)
		}
		return nil
	}
	err = s.postingsByKey(ctx, tx, "SELECT h, first, n, ids FROM anchor_blocks", "h, first", of != nil, keys[2], func(rows *sql.Rows) error {
		b, err := scanBlock(rows)
		if err != nil {
			return err
		}
		if b.h != cur {
			if err := flush(); err != nil {
				return err
			}
			group, ns, cur, skipped = group[:0], ns[:0], b.h, false
		}
		if skipped || len(group) > maxDocs {
			skipped = true // boilerplate: stop collecting this anchor
			return nil
		}
		for _, p := range b.ps {
			group = append(group, index.ContentID(p.c))
			ns = append(ns, int(p.n))
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("group anchors: %w", s.mapErr(err))
	}
	return nil
}
