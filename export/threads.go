package export

import (
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/index"
)

// threader is the part of an Engine that reads e-mail threads with their
// inclusive marks (*index.Index); an Engine without it exports no thread
// fields.
type threader interface {
	Thread(ctx context.Context, key string) (*index.Thread, error)
}

// threadMarks reads each thread once and remembers its messages' marks.
type threadMarks struct {
	th    threader
	seen  map[string]bool
	marks map[index.DocID]index.ThreadMessage
	ids   map[index.DocID]string
}

func newThreadMarks(eng Engine) *threadMarks {
	th, _ := eng.(threader)
	return &threadMarks{th: th, seen: map[string]bool{}, marks: map[index.DocID]index.ThreadMessage{}, ids: map[index.DocID]string{}}
}

// mark fills row's thread fields from rec's thread.
func (t *threadMarks) mark(ctx context.Context, rec *index.Record, row *Row) error {
	key := rec.Meta[index.MetaThreadID]
	if t.th == nil || key == "" {
		return nil
	}
	if !t.seen[key] {
		t.seen[key] = true
		thread, err := t.th.Thread(ctx, key)
		switch {
		case errors.Is(err, index.ErrNoThread):
		case err != nil:
			return fmt.Errorf("read e-mail thread %s: %w", key, err)
		default:
			for _, m := range thread.Messages {
				t.marks[m.Record.ID] = m
				t.ids[m.Record.ID] = thread.ID
			}
		}
	}
	if m, ok := t.marks[rec.ID]; ok {
		row.EmailThreadID, row.Inclusive, row.InclusiveReason = t.ids[rec.ID], m.Inclusive, m.Reason
	}
	return nil
}
