-- +goose Up
-- The person who made a secret key from the dashboard (NULL: made by the command line, by a
-- service token, or before the audit log). A withdrawal or refund the key creates counts as that
-- person's, so they cannot approve it themselves: without this an admin could mint a live key,
-- withdraw with it and approve the result alone (review D2 of issue 23).
ALTER TABLE api_keys ADD COLUMN created_by TEXT;

-- Keys made before this column: the audit log names who made each (api_key.created, written in
-- the key's own transaction since migration 00018); a person's key is theirs from now on.
UPDATE api_keys SET created_by = (
    SELECT a.actor_id FROM audit_log a
    WHERE a.action = 'api_key.created' AND a.actor_kind = 'person' AND a.target_id = api_keys.id
    ORDER BY a.id LIMIT 1)
WHERE created_by IS NULL;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN created_by;
