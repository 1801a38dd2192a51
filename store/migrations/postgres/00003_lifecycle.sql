-- +goose Up
-- The lifecycle core: every committed change of a payment or withdrawal bumps its version and
-- writes one event in the same transaction; the event's sequence is that version.
ALTER TABLE payments ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE withdrawals ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    entity      TEXT NOT NULL CHECK (entity IN ('payment', 'withdrawal')),
    entity_id   UUID NOT NULL,
    merchant_id UUID NOT NULL REFERENCES merchants(id),
    sequence    BIGINT NOT NULL,
    payload     JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (entity_id, sequence)
);
CREATE INDEX events_merchant_created_idx ON events (merchant_id, created_at, id);
CREATE INDEX events_created_idx ON events (created_at, id);

-- Expiry sweeps read only what is due: open payments by expiry, active quotes by expiry.
CREATE INDEX payments_open_expiry_idx ON payments (expires_at) WHERE status IN ('pending', 'processing');
CREATE INDEX quotes_active_expiry_idx ON quotes (expires_at) WHERE status = 'active';

-- Leases let one process at a time run a background job (the expiry sweep, later one chain
-- watcher per chain). Correctness never depends on them: transitions are checked under row locks.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- Keys are now claimed and sealed inside the effect's transaction, so no new row is ever left
-- "in_progress". Rows the earlier design left so (a crash mid-request, possibly after its
-- effect committed) are kept: they answer 409 idempotency_key_in_use until they expire, as
-- before, rather than let a retry pay twice.

-- +goose Down
DROP TABLE leases;
DROP INDEX quotes_active_expiry_idx;
DROP INDEX payments_open_expiry_idx;
DROP TABLE events;
ALTER TABLE withdrawals DROP COLUMN version;
ALTER TABLE payments DROP COLUMN version;
