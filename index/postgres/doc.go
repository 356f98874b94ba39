// Package postgres is the index store that a fleet of simdex replicas
// shares: documents, deduplicated contents with their fingerprints, the
// band, chunk and anchor postings that find candidates, templates and kept
// texts, in one PostgreSQL database, through pgx.
//
// Several replicas write at once. The database enforces what must be
// unique: one document per idempotency key, one content per normalised
// text (INSERT … ON CONFLICT); a Put takes transaction-scoped advisory
// locks on the idempotency keys and document keys it writes, so that two
// replicas racing on one key commit one after the other, and the second
// sees the first. A transaction the server aborts as a serialization
// failure or deadlock is run again, a bounded number of times.
//
// Postings are stored in blocks per key (see the migration and
// docs/scaling.md), hash-partitioned by key. Fingerprints use the index's
// own encoding (index.Fingerprint.AppendBody), as the SQLite store does.
// The store implements index.Follower: other replicas learn the contents
// and templates committed since they last looked in one query.
//
// Importers alias the package indexpg.
package postgres
