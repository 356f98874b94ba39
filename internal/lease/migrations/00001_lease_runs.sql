-- +goose Up
-- One row per completed slot of a periodic job run under a lease: the
-- replica that takes a lease over runs a slot that has no row, and the
-- primary key makes a slot complete at most once.
CREATE TABLE lease_runs (
    job      text        NOT NULL,
    slot     timestamptz NOT NULL,
    finished timestamptz NOT NULL DEFAULT clock_timestamp(),
    holder   text        NOT NULL,
    error    text        NOT NULL DEFAULT '',
    PRIMARY KEY (job, slot)
);

-- +goose Down
DROP TABLE lease_runs;
