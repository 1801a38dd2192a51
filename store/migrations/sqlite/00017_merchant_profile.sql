-- +goose Up
-- The merchant's branding for the hosted checkout page, set from the dashboard: the name shown
-- to customers (NULL: the merchant's short name, as before) and an accent colour (#rrggbb;
-- NULL: the page's own). logo_url exists since the first migration.
ALTER TABLE merchants ADD COLUMN display_name TEXT;
ALTER TABLE merchants ADD COLUMN accent_color TEXT;

-- +goose Down
ALTER TABLE merchants DROP COLUMN accent_color;
ALTER TABLE merchants DROP COLUMN display_name;
