-- +goose Up
-- The person a token is for. Both default to '': tokens created before
-- keep them empty (auth.Token.DisplayName names them by their
-- description), and during a rolling upgrade the previous release, which
-- inserts without these columns, still writes valid rows.
ALTER TABLE auth_token ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE auth_token ADD COLUMN email text NOT NULL DEFAULT '';
