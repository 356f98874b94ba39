package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"maps"
)

// bulkSeen is what a bulk load (Loader) has seen stored:
// hashes of the idempotency keys and keys of the documents the index held
// at open and of those the load has written since, and the contents by
// text hash. As long as no other process has written (the documents' and
// contents' AUTOINCREMENT sequences are where this load's last commit
// left them), the index holds nothing it has not seen (a removal only
// leaves it having seen more), and a put need not ask the tables whether
// an idempotency key, a key or a text is stored when bulkSeen has not
// seen it: asked for each of 50,000 new files, the tables cost the single
// writer 1.6 CPU-s of a scan's indexing.
//
// What it has seen is still asked of the tables (a hash shared by two
// keys is then told apart), and a content it knows is counted by id and
// text hash together.
type bulkSeen struct {
	seed         maphash.Seed
	idems, keys  map[uint64]struct{}
	texts        map[uint64]int64    // content id by its text hash's first 8 bytes
	addIdems     map[uint64]struct{} // by the transaction under way
	addKeys      map[uint64]struct{}
	addTexts     map[uint64]int64
	seq, nextSeq [2]int64 // the documents' and contents' sequences: at the last commit, and by the transaction under way
	off          bool     // the index changed otherwise: ask the tables
}

// seqsQuery reads the documents' and contents' AUTOINCREMENT sequences.
const seqsQuery = `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'documents'), 0),
	coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'contents'), 0)`

// newBulkSeen returns a bulkSeen for a load into the index q holds, having
// seen what it holds: nothing, or what a bulk load that did not settle
// left (the load carries it on), or documents with no text.
func newBulkSeen(ctx context.Context, q querier) (*bulkSeen, error) {
	b := &bulkSeen{seed: maphash.MakeSeed(), idems: map[uint64]struct{}{}, keys: map[uint64]struct{}{},
		texts: map[uint64]int64{}, addIdems: map[uint64]struct{}{}, addKeys: map[uint64]struct{}{}, addTexts: map[uint64]int64{}}
	if err := q.QueryRowContext(ctx, seqsQuery).Scan(&b.seq[0], &b.seq[1]); err != nil {
		return nil, fmt.Errorf("read the sequences: %w", err)
	}
	if err := b.read(ctx, q); err != nil {
		return nil, fmt.Errorf("read what the index holds: %w", err)
	}
	return b, nil
}

// read adds the documents and contents q holds to what b has seen.
func (b *bulkSeen) read(ctx context.Context, q querier) error {
	var idem, key string
	rows, err := q.QueryContext(ctx, "SELECT idem, key FROM document_view")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		if err := rows.Scan(&idem, &key); err != nil {
			return err
		}
		b.idems[maphash.String(b.seed, idem)] = struct{}{}
		b.keys[maphash.String(b.seed, key)] = struct{}{}
		return nil
	})
	if err != nil {
		return err
	}
	var id int64
	var sha []byte
	rows, err = q.QueryContext(ctx, "SELECT id, text_sha256 FROM contents")
	return eachRow(rows, err, func(rows *sql.Rows) error {
		if err := rows.Scan(&id, &sha); err != nil {
			return err
		}
		if len(sha) >= 8 {
			b.texts[binary.LittleEndian.Uint64(sha)] = id
		}
		return nil
	})
}

// begin returns b for the put in tx, or nil when the tables must be asked:
// another process has written since b's last commit.
func (b *bulkSeen) begin(ctx context.Context, tx *sql.Tx) (*bulkSeen, error) {
	if b == nil || b.off {
		return nil, nil
	}
	var seq [2]int64
	if err := tx.QueryRowContext(ctx, seqsQuery).Scan(&seq[0], &seq[1]); err != nil {
		return nil, fmt.Errorf("read the sequences: %w", err)
	}
	if seq != b.seq {
		b.off = true
		return nil, nil
	}
	b.nextSeq = b.seq
	return b, nil
}

// newIdem reports whether no document with idempotency key idem can be
// stored.
func (b *bulkSeen) newIdem(idem string) bool { return b.unseen(b.idems, b.addIdems, idem) }

// newKey reports whether no document with key can be stored.
func (b *bulkSeen) newKey(key string) bool { return b.unseen(b.keys, b.addKeys, key) }

func (b *bulkSeen) unseen(committed, added map[uint64]struct{}, s string) bool {
	h := maphash.String(b.seed, s)
	_, in := committed[h]
	_, inTx := added[h]
	return !in && !inTx
}

// text returns the content that may hold the text of hash sha, and
// whether the text may be stored at all.
func (b *bulkSeen) text(sha []byte) (id int64, maybe bool) {
	k := binary.LittleEndian.Uint64(sha)
	if id, ok := b.addTexts[k]; ok {
		return id, true
	}
	id, ok := b.texts[k]
	return id, ok
}

// stored records document doc, which the transaction inserted, and its
// content when it created it (0 otherwise). AUTOINCREMENT sequences are
// the largest ids inserted: the transaction's are where it leaves them.
func (b *bulkSeen) stored(doc int64, idem, key string, sha []byte, content int64) {
	b.addIdems[maphash.String(b.seed, idem)] = struct{}{}
	b.addKeys[maphash.String(b.seed, key)] = struct{}{}
	b.nextSeq[0] = max(b.nextSeq[0], doc)
	if content != 0 {
		b.addTexts[binary.LittleEndian.Uint64(sha)] = content
		b.nextSeq[1] = max(b.nextSeq[1], content)
	}
}

// end keeps what the transaction added, and the sequences it left, when
// it committed, and forgets them otherwise.
func (b *bulkSeen) end(committed bool) {
	if b == nil {
		return
	}
	if committed && !b.off {
		maps.Copy(b.idems, b.addIdems)
		maps.Copy(b.keys, b.addKeys)
		maps.Copy(b.texts, b.addTexts)
		b.seq = b.nextSeq
	}
	clear(b.addIdems)
	clear(b.addKeys)
	clear(b.addTexts)
}
