-- +goose Up
-- A loosening of the payout policy waits out the cooling-off period that was in force
-- (domain.PayoutSettings.Effective): stricter_rules keeps, as JSON, the strictest rules in force
-- before the change, applied with the new ones until stricter_until. NULL: none pending.
ALTER TABLE payout_settings ADD COLUMN stricter_rules TEXT;
ALTER TABLE payout_settings ADD COLUMN stricter_until TIMESTAMPTZ;

-- +goose Down
ALTER TABLE payout_settings DROP COLUMN stricter_until;
ALTER TABLE payout_settings DROP COLUMN stricter_rules;
