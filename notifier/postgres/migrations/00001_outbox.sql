-- +goose Up
-- Alerts as the notifier encoded them (JSON kept byte for byte), and one
-- delivery per alert and channel. A pending delivery is due at
-- next_attempt (the dispatchers' clock); a claim leases it until
-- claimed_until (the database's clock, so that a replica whose clock is
-- off cannot take a delivery another replica holds).
CREATE TABLE notifier_alert (
	id      text PRIMARY KEY,
	body    text NOT NULL,
	created timestamptz NOT NULL
);
CREATE TABLE notifier_delivery (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	alert        text NOT NULL REFERENCES notifier_alert (id),
	channel      text NOT NULL,
	status       text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
	attempts     integer NOT NULL DEFAULT 0,
	next_attempt timestamptz NOT NULL,
	last_error   text NOT NULL DEFAULT '',
	created      timestamptz NOT NULL,
	delivered_at timestamptz,
	claimed_until timestamptz,
	UNIQUE (alert, channel)
);
-- Only pending deliveries are ever looked for by time: the index stays
-- the size of the backlog, not of the history.
CREATE INDEX notifier_delivery_due ON notifier_delivery (next_attempt, id) WHERE status = 'pending';
CREATE INDEX notifier_delivery_status ON notifier_delivery (status, id);
