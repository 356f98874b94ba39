package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/simdex/simdex/index"
)

// statements keeps the statements a pool runs again and again prepared,
// one per query string. The driver parses a query string anew at every
// call, and parsing costs about as much as running one of the store's
// small lookups: it was a quarter of an "all versions" query's CPU at
// 10,000 documents. database/sql prepares a pooled *sql.Stmt on each
// connection of the pool the first time it runs there and keeps it;
// Tx.StmtContext reuses the transaction's connection's.
//
// Preparing a pooled statement takes a connection of the pool. A caller
// in a transaction already holds one (the writer's pool has no other), so
// in prepares a statement it does not know yet in the transaction alone,
// and has it prepared in the pool once a connection is free.
//
// Only constant query strings belong here: the cache never forgets one.
type statements struct {
	db *sql.DB

	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool // being prepared in the background
	closed  bool
	wg      sync.WaitGroup
}

func newStatements(db *sql.DB) *statements {
	return &statements{db: db, m: make(map[string]*sql.Stmt), pending: make(map[string]bool)}
}

// get returns the pool's statement for query, preparing it on first use.
// The caller must hold none of the pool's connections: preparing may wait
// for one.
func (p *statements) get(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	st, ok := p.m[query]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("prepare statement: %w", index.ErrClosed)
	}
	if ok {
		return st, nil
	}
	// Not under p.mu: others find their statements while this one waits
	// for a connection.
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		st.Close()
		return nil, fmt.Errorf("prepare statement: %w", index.ErrClosed)
	}
	if old, ok := p.m[query]; ok {
		st.Close() // prepared by another caller meanwhile
		return old, nil
	}
	p.m[query] = st
	return st, nil
}

// in returns query's statement bound to tx, which closes it when it ends.
func (p *statements) in(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	st, ok := p.m[query]
	start := !ok && !p.closed && !p.pending[query]
	if start {
		p.pending[query] = true
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	if start {
		go func() {
			defer p.wg.Done()
			_, _ = p.get(context.Background(), query) // on failure, the next in tries again
			p.mu.Lock()
			delete(p.pending, query)
			p.mu.Unlock()
		}()
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	return st, nil
}

// close closes every statement; get fails from then on. Statements being
// prepared in the background are closed as they complete: call wait once
// the pool is closed.
func (p *statements) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for q, st := range p.m {
		errs = append(errs, st.Close())
		delete(p.m, q)
	}
	return errors.Join(errs...)
}

// wait waits for the background preparations to end.
func (p *statements) wait() { p.wg.Wait() }

// txStmts binds the writer's prepared statements to a transaction, each
// once, on first use: parsing a statement costs about as much as running
// it, and put runs the same few for every document (a fifth of its CPU in
// a bulk load went to parsing them again).
type txStmts struct {
	tx      *sql.Tx
	pool    *statements
	m       map[string]*sql.Stmt
	anchors *anchorDelta // the anchor postings added, if they are tracked
	// mem, when set, tells which anchor keys have no block at the
	// transaction's start, so that their last block is not looked for;
	// anchorKeys are the keys whose blocks the transaction wrote since.
	mem        *memAnchors
	anchorKeys map[int64]struct{}
	tw         *textWriter // the texts stored, once one is
	bands      bandShares  // the band keys of the contents stored
}

// prepare returns the statement of query bound to the transaction (which
// closes it when it ends); without a pool, it is prepared in the
// transaction alone.
func (t *txStmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.m[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	var err error
	if t.pool != nil {
		st, err = t.pool.in(ctx, t.tx, query)
	} else if st, err = t.tx.PrepareContext(ctx, query); err != nil {
		err = fmt.Errorf("prepare statement: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if t.m == nil {
		t.m = make(map[string]*sql.Stmt)
	}
	t.m[query] = st
	return st, nil
}

// exec runs the constant query, prepared once for the transaction's
// connection.
func (t *txStmts) exec(ctx context.Context, query string, args ...any) error {
	st, err := t.prepare(ctx, query)
	if err == nil {
		_, err = st.ExecContext(ctx, args...)
	}
	return err
}

// errRow is the row of a statement that could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// queryRow runs the constant query, prepared once for the transaction's
// connection, for one row; the row's Scan reports a failed preparation.
func (t *txStmts) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	st, err := t.prepare(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs the constant query, prepared once for the transaction's
// connection.
func (t *txStmts) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// stmtIDs runs the constant query, prepared once for the transaction's
// connection, and returns the ids it selects.
func stmtIDs(ctx context.Context, stmts *txStmts, query string, args ...any) ([]int64, error) {
	rows, err := stmts.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}
