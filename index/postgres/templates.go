package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

// AddTemplate stores t and returns its id.
func (s *Store) AddTemplate(ctx context.Context, t index.Template) (int64, error) {
	if err := s.errClosed(); err != nil {
		return 0, err
	}
	at := t.At
	if at.IsZero() {
		at = s.now()
	}
	samples := make([]int64, len(t.Samples))
	for i, v := range t.Samples {
		samples[i] = int64(v)
	}
	var id int64
	err := s.pool.QueryRow(ctx, "INSERT INTO index_templates (name, reason, actor, at, chunks, samples) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
		t.Name, t.Reason, t.Actor, at.UnixNano(), int64s(t.Chunks), samples).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add template %q: %w", t.Name, err)
	}
	return id, nil
}

// Templates returns every stored template, by id.
func (s *Store) Templates(ctx context.Context) ([]index.Template, error) {
	if err := s.errClosed(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, "SELECT id, name, reason, actor, at, chunks, samples FROM index_templates ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read templates: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (index.Template, error) {
		var t index.Template
		var at int64
		var chunks, samples []int64
		if err := row.Scan(&t.ID, &t.Name, &t.Reason, &t.Actor, &at, &chunks, &samples); err != nil {
			return t, err
		}
		t.At = time.Unix(0, at).UTC()
		for _, c := range chunks {
			t.Chunks = append(t.Chunks, uint64(c))
		}
		for _, v := range samples {
			t.Samples = append(t.Samples, uint32(v))
		}
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read templates: %w", err)
	}
	return out, nil
}
