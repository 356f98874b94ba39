package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Text blocks hold the new pieces of one text, a few KB, which zstd
// compresses poorly alone: it has no history to find repeats in. Once an
// index has dictBytes of text, those bytes become its dictionary (a raw
// zstd dictionary, text_dicts), and every block compressed later refers to
// it; on the 50,000-file corpus the blocks take 0.37 of their text instead
// of 0.48 (docs/BENCHMARKS.md). A frame names its dictionary in its header,
// so blocks written before it (and indexes older than schema 10) are read
// as they are. A dictionary's id is taken from its bytes' SHA-256, so the
// ids a process has cached stay true when a transaction that made one rolls
// back and another makes another.
const dictBytes = 112 << 10

// dictQuerier runs a query of one row: a transaction's statements or a
// *sql.Tx.
type dictQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// dictCodecs caches, by dictionary id, the encoder and the decoder of each
// dictionary this process has read or made.
var dictCodecs sync.Map // uint32 → *dictCodec

type dictCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// dictID returns the id of the dictionary data: never 0, which a frame
// without a dictionary carries.
func dictID(data []byte) uint32 {
	sum := sha256.Sum256(data)
	return binary.LittleEndian.Uint32(sum[:])&0x7fffffff | 1<<15
}

// codecFor returns the cached codec of dictionary id with bytes data,
// making it on first use.
func codecFor(id uint32, data []byte) (*dictCodec, error) {
	if c, ok := dictCodecs.Load(id); ok {
		return c.(*dictCodec), nil
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDictRaw(id, data))
	if err != nil {
		return nil, fmt.Errorf("text dictionary %d: %w", id, err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxText), zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderDictRaw(id, data))
	if err != nil {
		return nil, fmt.Errorf("text dictionary %d: %w", id, err)
	}
	c, _ := dictCodecs.LoadOrStore(id, &dictCodec{enc: enc, dec: dec})
	return c.(*dictCodec), nil
}

// inflateBlock decompresses a text block, reading its dictionary from q
// the first time this process meets it.
func inflateBlock(ctx context.Context, q dictQuerier, z []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(z); err != nil {
		return nil, err
	}
	if h.DictionaryID == 0 {
		return textDecoder.DecodeAll(z, nil)
	}
	c, ok := dictCodecs.Load(h.DictionaryID)
	if !ok {
		var data []byte
		err := q.QueryRowContext(ctx, "SELECT data FROM text_dicts WHERE id = ?", int64(h.DictionaryID)).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: text dictionary %d missing", ErrInconsistent, h.DictionaryID)
		}
		if err != nil {
			return nil, fmt.Errorf("read text dictionary %d: %w", h.DictionaryID, err)
		}
		if dictID(data) != h.DictionaryID {
			return nil, fmt.Errorf("%w: text dictionary %d holds other bytes", ErrInconsistent, h.DictionaryID)
		}
		if c, err = codecFor(h.DictionaryID, data); err != nil {
			return nil, err
		}
	}
	return c.(*dictCodec).dec.DecodeAll(z, nil)
}

// deflateBlock compresses the new bytes of a text block with the index's
// dictionary. Until the index has one, it gathers the text stored so far
// and makes the dictionary from it once there is dictBytes of it.
func (w *textWriter) deflateBlock(ctx context.Context, stmts *txStmts, data []byte) ([]byte, error) {
	if !w.dictRead {
		if err := w.readDict(ctx, stmts); err != nil {
			return nil, err
		}
	}
	if w.dict == nil {
		w.sample = append(w.sample, data...)
		if len(w.sample) >= dictBytes {
			if err := w.makeDict(ctx, stmts, w.sample[:dictBytes]); err != nil {
				return nil, err
			}
		}
	}
	if w.dict == nil {
		return textEncoder.EncodeAll(data, nil), nil
	}
	return w.dict.enc.EncodeAll(data, nil), nil
}

// readDict reads the index's dictionary or, if it has none, up to
// dictBytes of the text its blocks hold, once per transaction.
func (w *textWriter) readDict(ctx context.Context, stmts *txStmts) error {
	w.dictRead = true
	var id int64
	err := stmts.queryRow(ctx, "SELECT id FROM text_dicts ORDER BY id LIMIT 1").Scan(&id)
	if err == nil {
		if c, ok := dictCodecs.Load(uint32(id)); ok { // its 112 KiB not read again
			w.dict = c.(*dictCodec)
			return nil
		}
		var data []byte
		if err := stmts.queryRow(ctx, "SELECT data FROM text_dicts WHERE id = ?", id).Scan(&data); err != nil {
			return fmt.Errorf("read text dictionary: %w", err)
		}
		if dictID(data) != uint32(id) {
			return fmt.Errorf("%w: text dictionary %d holds other bytes", ErrInconsistent, id)
		}
		w.dict, err = codecFor(uint32(id), data)
		return err
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read text dictionary: %w", err)
	}
	for last := int64(0); len(w.sample) < dictBytes; {
		var z []byte
		err := stmts.queryRow(ctx, "SELECT id, data FROM text_blocks WHERE id > ? ORDER BY id LIMIT 1", last).Scan(&last, &z)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read text blocks for a dictionary: %w", err)
		}
		text, err := inflateBlock(ctx, stmts.tx, z)
		if err != nil {
			return fmt.Errorf("decompress text block %d: %w", last, err)
		}
		w.sample = append(w.sample, text...)
	}
	return nil
}

// makeDict stores data as the index's dictionary.
func (w *textWriter) makeDict(ctx context.Context, stmts *txStmts, data []byte) error {
	id := dictID(data)
	if err := stmts.exec(ctx, "INSERT INTO text_dicts (id, data) VALUES (?, ?)", int64(id), data); err != nil {
		return fmt.Errorf("store text dictionary: %w", err)
	}
	c, err := codecFor(id, data)
	if err != nil {
		return err
	}
	w.dict, w.sample = c, nil
	return nil
}
