-- +goose Up
-- Payout settings per mode (review D4 of issue 23): one set for test mode and one for live, so a
-- test-mode token changes the rules of test money only. A merchant's existing settings become
-- both modes' (what was in force stays in force, pending loosenings included).
ALTER TABLE payout_settings ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE payout_settings DROP CONSTRAINT payout_settings_pkey;
ALTER TABLE payout_settings ADD PRIMARY KEY (merchant_id, livemode);
INSERT INTO payout_settings (merchant_id, livemode, approval_threshold_cents, allowlist_only, address_cooling_off_hours,
    daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until)
SELECT merchant_id, TRUE, approval_threshold_cents, allowlist_only, address_cooling_off_hours,
    daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until
FROM payout_settings;

-- +goose Down
-- Back to one set per merchant: the live set is kept (it guards real money).
DELETE FROM payout_settings WHERE NOT livemode;
ALTER TABLE payout_settings DROP CONSTRAINT payout_settings_pkey;
ALTER TABLE payout_settings DROP COLUMN livemode;
ALTER TABLE payout_settings ADD PRIMARY KEY (merchant_id);
