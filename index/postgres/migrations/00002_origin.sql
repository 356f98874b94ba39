-- The metadata an origin delivered with an object (index.Doc.Origin), in
-- a column of its own, apart from simdex's own in meta, so that an
-- uploader cannot set simdex's fields (docs/store.md). Never edit a
-- released migration: add the next one.
--
-- NULL marks a row written without it: before this migration, or during a
-- rolling upgrade by a replica still running the previous release, which
-- keeps writing the origin's metadata into meta. Such a row's origin
-- metadata is read from meta (index.Doc.OriginMeta). So the column has no
-- default: this release writes '{}' for a document without any.

-- +goose Up
ALTER TABLE index_documents ADD COLUMN origin jsonb;

-- +goose Down
ALTER TABLE index_documents DROP COLUMN origin;
