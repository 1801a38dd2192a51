-- +goose Up
-- Webhooks (issue 11). An event (written by the lifecycle core in the transaction of its change)
-- now carries the object as the API's GET returns it; its deliveries to the merchant's endpoints
-- are scheduled in the same transaction, and a worker makes each attempt once across processes
-- (a lease on the delivery row), logging every attempt.

ALTER TABLE events ADD COLUMN object TEXT; -- the payment or withdrawal as GET returns it (deployment's shape)

CREATE TABLE webhook_endpoints (
    id               UUID PRIMARY KEY,
    merchant_id      UUID NOT NULL REFERENCES merchants(id),
    url              TEXT NOT NULL,
    event_types      TEXT NOT NULL,          -- ",payment.completed,withdrawal.failed," or "" for every type
    enabled          BOOLEAN NOT NULL,
    disabled_reason  TEXT,
    secret_sealed    TEXT NOT NULL,          -- the whsec_ signing secret, encrypted (AES-256-GCM)
    previous_sealed  TEXT,                   -- the secret before a rotation, still signing until:
    previous_until   TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_merchant_idx ON webhook_endpoints (merchant_id) WHERE enabled;

CREATE TABLE webhook_deliveries (
    id              UUID PRIMARY KEY,
    event_id        TEXT NOT NULL REFERENCES events(id),
    endpoint_id     UUID NOT NULL REFERENCES webhook_endpoints(id),
    merchant_id     UUID NOT NULL REFERENCES merchants(id),
    -- pending (attempts due or to come), delivered (a 2xx), failed (the schedule ran out),
    -- disabled (the endpoint was disabled or deleted meanwhile)
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'disabled')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    locked_until    TIMESTAMPTZ,                      -- an attempt in progress, by locked_by
    locked_by       TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_merchant_idx ON webhook_deliveries (merchant_id, created_at);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
    id            UUID PRIMARY KEY,
    delivery_id   UUID NOT NULL REFERENCES webhook_deliveries(id),
    attempt       BIGINT NOT NULL,           -- 1 for the first
    started_at    TIMESTAMPTZ NOT NULL,
    latency_ms    BIGINT NOT NULL,
    status_code   BIGINT,                    -- NULL: no HTTP answer (refused, timed out)
    error         TEXT,
    response_head TEXT,                      -- the first 1 KB of the response body
    UNIQUE (delivery_id, attempt)
);
CREATE INDEX webhook_attempts_started_idx ON webhook_attempts (started_at);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
ALTER TABLE events DROP COLUMN object;
