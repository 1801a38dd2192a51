-- +goose NO TRANSACTION
-- +goose Up
-- (Not in goose's transaction: SQLite cannot widen the inline CHECKs of ledger_entries and events
-- without rebuilding them, and a rebuild of events, which webhook_deliveries refers to, needs
-- foreign keys off, which only takes effect outside a transaction. The changes run in one.)
PRAGMA foreign_keys = OFF;
BEGIN;
-- Refunds (issue 23): see the PostgreSQL migration for what each column means. A refund debits
-- the merchant's balance in the transaction that creates it (refund_debit) and a failure or
-- cancel reverses it (refund_reversal), once each; its payout is an ordinary outgoing payout
-- pointing at the refund instead of a withdrawal.
CREATE TABLE refunds (
    id                   TEXT PRIMARY KEY,
    merchant_id          TEXT NOT NULL REFERENCES merchants(id),
    payment_id           TEXT NOT NULL REFERENCES payments(id),
    livemode             BOOLEAN NOT NULL,
    chain_id             BIGINT NOT NULL REFERENCES chains(chain_id),
    token_id             TEXT NOT NULL REFERENCES tokens(id),
    amount_in_cents      BIGINT NOT NULL CHECK (amount_in_cents > 0),
    amount_asset         TEXT NOT NULL,
    subtract_network_fee BOOLEAN NOT NULL DEFAULT FALSE,
    network_fee_asset    TEXT,
    recipient_address    TEXT,
    recipient_source     TEXT CHECK (recipient_source IN ('merchant', 'payer_signature', 'typed_address')),
    reason               TEXT,
    overpayment          BOOLEAN NOT NULL DEFAULT FALSE,
    claim_expires_at     DATETIME,
    status               TEXT NOT NULL CHECK (status IN ('awaiting_address', 'pending', 'processing', 'completed', 'failed', 'cancelled')),
    approval_required    BOOLEAN NOT NULL DEFAULT FALSE,
    approved_by          TEXT,
    approved_by_email    TEXT,
    approved_at          DATETIME,
    created_by           TEXT,
    error_message        TEXT,
    created_at           DATETIME NOT NULL,
    updated_at           DATETIME NOT NULL,
    version              BIGINT NOT NULL DEFAULT 1,
    CHECK ((recipient_address IS NULL) = (recipient_source IS NULL)),
    CHECK (recipient_address IS NOT NULL OR status IN ('awaiting_address', 'cancelled'))
);
CREATE INDEX refunds_merchant_created_idx ON refunds (merchant_id, livemode, created_at, id);
CREATE INDEX refunds_payment_idx ON refunds (payment_id);
CREATE INDEX refunds_pending_idx ON refunds (chain_id, created_at) WHERE status = 'pending';
CREATE INDEX refunds_claim_expiry_idx ON refunds (claim_expires_at) WHERE status = 'awaiting_address';
CREATE UNIQUE INDEX refunds_overpayment_uq ON refunds (payment_id) WHERE overpayment AND status NOT IN ('failed', 'cancelled');

CREATE TABLE refund_receipts (
    refund_id                   TEXT PRIMARY KEY REFERENCES refunds(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        TEXT NOT NULL,
    tx_hash                     TEXT NOT NULL,
    tx_block_number             BIGINT NOT NULL,
    tx_timestamp                DATETIME NOT NULL,
    tx_sender_address           TEXT NOT NULL,
    tx_gas_used                 BIGINT NOT NULL,
    tx_total_cost               TEXT NOT NULL,
    tx_total_cost_usd_fractions BIGINT NOT NULL,
    created_at                  DATETIME NOT NULL
);

CREATE TABLE ledger_entries_new (
    id            TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL REFERENCES merchants(id),
    kind          TEXT NOT NULL CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal', 'transfer_credit',
                                                'refund_debit', 'refund_reversal')),
    amount_cents  BIGINT NOT NULL,
    payment_id    TEXT REFERENCES payments(id),
    withdrawal_id TEXT REFERENCES withdrawals(id),
    transfer_id   TEXT REFERENCES transfers(id),
    refund_id     TEXT REFERENCES refunds(id),
    created_at    DATETIME NOT NULL,
    livemode      BOOLEAN NOT NULL DEFAULT FALSE
);
INSERT INTO ledger_entries_new (id, merchant_id, kind, amount_cents, payment_id, withdrawal_id, transfer_id, created_at, livemode)
    SELECT id, merchant_id, kind, amount_cents, payment_id, withdrawal_id, transfer_id, created_at, livemode FROM ledger_entries;
DROP TABLE ledger_entries;
ALTER TABLE ledger_entries_new RENAME TO ledger_entries;
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id, livemode);
CREATE UNIQUE INDEX ledger_entries_payment_uq ON ledger_entries (kind, payment_id) WHERE payment_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_withdrawal_uq ON ledger_entries (kind, withdrawal_id) WHERE withdrawal_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_transfer_uq ON ledger_entries (kind, transfer_id) WHERE transfer_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_refund_uq ON ledger_entries (kind, refund_id) WHERE refund_id IS NOT NULL;

ALTER TABLE outgoing_txs ADD COLUMN refund_id TEXT REFERENCES refunds(id);
CREATE UNIQUE INDEX outgoing_txs_refund_uq ON outgoing_txs (refund_id) WHERE refund_id IS NOT NULL;

CREATE TABLE events_new (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    entity      TEXT NOT NULL CHECK (entity IN ('payment', 'withdrawal', 'endpoint', 'refund')),
    entity_id   TEXT NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    sequence    BIGINT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  DATETIME NOT NULL,
    object      TEXT,
    livemode    BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (entity_id, sequence)
);
INSERT INTO events_new (id, type, entity, entity_id, merchant_id, sequence, payload, created_at, object, livemode)
    SELECT id, type, entity, entity_id, merchant_id, sequence, payload, created_at, object, livemode FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_merchant_created_idx ON events (merchant_id, created_at, id);
CREATE INDEX events_created_idx ON events (created_at, id);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- The CHECKs are not narrowed again on SQLite (another rebuild); restore from a backup to go back.
SELECT 1;
