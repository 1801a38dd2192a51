-- +goose Up
-- Money is integer cents (BIGINT); token amounts are integers in the smallest unit (NUMERIC(78,0)
-- holds any uint256); rates are exact decimals (NUMERIC). Nothing here is a float.
CREATE TABLE merchants (
    id                  UUID PRIMARY KEY,
    name                TEXT NOT NULL,
    short_name          TEXT NOT NULL,
    logo_url            TEXT,
    deposits_enabled    BOOLEAN NOT NULL DEFAULT FALSE,
    withdrawals_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    created_at          TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    id          UUID PRIMARY KEY,
    merchant_id UUID NOT NULL REFERENCES merchants(id),
    prefix      TEXT NOT NULL,
    key_hash    BYTEA NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id);
CREATE INDEX api_keys_prefix_idx ON api_keys (prefix);

CREATE TABLE chains (
    chain_id                BIGINT PRIMARY KEY,
    name                    TEXT NOT NULL,
    native_symbol           TEXT NOT NULL,
    native_decimals         INTEGER NOT NULL,
    is_testnet              BOOLEAN NOT NULL,
    is_active               BOOLEAN NOT NULL DEFAULT TRUE,
    convenience_fee_cents   BIGINT NOT NULL DEFAULT 0,
    required_confirmations  INTEGER NOT NULL DEFAULT 12
);

CREATE TABLE tokens (
    id               TEXT PRIMARY KEY,
    chain_id         BIGINT NOT NULL REFERENCES chains(chain_id),
    symbol           TEXT NOT NULL,
    market_api_id    TEXT NOT NULL,
    contract_address TEXT NOT NULL,
    decimals         INTEGER NOT NULL,
    type             TEXT NOT NULL CHECK (type IN ('stablecoin', 'volatile')),
    asset_type       TEXT NOT NULL CHECK (asset_type IN ('native', 'erc20')),
    status           TEXT NOT NULL CHECK (status IN ('active', 'deprecated', 'blocked')),
    UNIQUE (chain_id, contract_address)
);

CREATE TABLE address_counters (
    name       TEXT PRIMARY KEY,
    next_index BIGINT NOT NULL
);

CREATE TABLE deposit_addresses (
    id               UUID PRIMARY KEY,
    merchant_id      UUID NOT NULL REFERENCES merchants(id),
    payment_id       UUID,
    customer_ref_id  TEXT,
    derivation_index BIGINT NOT NULL UNIQUE,
    address          TEXT NOT NULL UNIQUE,
    created_at       TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX deposit_addresses_customer_idx ON deposit_addresses (merchant_id, customer_ref_id)
    WHERE customer_ref_id IS NOT NULL;
-- Search by address prefix: text_pattern_ops lets LIKE 'abc%' use the index.
CREATE INDEX deposit_addresses_address_prefix_idx ON deposit_addresses (address text_pattern_ops);

CREATE TABLE payments (
    id                        UUID PRIMARY KEY,
    merchant_id               UUID NOT NULL REFERENCES merchants(id),
    type                      TEXT NOT NULL CHECK (type IN ('payment', 'deposit')),
    amount_in_cents           BIGINT NOT NULL CHECK (amount_in_cents >= 0),
    amount_due_cents          BIGINT NOT NULL CHECK (amount_due_cents >= 0),
    convenience_fee_cents     BIGINT,
    merchant_fee_cents        BIGINT,
    swap_fee_cents            BIGINT,
    amount_merchant_net_cents BIGINT NOT NULL,
    currency                  TEXT NOT NULL CHECK (currency = 'USD'),
    status                    TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'expired', 'cancelled')),
    order_id                  TEXT,
    customer_ref_id           TEXT,
    redirect_url              TEXT,
    custom_metadata           TEXT,
    secret_hash               BYTEA NOT NULL,
    deposit_address_id        UUID NOT NULL REFERENCES deposit_addresses(id),
    expires_at                TIMESTAMPTZ NOT NULL,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL
);
-- Every list filter and sort is served by a merchant-leading index.
CREATE INDEX payments_merchant_created_idx ON payments (merchant_id, created_at DESC, id DESC);
CREATE INDEX payments_merchant_amount_idx ON payments (merchant_id, amount_in_cents, id);
CREATE INDEX payments_merchant_status_created_idx ON payments (merchant_id, status, created_at DESC);
CREATE INDEX payments_merchant_type_created_idx ON payments (merchant_id, type, created_at DESC);
CREATE INDEX payments_deposit_address_idx ON payments (deposit_address_id);

CREATE TABLE quotes (
    id                    UUID PRIMARY KEY,
    payment_id            UUID NOT NULL REFERENCES payments(id),
    token_id              TEXT NOT NULL REFERENCES tokens(id),
    chain_id              BIGINT NOT NULL REFERENCES chains(chain_id),
    expected_amount_asset NUMERIC(78, 0) NOT NULL,
    rate_usd_asset        NUMERIC NOT NULL,
    amount_due_cents      BIGINT,
    convenience_fee_cents BIGINT NOT NULL,
    expires_at            TIMESTAMPTZ NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'expired', 'used', 'failed')),
    created_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX quotes_payment_idx ON quotes (payment_id);

