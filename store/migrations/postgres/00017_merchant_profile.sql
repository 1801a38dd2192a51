-- +goose Up
-- The merchant's branding for the hosted checkout page, set from the dashboard: the name shown
-- to customers (NULL: the merchant's short name, as before) and an accent colour (#rrggbb;
-- NULL: the page's own). logo_url exists since the first migration.
ALTER TABLE merchants ADD COLUMN display_name TEXT;
ALTER TABLE merchants ADD COLUMN accent_color TEXT;

-- The dashboard's "send a test event" (webhook.test) is an event of a webhook endpoint, delivered
-- through the ordinary delivery path: events may now be about an endpoint.
ALTER TABLE events DROP CONSTRAINT events_entity_check;
ALTER TABLE events ADD CONSTRAINT events_entity_check CHECK (entity IN ('payment', 'withdrawal', 'endpoint'));

-- +goose Down
DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.entity = 'endpoint');
DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events WHERE entity = 'endpoint');
DELETE FROM events WHERE entity = 'endpoint';
ALTER TABLE events DROP CONSTRAINT events_entity_check;
ALTER TABLE events ADD CONSTRAINT events_entity_check CHECK (entity IN ('payment', 'withdrawal'));
ALTER TABLE merchants DROP COLUMN accent_color;
ALTER TABLE merchants DROP COLUMN display_name;
