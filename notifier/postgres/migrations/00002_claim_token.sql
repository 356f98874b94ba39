-- +goose Up
-- The token of the claim that leased a delivery. A claim whose answer was
-- lost with its connection (the statement committed, the rows never
-- reached the dispatcher) is repeated with the same token and takes its
-- own deliveries back at once, instead of leaving them leased, and unsent,
-- until the lease ends. Older binaries neither set nor read the column.
ALTER TABLE notifier_delivery ADD COLUMN claimed_by text;
