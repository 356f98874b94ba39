package sqlite

// migrations bring the schema from version i to i+1. Never edit a released
// migration: append a new one.
var migrations = []string{
	// 1: documents, contents, postings, templates.
	`
CREATE TABLE documents (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	key         TEXT NOT NULL,
	version_id  TEXT NOT NULL DEFAULT '',
	idem        TEXT NOT NULL UNIQUE,
	name        TEXT NOT NULL DEFAULT '',
	source      TEXT NOT NULL DEFAULT '',
	parent_id   INTEGER REFERENCES documents(id) ON DELETE CASCADE,
	path        TEXT NOT NULL DEFAULT '[]',
	media_type  TEXT NOT NULL DEFAULT '',
	meta        TEXT NOT NULL DEFAULT '{}',
	mod_time    INTEGER NOT NULL DEFAULT 0,
	indexed_at  INTEGER NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	keep_versions INTEGER NOT NULL DEFAULT 0,
	raw_sha256  BLOB,
	raw_size    INTEGER NOT NULL DEFAULT 0,
	content_id  INTEGER REFERENCES contents(id)
);
CREATE INDEX documents_key ON documents(key, version_id);
CREATE INDEX documents_content ON documents(content_id) WHERE content_id IS NOT NULL;
CREATE INDEX documents_parent ON documents(parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE contents (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	text_sha256 BLOB NOT NULL UNIQUE,
	text_size   INTEGER NOT NULL,
	simhash     INTEGER NOT NULL,
	body        BLOB NOT NULL,
	bands       BLOB NOT NULL,
	refs        INTEGER NOT NULL
);

CREATE TABLE chunk_postings (h INTEGER NOT NULL, c INTEGER NOT NULL, PRIMARY KEY (h, c)) WITHOUT ROWID;
CREATE TABLE band_postings  (h INTEGER NOT NULL, c INTEGER NOT NULL, PRIMARY KEY (h, c)) WITHOUT ROWID;

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE templates (
	id      INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	reason  TEXT NOT NULL,
	actor   TEXT NOT NULL,
	at      INTEGER NOT NULL,
	chunks  BLOB NOT NULL,
	samples BLOB NOT NULL
);
`,
	// 2: anchor postings (one sample in index.AnchorEvery) find contained
	// documents; contents record their anchor count for the share rule.
	// Existing contents are posted by backfillAnchors.
	`
CREATE TABLE sample_postings (h INTEGER NOT NULL, c INTEGER NOT NULL, PRIMARY KEY (h, c)) WITHOUT ROWID;
ALTER TABLE contents ADD COLUMN anchors INTEGER NOT NULL DEFAULT 0;
`,
	// 3: extracted texts, compressed, one per content, for reviewers'
	// diffs (index.Options.KeepText); documents found by name.
	`
CREATE TABLE texts (
	content_id INTEGER PRIMARY KEY REFERENCES contents(id) ON DELETE CASCADE,
	codec      TEXT NOT NULL,
	data       BLOB NOT NULL
);
`,
	// 4: anchor postings in blocks of up to anchorBlockIDs contents
	// (anchors.go); blockAnchors moves the postings of sample_postings.
	// SimHashes read at start from a covering index, not from the wide
	// contents rows (seconds of reading at 1,000,000 documents).
	`
CREATE INDEX contents_simhash ON contents(simhash);
CREATE TABLE anchor_blocks (
	h     INTEGER NOT NULL,
	first INTEGER NOT NULL,
	n     INTEGER NOT NULL,
	ids   BLOB NOT NULL,
	PRIMARY KEY (h, first)
) WITHOUT ROWID;
`,
	// 5: a count of the transactions that changed anchor postings, by
	// which in-memory anchor lists tell that another process wrote
	// (memanchors.go). A count already there (a store whose version was
	// set back by hand) is kept: starting it over could make lists loaded
	// at a higher count look current.
	`
INSERT OR IGNORE INTO meta(key, value) VALUES ('anchors_gen', '0');
`,
	// 6: for each content holding a band key another content holds too,
	// the mask of those bands and the contents it shares them with
	// (bandshares.go), so that a query of a stored text need not look up
	// the keys only it holds; backfillBandShares fills it.
	`
CREATE TABLE band_shares (
	c        INTEGER PRIMARY KEY REFERENCES contents(id) ON DELETE CASCADE,
	mask     INTEGER NOT NULL,
	partners BLOB
);
`,
	// 7: the contents a bulk load into an empty index has stored without
	// their postings (Loader), posted in key order when it
	// settles (postings.go); a crash leaves them for the next open. (IF
	// NOT EXISTS: a store whose version was set back by hand has it.)
	`
CREATE TABLE IF NOT EXISTS pending_postings (
	content_id INTEGER PRIMARY KEY REFERENCES contents(id) ON DELETE CASCADE
);
`,
	// 8: texts kept as runs of content-defined pieces, each piece stored
	// once across all texts (text.go): near-copies share their bytes.
	// text_pieces.block is neither a foreign key nor indexed: checking
	// the key read the block's page, out of cache, for every piece
	// inserted, and the index was written at random; a block lists the
	// pieces it holds instead (text_blocks.pieces), which releaseText
	// deletes with it.
	// Texts stored before keep their codec, zstd, and are read as before.
	// (IF NOT EXISTS: a store whose version was set back by hand has them.)
	`
CREATE TABLE IF NOT EXISTS text_blocks (
	id     INTEGER PRIMARY KEY,
	refs   INTEGER NOT NULL,
	data   BLOB NOT NULL,
	pieces BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS text_pieces (
	h     INTEGER PRIMARY KEY,
	block INTEGER NOT NULL,
	off   INTEGER NOT NULL,
	len   INTEGER NOT NULL
);
`,
	// 9: e-mail messages found by thread key and by Message-ID
	// (threads.go, index.Index.Thread).
	`
CREATE INDEX IF NOT EXISTS documents_thread ON documents(json_extract(meta, '$.thread_id'))
	WHERE json_extract(meta, '$.thread_id') IS NOT NULL;
CREATE INDEX IF NOT EXISTS documents_message_id ON documents(json_extract(meta, '$.message_id'))
	WHERE json_extract(meta, '$.message_id') IS NOT NULL;
`,
	// 10: the raw zstd dictionary that text blocks written once the index
	// holds enough text refer to (textdict.go); blocks name it in their
	// frame header, so older blocks are read as they are.
	`
CREATE TABLE IF NOT EXISTS text_dicts (
	id   INTEGER PRIMARY KEY,
	data BLOB NOT NULL
);
`,
	// 11: document rows that store once what documents repeat and only
	// what cannot be derived (docrows.go): key prefixes in doc_dirs, keys
	// and idempotency keys found by indexed hashes; document_view decodes
	// them. compactDocuments makes the table (docTable) and moves the
	// rows, ids and sequence kept; a store whose version was set back by
	// hand has it already.
	`
CREATE TABLE IF NOT EXISTS doc_dirs (
	id     INTEGER PRIMARY KEY,
	prefix TEXT NOT NULL UNIQUE
);
`,
	// 12: contents.bands may hold one byte, the number of bands, for a
	// content whose band keys are those of its MinHash slots (bands.go).
	// Nothing changes in the tables; the version keeps older code, which
	// would read no band keys from such a row, from opening the index.
	`SELECT 1;`,
	// 13: the metadata an origin delivered with an object (index.Doc.Origin)
	// in a column of its own, apart from simdex's own in meta, so that an
	// uploader cannot set simdex's fields; addOrigin adds it (a store whose
	// version was set back by hand has it already).
	`SELECT 1;`,
}
