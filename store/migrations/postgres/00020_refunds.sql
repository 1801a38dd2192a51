-- +goose Up
-- Refunds (issue 23): money given back to a payment's customer, in the payment's settled token on
-- its chain, paid by the hot wallet through the transaction manager. A refund debits the
-- merchant's balance in the transaction that creates it (refund_debit) and a failure or cancel
-- reverses it (refund_reversal), once each: the unique (kind, refund_id) index. Its payout is an
-- ordinary outgoing payout (kind 'payout') pointing at the refund instead of a withdrawal.
CREATE TABLE refunds (
    id                   UUID PRIMARY KEY,
    merchant_id          UUID NOT NULL REFERENCES merchants(id),
    payment_id           UUID NOT NULL REFERENCES payments(id),
    livemode             BOOLEAN NOT NULL,
    chain_id             BIGINT NOT NULL REFERENCES chains(chain_id),
    token_id             TEXT NOT NULL REFERENCES tokens(id),
    amount_in_cents      BIGINT NOT NULL CHECK (amount_in_cents > 0),  -- debited from the balance
    amount_asset         NUMERIC(78, 0) NOT NULL CHECK (amount_asset > 0), -- the token amount, smallest unit
    subtract_network_fee BOOLEAN NOT NULL DEFAULT FALSE,
    network_fee_asset    NUMERIC(78, 0),                                -- taken from the amount sent, once signed
    recipient_address    TEXT,                                          -- lowercase; NULL while awaiting the customer's claim
    recipient_source     TEXT CHECK (recipient_source IN ('merchant', 'payer_signature', 'typed_address')),
    reason               TEXT,
    overpayment          BOOLEAN NOT NULL DEFAULT FALSE,                -- the excess the checkout page asked for
    claim_expires_at     TIMESTAMPTZ,
    status               TEXT NOT NULL CHECK (status IN ('awaiting_address', 'pending', 'processing', 'completed', 'failed', 'cancelled')),
    approval_required    BOOLEAN NOT NULL DEFAULT FALSE,
    approved_by          UUID,                                          -- user id
    approved_by_email    TEXT,
    approved_at          TIMESTAMPTZ,
    created_by           UUID,                                          -- user id; NULL for a key, a service token or the checkout page
    error_message        TEXT,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    version              BIGINT NOT NULL DEFAULT 1,
    CHECK ((recipient_address IS NULL) = (recipient_source IS NULL)),
    CHECK (recipient_address IS NOT NULL OR status IN ('awaiting_address', 'cancelled'))
);
CREATE INDEX refunds_merchant_created_idx ON refunds (merchant_id, livemode, created_at DESC, id DESC);
CREATE INDEX refunds_payment_idx ON refunds (payment_id);
CREATE INDEX refunds_pending_idx ON refunds (chain_id, created_at) WHERE status = 'pending';
CREATE INDEX refunds_claim_expiry_idx ON refunds (claim_expires_at) WHERE status = 'awaiting_address';
-- One overpayment refund alive per payment: asking again answers it (a cancelled or failed one
-- gave the money back, and the customer may ask again).
CREATE UNIQUE INDEX refunds_overpayment_uq ON refunds (payment_id) WHERE overpayment AND status NOT IN ('failed', 'cancelled');

CREATE TABLE refund_receipts (
    refund_id                   UUID PRIMARY KEY REFERENCES refunds(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        NUMERIC(78, 0) NOT NULL,                -- what the customer received
    tx_hash                     TEXT NOT NULL,
    tx_block_number             BIGINT NOT NULL,
    tx_timestamp                TIMESTAMPTZ NOT NULL,
    tx_sender_address           TEXT NOT NULL,
    tx_gas_used                 BIGINT NOT NULL,
    tx_total_cost               NUMERIC(78, 0) NOT NULL,
    tx_total_cost_usd_fractions BIGINT NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL
);

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal', 'transfer_credit', 'refund_debit', 'refund_reversal'));
ALTER TABLE ledger_entries ADD COLUMN refund_id UUID REFERENCES refunds(id);
CREATE UNIQUE INDEX ledger_entries_refund_uq ON ledger_entries (kind, refund_id) WHERE refund_id IS NOT NULL;

ALTER TABLE outgoing_txs ADD COLUMN refund_id UUID UNIQUE REFERENCES refunds(id);

ALTER TABLE events DROP CONSTRAINT events_entity_check;
ALTER TABLE events ADD CONSTRAINT events_entity_check CHECK (entity IN ('payment', 'withdrawal', 'endpoint', 'refund'));

-- +goose Down
DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.entity = 'refund');
DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events WHERE entity = 'refund');
DELETE FROM events WHERE entity = 'refund';
ALTER TABLE events DROP CONSTRAINT events_entity_check;
ALTER TABLE events ADD CONSTRAINT events_entity_check CHECK (entity IN ('payment', 'withdrawal', 'endpoint'));
ALTER TABLE outgoing_txs DROP COLUMN refund_id;
DROP INDEX ledger_entries_refund_uq;
DELETE FROM ledger_entries WHERE refund_id IS NOT NULL;
ALTER TABLE ledger_entries DROP COLUMN refund_id;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal', 'transfer_credit'));
DROP TABLE refund_receipts;
DROP TABLE refunds;
