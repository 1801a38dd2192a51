-- +goose Up
-- Payout settings per mode: see the PostgreSQL migration. SQLite cannot change a primary key,
-- so the table is rebuilt; nothing references it.
CREATE TABLE payout_settings_new (
    merchant_id               TEXT NOT NULL REFERENCES merchants(id),
    livemode                  BOOLEAN NOT NULL DEFAULT FALSE,
    approval_threshold_cents  BIGINT CHECK (approval_threshold_cents >= 0),
    allowlist_only            BOOLEAN NOT NULL DEFAULT FALSE,
    address_cooling_off_hours INTEGER NOT NULL DEFAULT 24 CHECK (address_cooling_off_hours BETWEEN 0 AND 720),
    daily_limit_cents         BIGINT CHECK (daily_limit_cents > 0),
    refund_claim_days         INTEGER NOT NULL DEFAULT 30 CHECK (refund_claim_days BETWEEN 1 AND 365),
    offer_overpayment_refunds BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at                DATETIME NOT NULL,
    stricter_rules            TEXT,
    stricter_until            DATETIME,
    PRIMARY KEY (merchant_id, livemode)
);
INSERT INTO payout_settings_new (merchant_id, livemode, approval_threshold_cents, allowlist_only, address_cooling_off_hours,
    daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until)
SELECT merchant_id, m.livemode, approval_threshold_cents, allowlist_only, address_cooling_off_hours,
    daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until
FROM payout_settings, (SELECT FALSE AS livemode UNION ALL SELECT TRUE) AS m;
DROP TABLE payout_settings;
ALTER TABLE payout_settings_new RENAME TO payout_settings;

-- +goose Down
CREATE TABLE payout_settings_old (
    merchant_id               TEXT PRIMARY KEY REFERENCES merchants(id),
    approval_threshold_cents  BIGINT CHECK (approval_threshold_cents >= 0),
    allowlist_only            BOOLEAN NOT NULL DEFAULT FALSE,
    address_cooling_off_hours INTEGER NOT NULL DEFAULT 24 CHECK (address_cooling_off_hours BETWEEN 0 AND 720),
    daily_limit_cents         BIGINT CHECK (daily_limit_cents > 0),
    refund_claim_days         INTEGER NOT NULL DEFAULT 30 CHECK (refund_claim_days BETWEEN 1 AND 365),
    offer_overpayment_refunds BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at                DATETIME NOT NULL,
    stricter_rules            TEXT,
    stricter_until            DATETIME
);
INSERT INTO payout_settings_old SELECT merchant_id, approval_threshold_cents, allowlist_only, address_cooling_off_hours,
    daily_limit_cents, refund_claim_days, offer_overpayment_refunds, updated_at, stricter_rules, stricter_until
FROM payout_settings WHERE livemode;
DROP TABLE payout_settings;
ALTER TABLE payout_settings_old RENAME TO payout_settings;
