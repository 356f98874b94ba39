// Package sqlite is simdex's embedded index store: one SQLite database in
// WAL mode (modernc.org/sqlite, pure Go) holding documents, deduplicated
// contents with their fingerprints, and the chunk and LSH band postings used
// to find candidates.
//
// Every Put is one transaction, so a document and its children are fully
// indexed or not at all, across crashes. Writes go through a single
// connection; reads use a pool that sees committed data only. The schema is
// versioned and migrated forward on Open; a database written by a newer
// simdex is refused. Open returns the live Store; OpenLoader a Loader, a
// bulk load that posts its contents once, in key order, when it settles.
// See docs/store.md for the layout and why SQLite.
package sqlite