CREATE TABLE payment_receipts (
    payment_id                  UUID PRIMARY KEY REFERENCES payments(id),
    quote_id                    UUID NOT NULL REFERENCES quotes(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        NUMERIC(78, 0) NOT NULL,
    settled_amount_usd          NUMERIC(20, 2) NOT NULL,
    tx_hash                     TEXT,
    tx_block_number             BIGINT,
    tx_timestamp                TIMESTAMPTZ,
    tx_sender_address           TEXT,
    tx_gas_used                 BIGINT,
    tx_total_cost               NUMERIC(78, 0),
    tx_total_cost_usd_fractions BIGINT,
    tx_is_sponsored             BOOLEAN,
    processed_by                TEXT,
    tx_risk_score               INTEGER,
    tx_risk_severity            TEXT,
    tx_risk_provider            TEXT,
    confirmations               INTEGER NOT NULL DEFAULT 0,
    required_confirmations      INTEGER NOT NULL DEFAULT 0,
    created_at                  TIMESTAMPTZ NOT NULL
);
CREATE INDEX payment_receipts_tx_hash_idx ON payment_receipts (tx_hash text_pattern_ops);
CREATE INDEX payment_receipts_sender_idx ON payment_receipts (tx_sender_address text_pattern_ops);

CREATE TABLE withdrawal_configs (
    merchant_id            UUID PRIMARY KEY REFERENCES merchants(id),
    token_symbol           TEXT NOT NULL,
    min_amount_cents       BIGINT NOT NULL,
    max_amount_cents       BIGINT NOT NULL,
    backend_wallet_address TEXT NOT NULL,
    updated_at             TIMESTAMPTZ NOT NULL
);

CREATE TABLE withdrawal_config_chains (
    merchant_id UUID NOT NULL REFERENCES withdrawal_configs(merchant_id),
    chain_id    BIGINT NOT NULL REFERENCES chains(chain_id),
    PRIMARY KEY (merchant_id, chain_id)
);

CREATE TABLE withdrawals (
    id                UUID PRIMARY KEY,
    merchant_id       UUID NOT NULL REFERENCES merchants(id),
    amount_in_cents   BIGINT NOT NULL CHECK (amount_in_cents > 0),
    chain_id          BIGINT NOT NULL REFERENCES chains(chain_id),
    token_id          TEXT NOT NULL REFERENCES tokens(id),
    recipient_address TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
    currency          TEXT NOT NULL CHECK (currency = 'USD'),
    order_id          TEXT,
    custom_metadata   TEXT,
    error_message     TEXT,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX withdrawals_merchant_created_idx ON withdrawals (merchant_id, created_at DESC, id DESC);
CREATE INDEX withdrawals_merchant_status_created_idx ON withdrawals (merchant_id, status, created_at DESC);

CREATE TABLE withdrawal_receipts (
    withdrawal_id               UUID PRIMARY KEY REFERENCES withdrawals(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        NUMERIC(78, 0) NOT NULL,
    settled_amount_usd          NUMERIC(20, 2) NOT NULL,
    tx_hash                     TEXT NOT NULL,
    tx_block_number             BIGINT NOT NULL,
    tx_timestamp                TIMESTAMPTZ NOT NULL,
    tx_sender_address           TEXT NOT NULL,
    tx_gas_used                 BIGINT NOT NULL,
    tx_total_cost               NUMERIC(78, 0) NOT NULL,
    tx_total_cost_usd_fractions BIGINT NOT NULL,
    tx_is_sponsored             BOOLEAN NOT NULL,
    processed_by                TEXT NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL
);

-- The balance ledger: append-only signed cents. A credit per settled payment and a debit per
-- withdrawal are unique, so a retry can never book the same money twice.
CREATE TABLE ledger_entries (
    id            UUID PRIMARY KEY,
    merchant_id   UUID NOT NULL REFERENCES merchants(id),
    kind          TEXT NOT NULL CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal')),
    amount_cents  BIGINT NOT NULL,
    payment_id    UUID REFERENCES payments(id),
    withdrawal_id UUID REFERENCES withdrawals(id),
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id);
CREATE UNIQUE INDEX ledger_entries_payment_uq ON ledger_entries (kind, payment_id) WHERE payment_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_withdrawal_uq ON ledger_entries (kind, withdrawal_id) WHERE withdrawal_id IS NOT NULL;

CREATE TABLE idempotency_keys (
    merchant_id   UUID NOT NULL REFERENCES merchants(id),
    key           TEXT NOT NULL,
    operation     TEXT NOT NULL,
    request_hash  BYTEA NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
    status_code   INTEGER,
    response_body BYTEA,
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Deployment-level values that must survive restarts (e.g. the generated development xpub).
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO address_counters (name, next_index) VALUES ('deposit', 0);

-- +goose Down
DROP TABLE settings;
DROP TABLE idempotency_keys;
DROP TABLE ledger_entries;
DROP TABLE withdrawal_receipts;
DROP TABLE withdrawals;
DROP TABLE withdrawal_config_chains;
DROP TABLE withdrawal_configs;
DROP TABLE payment_receipts;
DROP TABLE quotes;
DROP TABLE payments;
DROP TABLE deposit_addresses;
DROP TABLE address_counters;
DROP TABLE tokens;
DROP TABLE chains;
DROP TABLE api_keys;
DROP TABLE merchants;
