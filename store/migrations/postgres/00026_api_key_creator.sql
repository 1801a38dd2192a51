-- +goose Up
-- The person who made a secret key from the dashboard (NULL: made by the command line, or before
-- this column). A withdrawal or refund the key creates counts as that person's, so they cannot
-- approve it themselves: without this an admin could mint a live key, withdraw with it and
-- approve the result alone (review D2 of issue 23).
ALTER TABLE api_keys ADD COLUMN created_by UUID;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN created_by;
