package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/simdex/simdex/index"
)

// AddTemplate stores t.
func (s *Store) AddTemplate(ctx context.Context, t index.Template) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chunks := make([]byte, 0, 8*len(t.Chunks))
	for _, c := range t.Chunks {
		chunks = binary.LittleEndian.AppendUint64(chunks, c)
	}
	samples := make([]byte, 0, 4*len(t.Samples))
	for _, c := range t.Samples {
		samples = binary.LittleEndian.AppendUint32(samples, c)
	}
	at := t.At
	if at.IsZero() {
		at = s.now()
	}
	var id int64
	err := s.w.QueryRowContext(ctx, "INSERT INTO templates (name, reason, actor, at, chunks, samples) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
		t.Name, t.Reason, t.Actor, at.UnixNano(), chunks, samples).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add template %q: %w", t.Name, s.mapErr(err))
	}
	s.committed()
	return id, nil
}

// Templates returns every stored template.
func (s *Store) Templates(ctx context.Context) ([]index.Template, error) {
	var out []index.Template
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT id, name, reason, actor, at, chunks, samples FROM templates ORDER BY id")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var t index.Template
		var at int64
		var chunks, samples []byte
		if err := rows.Scan(&t.ID, &t.Name, &t.Reason, &t.Actor, &at, &chunks, &samples); err != nil {
			return err
		}
		t.At = time.Unix(0, at).UTC()
		for ; len(chunks) >= 8; chunks = chunks[8:] {
			t.Chunks = append(t.Chunks, binary.LittleEndian.Uint64(chunks))
		}
		for ; len(samples) >= 4; samples = samples[4:] {
			t.Samples = append(t.Samples, binary.LittleEndian.Uint32(samples))
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read templates: %w", s.mapErr(err))
	}
	return out, nil
}
