-- +goose Up
-- Bodies are the JSON of the policy values; columns repeat what queries
-- filter and lock on. Times are Unix nanoseconds (0 for none), as the
-- audit chain hashes them, which a timestamptz would round.
CREATE TABLE policy_rule (
	name   text PRIMARY KEY,
	origin text NOT NULL,
	keep   boolean NOT NULL,
	body   jsonb NOT NULL
);

-- hv is the holds version of the hold's last change (creation, release).
CREATE TABLE policy_hold (
	matter   text PRIMARY KEY,
	status   text NOT NULL,
	released bigint NOT NULL DEFAULT 0,
	hv       bigint NOT NULL,
	body     jsonb NOT NULL
);

-- hv is the holds version at which a held document became a seed (0 for
-- near-copies): a replica catches up with the seeds recorded after the
-- version it has.
CREATE TABLE policy_held (
	matter  text NOT NULL REFERENCES policy_hold (matter),
	doc     bigint NOT NULL,
	object  text NOT NULL,
	version text NOT NULL,
	content bigint NOT NULL,
	seed    boolean NOT NULL,
	placed  bigint NOT NULL,
	hv      bigint NOT NULL DEFAULT 0,
	body    jsonb NOT NULL,
	PRIMARY KEY (matter, doc)
);
CREATE INDEX policy_held_object ON policy_held (object);
CREATE INDEX policy_held_seed_hv ON policy_held (hv) WHERE seed;

CREATE TABLE policy_flag (
	id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind      text NOT NULL,
	doc       bigint NOT NULL,
	rule      text NOT NULL,
	matter    text NOT NULL,
	status    text NOT NULL,
	created   bigint NOT NULL,
	updated   bigint NOT NULL,
	actor     text NOT NULL DEFAULT '',
	reason    text NOT NULL DEFAULT '',
	published boolean NOT NULL DEFAULT false,
	body      jsonb NOT NULL,
	UNIQUE (kind, doc, rule, matter)
);
CREATE INDEX policy_flag_status ON policy_flag (status, id);
CREATE INDEX policy_flag_unpublished ON policy_flag (id) WHERE NOT published;

CREATE TABLE policy_run (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	started bigint NOT NULL,
	body    jsonb NOT NULL
);

-- details is bytea, not jsonb: the chain hashes its exact bytes.
CREATE TABLE policy_audit (
	seq     bigint PRIMARY KEY,
	time    bigint NOT NULL,
	actor   text NOT NULL,
	action  text NOT NULL,
	object  text NOT NULL,
	reason  text NOT NULL,
	details bytea,
	prev    text NOT NULL,
	hash    text NOT NULL
);

-- The chain's head, one row: appenders lock it (FOR UPDATE) so that
-- replicas appending at once extend one chain.
CREATE TABLE policy_audit_head (
	id   integer PRIMARY KEY CHECK (id = 1),
	seq  bigint NOT NULL,
	hash text NOT NULL
);
INSERT INTO policy_audit_head (id, seq, hash) VALUES (1, 0, '');

CREATE TABLE policy_counter (
	name  text PRIMARY KEY,
	value bigint NOT NULL
);
INSERT INTO policy_counter (name, value) VALUES ('holds', 0);

-- One row per ingest commit, by its idempotency key, written in the
-- commit itself: after a connection lost during COMMIT, the store looks
-- the key up to learn whether it committed before trying again. Rows
-- older than a day are pruned by later commits.
CREATE TABLE policy_commit (
	key    bytea PRIMARY KEY,
	at     timestamptz NOT NULL DEFAULT now(),
	result jsonb NOT NULL
);
CREATE INDEX policy_commit_at ON policy_commit (at);

-- +goose Down
DROP TABLE policy_commit, policy_counter, policy_audit_head, policy_audit, policy_run,
	policy_flag, policy_held, policy_hold, policy_rule;
