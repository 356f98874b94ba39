-- +goose Up
-- Code before version 3 writes colour, which this release no longer reads.
ALTER TABLE widgets RENAME COLUMN colour TO hue;
CREATE TABLE IF NOT EXISTS schema_compat (version_table text PRIMARY KEY, oldest_reader bigint NOT NULL);
INSERT INTO schema_compat VALUES ('widgets_schema', 3)
ON CONFLICT (version_table) DO UPDATE SET oldest_reader = excluded.oldest_reader;
