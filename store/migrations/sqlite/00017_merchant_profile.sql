-- +goose NO TRANSACTION
-- +goose Up
-- (Not in goose's transaction: SQLite cannot widen events' inline CHECK without rebuilding the
-- table, and a rebuild of a table webhook_deliveries refers to needs foreign keys off, which
-- only takes effect outside a transaction. The changes themselves run in one.)
PRAGMA foreign_keys = OFF;
BEGIN;
-- The merchant's branding for the hosted checkout page, set from the dashboard: the name shown
-- to customers (NULL: the merchant's short name, as before) and an accent colour (#rrggbb;
-- NULL: the page's own). logo_url exists since the first migration.
ALTER TABLE merchants ADD COLUMN display_name TEXT;
ALTER TABLE merchants ADD COLUMN accent_color TEXT;

-- The dashboard's "send a test event" (webhook.test) is an event of a webhook endpoint, delivered
-- through the ordinary delivery path: events may now be about an endpoint.
CREATE TABLE events_new (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    entity      TEXT NOT NULL CHECK (entity IN ('payment', 'withdrawal', 'endpoint')),
    entity_id   TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    sequence    BIGINT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    object      TEXT,
    livemode    BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (entity_id, sequence)
);
INSERT INTO events_new (id, type, entity, entity_id, merchant_id, sequence, payload, created_at, object, livemode)
    SELECT id, type, entity, entity_id, merchant_id, sequence, payload, created_at, object, livemode FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_merchant_created_idx ON events (merchant_id, created_at, id);
CREATE INDEX events_created_idx ON events (created_at, id);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The events CHECK is not narrowed again on SQLite (another rebuild); the columns go.
ALTER TABLE merchants DROP COLUMN accent_color;
ALTER TABLE merchants DROP COLUMN display_name;
