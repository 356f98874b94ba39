package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

// blockShift groups a key's postings in blocks of the contents whose ids
// agree above the low blockShift bits: a key held by few contents takes a
// row, a common one a row per 65,536 content ids. The blocks were of 4,096
// ids: an anchor held by 1,000 of 1,000,000 contents was then some 240
// rows on as many pages, and reading a query's anchor lists took most of
// an "all versions" query. A block of a boilerplate chunk held by a tenth
// of the contents is 6,554 ids (52 KB), rewritten when a content holding
// it is added or removed.
const blockShift = 16

// Posting tables, one per kind of key.
const (
	bandTable   = "index_band_postings"
	chunkTable  = "index_chunk_postings"
	anchorTable = "index_anchor_postings"
)

var postingTables = [3]string{bandTable, chunkTable, anchorTable}

// anchorBits is how many low bits of an anchor posting hold the content's
// anchor count, above which its id sits (anchorPosting): a search weighs
// the anchors a content shares by how many it has, and reads both from
// the lists, in one round trip. A count of more is stored as
// maxAnchorCount, which changes no share: the share is taken of the
// smaller of the query's and the content's counts, and no text has that
// many anchors (one sample in index.AnchorEvery).
const anchorBits = 20

// maxAnchorCount is the largest anchor count an anchor posting holds.
const maxAnchorCount = 1<<anchorBits - 1

// anchorPosting is what an anchor's list holds for content c with n
// anchors. Posting lists stay sorted by content id.
func anchorPosting(c index.ContentID, n int) int64 {
	return int64(c)<<anchorBits | int64(min(n, maxAnchorCount))
}

// fromAnchorPosting returns the content and anchor count of an anchor
// posting.
func fromAnchorPosting(v int64) (index.ContentID, int) {
	return index.ContentID(v >> anchorBits), int(v & maxAnchorCount)
}

// postings collects (key, block, value) postings of the three kinds, each
// once: a value is a content id, or an anchorPosting.
type postings [3]struct{ keys, blks, vals []int64 }

// add adds the postings of content c with fingerprint fp and band keys
// bands.
func (p *postings) add(c index.ContentID, fp *index.Fingerprint, bands []uint64) {
	chunks := make([]uint64, len(fp.Chunks))
	for i, ch := range fp.Chunks {
		chunks[i] = ch.Hash
	}
	anchors := fp.Anchors()
	for t, keys := range [3][]uint64{bands, chunks, anchors} {
		val := int64(c)
		if t == 2 {
			val = anchorPosting(c, len(anchors))
		}
		seen := make(map[uint64]bool, len(keys))
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				p[t].keys = append(p[t].keys, int64(k))
				p[t].blks = append(p[t].blks, int64(c)>>blockShift)
				p[t].vals = append(p[t].vals, val)
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
			SELECT k, b::int4, count(*), string_agg(int8send(c), ''::bytea ORDER BY c) FROM unnest($1::int8[], $2::int8[], $3::int8[]) AS u(k, b, c)
			GROUP BY 1, 2 ORDER BY 1, 2
			ON CONFLICT (key, blk) DO UPDATE SET n = p.n + EXCLUDED.n, ids = p.ids || EXCLUDED.ids`, p[t].keys, p[t].blks, p[t].vals)
	}
}

// queueDelete queues the statements removing the postings from b, and
// the blocks they leave empty.
func (p *postings) queueDelete(b *pgx.Batch) {
	for t, table := range postingTables {
		if len(p[t].keys) == 0 {
			continue
		}
		b.Queue(`UPDATE `+table+` AS p SET (n, ids) = (SELECT count(*), coalesce(string_agg(x, ''::bytea ORDER BY i), ''::bytea)
				FROM generate_series(0, length(p.ids) / 8 - 1) AS i, substr(p.ids, i * 8 + 1, 8) AS x WHERE x <> ALL (d.cs))
			FROM (SELECT k, b::int4 AS blk, array_agg(int8send(c)) AS cs
				FROM unnest($1::int8[], $2::int8[], $3::int8[]) AS u(k, b, c) GROUP BY 1, 2 ORDER BY 1, 2) d
			WHERE p.key = d.k AND p.blk = d.blk`, p[t].keys, p[t].blks, p[t].vals)
		b.Queue(`DELETE FROM `+table+` WHERE key = ANY($1) AND n = 0`, p[t].keys)
	}
}

// errPostingList reports a stored posting list that is not a whole number
// of 8-byte values.
var errPostingList = errors.New("malformed posting list")

// packIDs is a posting list as stored: each value in 8 bytes, big-endian
// (as PostgreSQL's int8send writes them), in order. A bytea is sent as it
// is stored, where an int8[] is sent element by element: sending a
// query's anchor lists was most of its cost.
func packIDs(vals []int64) []byte {
	b := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return b
}

// unpackIDs appends the values of the stored posting list b to dst.
func unpackIDs(dst []int64, b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return dst, fmt.Errorf("%w: %d bytes", errPostingList, len(b))
	}
	for ; len(b) > 0; b = b[8:] {
		dst = append(dst, int64(binary.BigEndian.Uint64(b)))
	}
	return dst, nil
}
