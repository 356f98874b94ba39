package pgdb

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5/pgxpool"
)

// KeyLocks are locks on names (object keys) that hold across every process
// connected to one database: PostgreSQL session advisory locks. A lock is
// held on a connection of its own, taken from a pool that serves nothing
// else, so a holder waiting for the stores' connections can never starve
// the locks (and the reverse); a holder that dies loses its connection and
// with it the lock.
type KeyLocks struct {
	pool *pgxpool.Pool
	ns   string
}

// NewKeyLocks returns locks in namespace ns (locks of one namespace
// exclude each other by name), held on pool's connections. The pool should
// have as many connections as locks may be held at once; a Lock beyond
// that waits for one.
func NewKeyLocks(pool *pgxpool.Pool, ns string) *KeyLocks {
	return &KeyLocks{pool: pool, ns: ns}
}

// Lock waits until the lock of key is free and takes it. Two names may
// share a lock (a 64-bit hash), which only serialises them.
func (k *KeyLocks) Lock(ctx context.Context, key string) (unlock func(), err error) {
	h := fnv.New64a()
	h.Write([]byte(k.ns))
	h.Write([]byte{0})
	h.Write([]byte(key))
	id := int64(h.Sum64())
	conn, err := k.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", k.ns, classify(err))
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", id); err != nil {
		// A cancelled wait may leave the lock granted just after: the
		// connection is not returned to the pool with it.
		conn.Conn().Close(context.Background())
		conn.Release()
		return nil, fmt.Errorf("lock %s: %w", k.ns, classify(err))
	}
	return func() {
		if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", id); err != nil {
			// The session is gone or broken: closing it releases whatever
			// it held.
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, nil
}
