package postgres

import (
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

// blockShift groups a key's postings in blocks of the contents whose ids
// agree above the low blockShift bits: a key held by few contents takes a
// row, a common one a row per 4,096 content ids, small enough to rewrite
// when a content is added or removed.
const blockShift = 12

// blockShiftSQL is blockShift in statements.
var blockShiftSQL = strconv.Itoa(blockShift)

// Posting tables, one per kind of key.
const (
	bandTable   = "index_band_postings"
	chunkTable  = "index_chunk_postings"
	anchorTable = "index_anchor_postings"
)

var postingTables = [3]string{bandTable, chunkTable, anchorTable}

// postings collects (key, content) pairs of the three kinds, each pair
// once.
type postings [3]struct{ keys, ids []int64 }

// add adds the postings of content c with fingerprint fp and band keys
// bands.
func (p *postings) add(c index.ContentID, fp *index.Fingerprint, bands []uint64) {
	chunks := make([]uint64, len(fp.Chunks))
	for i, ch := range fp.Chunks {
		chunks[i] = ch.Hash
	}
	for t, keys := range [3][]uint64{bands, chunks, fp.Anchors()} {
		seen := make(map[uint64]bool, len(keys))
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				p[t].keys = append(p[t].keys, int64(k))
				p[t].ids = append(p[t].ids, int64(c))
			}
		}
	}
}

// queueInsert queues the statements adding the postings to b, keys in
// order so that writers lock blocks in one order.
func (p *postings) queueInsert(b *pgx.Batch) {
	for t, table := range postingTables {
		if len(p[t].keys) == 0 {
			continue
		}
		b.Queue(`INSERT INTO `+table+` AS p (key, blk, n, ids)
			SELECT k, (c >> `+blockShiftSQL+`)::int4, count(*), array_agg(c ORDER BY c) FROM unnest($1::int8[], $2::int8[]) AS u(k, c)
			GROUP BY 1, 2 ORDER BY 1, 2
			ON CONFLICT (key, blk) DO UPDATE SET n = p.n + EXCLUDED.n, ids = p.ids || EXCLUDED.ids`, p[t].keys, p[t].ids)
	}
}

// queueDelete queues the statements removing the postings from b, and
// the blocks they leave empty.
func (p *postings) queueDelete(b *pgx.Batch) {
	for t, table := range postingTables {
		if len(p[t].keys) == 0 {
			continue
		}
		b.Queue(`UPDATE `+table+` AS p SET (n, ids) = (SELECT count(*), coalesce(array_agg(x), '{}') FROM unnest(p.ids) x WHERE x <> ALL (d.cs))
			FROM (SELECT k, (c >> `+blockShiftSQL+`)::int4 AS blk, array_agg(c) AS cs
				FROM unnest($1::int8[], $2::int8[]) AS u(k, c) GROUP BY 1, 2 ORDER BY 1, 2) d
			WHERE p.key = d.k AND p.blk = d.blk`, p[t].keys, p[t].ids)
		b.Queue(`DELETE FROM `+table+` WHERE key = ANY($1) AND n = 0`, p[t].keys)
	}
}
