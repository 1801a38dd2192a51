-- +goose Up
-- The catalogue file's fields the first schema lacked (catalog/chains.yaml). Rows get their values
-- from the upsert at start, which follows every migration.
ALTER TABLE chains ADD COLUMN finalized_tag BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE chains ADD COLUMN block_explorer_url TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN eip3009 BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE tokens ADD COLUMN eip2612 BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE tokens DROP COLUMN eip2612;
ALTER TABLE tokens DROP COLUMN eip3009;
ALTER TABLE chains DROP COLUMN block_explorer_url;
ALTER TABLE chains DROP COLUMN finalized_tag;
