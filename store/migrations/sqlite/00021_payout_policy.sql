-- +goose Up
-- The payout policy (issue 23): see the PostgreSQL migration for what each column means. No
-- table is rebuilt: the new withdrawals columns are added (SQLite allows a CHECK on an added
-- column), and no existing CHECK changes.
CREATE TABLE payout_settings (
    merchant_id               TEXT PRIMARY KEY REFERENCES merchants(id),
    approval_threshold_cents  BIGINT CHECK (approval_threshold_cents >= 0),
    allowlist_only            BOOLEAN NOT NULL DEFAULT FALSE,
    address_cooling_off_hours INTEGER NOT NULL DEFAULT 24 CHECK (address_cooling_off_hours BETWEEN 0 AND 720),
    daily_limit_cents         BIGINT CHECK (daily_limit_cents > 0),
    refund_claim_days         INTEGER NOT NULL DEFAULT 30 CHECK (refund_claim_days BETWEEN 1 AND 365),
    offer_overpayment_refunds BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at                DATETIME NOT NULL
);

CREATE TABLE address_book (
    id               TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    label            TEXT NOT NULL,
    chain_id         BIGINT NOT NULL REFERENCES chains(chain_id),
    address          TEXT NOT NULL CHECK (address = lower(address)),
    created_at       DATETIME NOT NULL,
    usable_at        DATETIME NOT NULL,
    created_by       TEXT,
    created_by_email TEXT,
    UNIQUE (merchant_id, chain_id, address)
);
CREATE INDEX address_book_merchant_created_idx ON address_book (merchant_id, created_at, id);

ALTER TABLE withdrawals ADD COLUMN approval_required BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE withdrawals ADD COLUMN approved_by TEXT;
ALTER TABLE withdrawals ADD COLUMN approved_by_email TEXT;
ALTER TABLE withdrawals ADD COLUMN approved_at DATETIME CHECK (approved_at IS NULL OR (approval_required AND approved_by IS NOT NULL));
ALTER TABLE withdrawals ADD COLUMN created_by TEXT;

CREATE INDEX ledger_entries_merchant_created_idx ON ledger_entries (merchant_id, livemode, created_at);

-- +goose Down
DROP INDEX ledger_entries_merchant_created_idx;
ALTER TABLE withdrawals DROP COLUMN created_by;
ALTER TABLE withdrawals DROP COLUMN approved_at;
ALTER TABLE withdrawals DROP COLUMN approved_by_email;
ALTER TABLE withdrawals DROP COLUMN approved_by;
ALTER TABLE withdrawals DROP COLUMN approval_required;
DROP TABLE address_book;
DROP TABLE payout_settings;
