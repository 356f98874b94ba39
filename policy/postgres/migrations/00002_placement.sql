-- +goose Up
-- The placements of holds not complete yet (policy.PendingPlacement):
-- one row per hold from its creation, in the same transaction, until
-- every near-copy of its seeds is recorded held and enforced. Only added:
-- a release that runs the previous code (a rolling upgrade) keeps
-- working, its holds merely not reported placing.
CREATE TABLE policy_placement (
	matter   text PRIMARY KEY REFERENCES policy_hold (matter),
	recorded boolean NOT NULL DEFAULT false,
	attempts integer NOT NULL DEFAULT 0,
	error    text NOT NULL DEFAULT '',
	next     bigint NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE policy_placement;
