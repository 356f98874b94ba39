// Package lease runs the daemon's singletons, the jobs that must run on
// one replica of a fleet at a time (cron reconciliation, retention
// evaluation with the hold sweep, backfill, outbox dispatch), under a
// named lease that ends when its holder dies.
//
// Postgres holds a lease as a PostgreSQL session advisory lock
// (pg_advisory_lock(namespace, hashtext(name))) on a connection taken out
// of the shared pool (Acquire, then Hijack, so the pool never hands it to
// anyone else). The lock is the session's: it ends when the holder closes
// the connection, when its process dies (the kernel closes the socket) or
// when the server gives up on a partitioned holder (the session's TCP
// keepalives, set short on the lease connection). While it holds a lease,
// the holder pings its session every PingInterval and cancels the work's
// context, with ErrLost as the cause, the moment a ping fails. No clock
// takes part: a holder is whoever PostgreSQL says holds the lock, so a
// replica whose clock is wrong still holds or is refused correctly.
//
// Local is the one-process implementation for the embedded (SQLite)
// driver: a lease is a mutex of the process, always granted to its single
// replica.
//
// Three ways to run under a lease, the same on both:
//
//   - Run runs a job unless another holder has the lease (periodic jobs
//     that may skip a turn).
//   - Hold waits for the lease, runs a continuous job while it holds it,
//     and waits again when it loses it (outbox dispatch, backfill).
//   - RunSlot runs one scheduled slot of a periodic job exactly once
//     across the fleet: it waits for the lease, skips a slot already
//     completed, and records the slot complete on the lease's own session,
//     so a holder that dies mid-run leaves the slot open and the replica
//     that takes the lease over runs it. Every drives RunSlot on a cron
//     schedule, reading the time from the lease (PostgreSQL's clock for
//     Postgres), so every replica computes the same slots.
//
// Consumers declare the small interface they need (policy.Lease,
// notifier.Lease); *Postgres and *Local satisfy all of them.
package lease
