-- +goose Up
-- API tokens: the SHA-256 of each secret (auth.HashSecret), never the
-- secret. Timestamps absent from a token (expiry, revocation) are NULL.
CREATE TABLE auth_token (
	id            text PRIMARY KEY,
	hash          bytea NOT NULL CHECK (octet_length(hash) = 32),
	role          text NOT NULL,
	matters       text[] NOT NULL DEFAULT '{}',
	description   text NOT NULL DEFAULT '',
	created       timestamptz NOT NULL,
	created_by    text NOT NULL,
	expires       timestamptz,
	revoked       timestamptz,
	revoked_by    text NOT NULL DEFAULT '',
	revoke_reason text NOT NULL DEFAULT ''
);
CREATE INDEX auth_token_created ON auth_token (created, id);
