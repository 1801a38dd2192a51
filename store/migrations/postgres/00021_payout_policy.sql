-- +goose Up
-- The payout policy (issue 23): each merchant's settings (one row, written the first time they
-- change; a merchant without one has the defaults of domain.DefaultPayoutSettings), its address
-- book, and who created and who approved each withdrawal. Withdrawals and refunds above the
-- approval threshold wait for a second person's approval: the payout manager never sends one
-- whose approval is required and not given (store.PendingWithdrawals).
CREATE TABLE payout_settings (
    merchant_id               UUID PRIMARY KEY REFERENCES merchants(id),
    approval_threshold_cents  BIGINT CHECK (approval_threshold_cents >= 0),            -- NULL: approvals off
    allowlist_only            BOOLEAN NOT NULL DEFAULT FALSE,
    address_cooling_off_hours INTEGER NOT NULL DEFAULT 24 CHECK (address_cooling_off_hours BETWEEN 0 AND 720),
    daily_limit_cents         BIGINT CHECK (daily_limit_cents > 0),                    -- NULL: no daily limit
    refund_claim_days         INTEGER NOT NULL DEFAULT 30 CHECK (refund_claim_days BETWEEN 1 AND 365),
    offer_overpayment_refunds BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at                TIMESTAMPTZ NOT NULL
);

-- Saved recipients. usable_at is fixed when the entry is saved (created_at + the cooling-off
-- period then): changing the period later neither shortens nor lengthens an entry's wait.
-- created_by names the person (no foreign key: the log of who saved it outlives the user row);
-- NULL for a service token.
CREATE TABLE address_book (
    id               UUID PRIMARY KEY,
    merchant_id      UUID NOT NULL REFERENCES merchants(id),
    label            TEXT NOT NULL,
    chain_id         BIGINT NOT NULL REFERENCES chains(chain_id),
    address          TEXT NOT NULL CHECK (address = lower(address)),
    created_at       TIMESTAMPTZ NOT NULL,
    usable_at        TIMESTAMPTZ NOT NULL,
    created_by       UUID,
    created_by_email TEXT,
    UNIQUE (merchant_id, chain_id, address)
);
CREATE INDEX address_book_merchant_created_idx ON address_book (merchant_id, created_at DESC, id DESC);

-- created_by: the person who created it (NULL: a secret key or a service token), who may never
-- approve it. An approval is given once and never taken back.
ALTER TABLE withdrawals
    ADD COLUMN approval_required BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN approved_by       UUID,
    ADD COLUMN approved_by_email TEXT,
    ADD COLUMN approved_at       TIMESTAMPTZ,
    ADD COLUMN created_by        UUID,
    ADD CONSTRAINT withdrawals_approval_ck CHECK (approved_at IS NULL OR (approval_required AND approved_by IS NOT NULL));

-- The rolling daily limit sums a merchant's debits of the last 24 h (policy.Check).
CREATE INDEX ledger_entries_merchant_created_idx ON ledger_entries (merchant_id, livemode, created_at);

-- +goose Down
DROP INDEX ledger_entries_merchant_created_idx;
ALTER TABLE withdrawals
    DROP CONSTRAINT withdrawals_approval_ck,
    DROP COLUMN created_by,
    DROP COLUMN approved_at,
    DROP COLUMN approved_by_email,
    DROP COLUMN approved_by,
    DROP COLUMN approval_required;
DROP TABLE address_book;
DROP TABLE payout_settings;
