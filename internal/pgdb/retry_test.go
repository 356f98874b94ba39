package pgdb_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/simdex/simdex/internal/pgdb"
)

func TestRetry(t *testing.T) {
	deadlock := &pgconn.PgError{Code: "40P01"}
	shutdown := &pgconn.PgError{Code: "57P01"}
	unique := &pgconn.PgError{Code: "23505"}
	for _, tc := range []struct {
		name       string
		idempotent bool
		errs       []error // returned by the successive calls; nil after
		calls      int
		fails      bool
	}{
		{"success", false, nil, 1, false},
		{"deadlock retried", false, []error{deadlock, deadlock}, 3, false},
		{"lost connection retried when idempotent", true, []error{shutdown, io.ErrUnexpectedEOF}, 3, false},
		{"lost connection not retried otherwise", false, []error{shutdown}, 1, true},
		{"unsent retried always", false, []error{unsentErr{}, unsentErr{}}, 3, false},
		{"statement error not retried", true, []error{unique}, 1, true},
		{"bounded", true, []error{deadlock, deadlock, deadlock, deadlock, deadlock, deadlock}, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := pgdb.Retry(context.Background(), tc.idempotent, func(context.Context) error {
				calls++
				if calls <= len(tc.errs) {
					return tc.errs[calls-1]
				}
				return nil
			})
			if calls != tc.calls || (err != nil) != tc.fails {
				t.Fatalf("%d calls, %v; want %d calls, failure %v", calls, err, tc.calls, tc.fails)
			}
		})
	}
}

func TestRetryStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := pgdb.Retry(ctx, false, func(context.Context) error {
		calls++
		cancel()
		return &pgconn.PgError{Code: "40001"}
	})
	if calls != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("%d calls, %v", calls, err)
	}
}

// unsentErr is an error pgx marks as raised before sending anything.
type unsentErr struct{}

func (unsentErr) Error() string     { return "connection busy" }
func (unsentErr) SafeToRetry() bool { return true }
