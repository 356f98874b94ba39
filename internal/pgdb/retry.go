package pgdb

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Retries of Retry: at most maxTries calls, the first pause firstBackoff,
// doubled after each.
const (
	maxTries     = 5
	firstBackoff = 50 * time.Millisecond
)

// Retry calls f, which must run one whole transaction, again when
// PostgreSQL aborted it to break a deadlock or a serialization conflict
// (Aborted), when pgx knows it sent nothing to the server, or, if
// idempotent, when its connection was lost or refused (ConnectionLost,
// such as during a server restart). A call whose commit may have happened
// before its connection was lost must be repeated only if repeating it
// changes nothing, or after checking its outcome: that is what idempotent
// declares. Retry makes at most five calls, pausing 50 ms after the first
// and twice as long after each next, stops when ctx is done, and returns
// f's last error.
func Retry(ctx context.Context, idempotent bool, f func(ctx context.Context) error) error {
	wait := firstBackoff
	for try := 1; ; try++ {
		err := f(ctx)
		if err == nil || try == maxTries {
			return err
		}
		if ctx.Err() != nil {
			if errors.Is(err, ctx.Err()) {
				return err
			}
			return errors.Join(err, ctx.Err())
		}
		if !Aborted(err) && !unsent(err) && !(idempotent && ConnectionLost(err)) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// Aborted reports a transaction PostgreSQL rolled back to break a deadlock
// (SQLSTATE 40P01) or a serialization conflict (40001): it can be run
// again as it was.
func Aborted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// unsent reports an error that happened before anything was sent to the
// server: pgx says so, or no connection could be made.
func unsent(err error) bool {
	var connErr *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &connErr)
}

// ConnectionLost reports an error of the connection rather than of the
// statement: the server went away (SQLSTATE class 57P, operator
// intervention; class 08, connection exception) or could not be reached.
// Whether the statement committed is then unknown.
func ConnectionLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &netErr) || errors.As(err, &connErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
