package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/simdex/simdex/index"
)

// Groups calls fn with every set of two or more contents sharing a band
// key, or a chunk held by at most maxChunkDocs contents; with of, only the
// sets holding one of of. Each table is read in one statement, so each
// sees one moment.
func (s *Store) Groups(ctx context.Context, maxChunkDocs int, of []index.ContentID, fn func([]index.ContentID) error) error {
	if err := s.errClosed(); err != nil {
		return err
	}
	keys, err := s.keysOf(ctx, of)
	if err != nil {
		return fmt.Errorf("group contents: %w", err)
	}
	for t, table := range postingTables[:2] {
		limit := math.MaxInt
		if table == chunkTable {
			limit = maxChunkDocs
		}
		err := s.eachKey(ctx, table, of != nil, keys[t], false, func(ids []index.ContentID, _ []int) error {
			if len(ids) >= 2 && len(ids) <= limit {
				return fn(ids)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("group %s: %w", table, err)
		}
	}
	return nil
}

// AnchorGroups calls fn with every set of two or more contents sharing an
// anchor held by at most maxDocs contents, with each content's anchor
// count; with of, only the sets holding one of of.
func (s *Store) AnchorGroups(ctx context.Context, maxDocs int, of []index.ContentID, fn func([]index.ContentID, []int) error) error {
	if err := s.errClosed(); err != nil {
		return err
	}
	keys, err := s.keysOf(ctx, of)
	if err != nil {
		return fmt.Errorf("group anchors: %w", err)
	}
	err = s.eachKey(ctx, anchorTable, of != nil, keys[2], true, func(ids []index.ContentID, anchors []int) error {
		if len(ids) >= 2 && len(ids) <= maxDocs {
			return fn(ids, anchors)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("group anchors: %w", err)
	}
	return nil
}

// keysOf returns the band, chunk and anchor keys of contents, or nothing
// when contents is nil.
func (s *Store) keysOf(ctx context.Context, contents []index.ContentID) ([3][]int64, error) {
	var keys [3][]int64
	if contents == nil {
		return keys, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT body, bands FROM index_contents WHERE id = ANY($1)", int64s(contents))
	if err != nil {
		return keys, fmt.Errorf("read the keys of %d contents: %w", len(contents), err)
	}
	var fp index.Fingerprint
	err = scanEach(rows, func() error {
		var body, bands []byte
		if err := rows.Scan(&body, &bands); err != nil {
			return err
		}
		if err := fp.DecodeBody(body); err != nil {
			return err
		}
		keys[0] = append(keys[0], int64s(bandKeysOf(&fp, bands))...)
		for _, c := range fp.Chunks {
			keys[1] = append(keys[1], int64(c.Hash))
		}
		keys[2] = append(keys[2], int64s(fp.Anchors())...)
		return nil
	})
	if err != nil {
		return keys, fmt.Errorf("read the keys of %d contents: %w", len(contents), err)
	}
	return keys, nil
}

// eachKey calls fn with the contents of each key of table, in key order:
// of every key, or of keys only when only is set. With anchors, fn also
// gets each content's anchor count.
func (s *Store) eachKey(ctx context.Context, table string, only bool, keys []int64, anchors bool, fn func([]index.ContentID, []int) error) error {
	q := "SELECT p.key, p.ids FROM " + table + " p"
	var args []any
	if only {
		q = "SELECT p.key, p.ids FROM " + keyed(table)
		args = append(args, slices.Compact(slices.Sorted(slices.Values(keys))))
	}
	rows, err := s.pool.Query(ctx, q+" ORDER BY p.key, p.blk", args...)
	if err != nil {
		return err
	}
	var (
		cur   int64
		ids   []index.ContentID
		ns    []int
		first = true
		list  []byte
		block []int64
	)
	err = scanEach(rows, func() error {
		var key int64
		if err := rows.Scan(&key, &list); err != nil {
			return err
		}
		var err error
		if block, err = unpackIDs(block[:0], list); err != nil {
			return err
		}
		if !first && key != cur {
			if err := fn(ids, ns); err != nil {
				return err
			}
			ids, ns = ids[:0], ns[:0]
		}
		first, cur = false, key
		for _, v := range block {
			if !anchors {
				ids = append(ids, index.ContentID(v))
				continue
			}
			c, n := fromAnchorPosting(v)
			ids, ns = append(ids, c), append(ns, n)
		}
		return nil
	})
	if err != nil || first {
		return err
	}
	return fn(ids, ns)
}
