-- +goose Up
-- SQLite form of the PostgreSQL schema: decimals are TEXT (exact), timestamps DATETIME.
CREATE TABLE merchants (
    id                  TEXT PRIMARY KEY,
    name                TEXT NOT NULL,
    short_name          TEXT NOT NULL,
    logo_url            TEXT,
    deposits_enabled    BOOLEAN NOT NULL DEFAULT FALSE,
    withdrawals_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    created_at          DATETIME NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    prefix      TEXT NOT NULL,
    key_hash    BLOB NOT NULL UNIQUE,
    created_at  DATETIME NOT NULL,
    revoked_at  DATETIME
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
    id               TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    payment_id       TEXT,
    customer_ref_id  TEXT,
    derivation_index BIGINT NOT NULL UNIQUE,
    address          TEXT NOT NULL UNIQUE,
    created_at       DATETIME NOT NULL
);
CREATE UNIQUE INDEX deposit_addresses_customer_idx ON deposit_addresses (merchant_id, customer_ref_id)
    WHERE customer_ref_id IS NOT NULL;
-- Prefix search (LIKE .abc%.) on SQLite uses these indexes only with case_sensitive_like; fine at embedded scale.
CREATE INDEX deposit_addresses_address_prefix_idx ON deposit_addresses (address);

CREATE TABLE payments (
    id                        TEXT PRIMARY KEY,
    merchant_id               TEXT NOT NULL REFERENCES merchants(id),
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
    secret_hash               BLOB NOT NULL,
    deposit_address_id        TEXT NOT NULL REFERENCES deposit_addresses(id),
    expires_at                DATETIME NOT NULL,
    created_at                DATETIME NOT NULL,
    updated_at                DATETIME NOT NULL
);
-- Every list filter and sort is served by a merchant-leading index.
CREATE INDEX payments_merchant_created_idx ON payments (merchant_id, created_at, id);
CREATE INDEX payments_merchant_amount_idx ON payments (merchant_id, amount_in_cents, id);
CREATE INDEX payments_merchant_status_created_idx ON payments (merchant_id, status, created_at);
CREATE INDEX payments_merchant_type_created_idx ON payments (merchant_id, type, created_at);
CREATE INDEX payments_deposit_address_idx ON payments (deposit_address_id);

CREATE TABLE quotes (
    id                    TEXT PRIMARY KEY,
    payment_id            TEXT NOT NULL REFERENCES payments(id),
    token_id              TEXT NOT NULL REFERENCES tokens(id),
    chain_id              BIGINT NOT NULL REFERENCES chains(chain_id),
    expected_amount_asset TEXT NOT NULL,
    rate_usd_asset        TEXT NOT NULL,
    amount_due_cents      BIGINT,
    convenience_fee_cents BIGINT NOT NULL,
    expires_at            DATETIME NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'expired', 'used', 'failed')),
    created_at            DATETIME NOT NULL
);
CREATE INDEX quotes_payment_idx ON quotes (payment_id);

CREATE TABLE payment_receipts (
    payment_id                  TEXT PRIMARY KEY REFERENCES payments(id),
    quote_id                    TEXT NOT NULL REFERENCES quotes(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        TEXT NOT NULL,
    settled_amount_usd          TEXT NOT NULL,
    tx_hash                     TEXT,
    tx_block_number             BIGINT,
    tx_timestamp                DATETIME,
    tx_sender_address           TEXT,
    tx_gas_used                 BIGINT,
    tx_total_cost               TEXT,
    tx_total_cost_usd_fractions BIGINT,
    tx_is_sponsored             BOOLEAN,
    processed_by                TEXT,
    tx_risk_score               INTEGER,
    tx_risk_severity            TEXT,
    tx_risk_provider            TEXT,
    confirmations               INTEGER NOT NULL DEFAULT 0,
    required_confirmations      INTEGER NOT NULL DEFAULT 0,
    created_at                  DATETIME NOT NULL
);
CREATE INDEX payment_receipts_tx_hash_idx ON payment_receipts (tx_hash);
CREATE INDEX payment_receipts_sender_idx ON payment_receipts (tx_sender_address);

CREATE TABLE withdrawal_configs (
    merchant_id            TEXT PRIMARY KEY REFERENCES merchants(id),
    token_symbol           TEXT NOT NULL,
    min_amount_cents       BIGINT NOT NULL,
    max_amount_cents       BIGINT NOT NULL,
    backend_wallet_address TEXT NOT NULL,
    updated_at             DATETIME NOT NULL
);

CREATE TABLE withdrawal_config_chains (
    merchant_id TEXT NOT NULL REFERENCES withdrawal_configs(merchant_id),
    chain_id    BIGINT NOT NULL REFERENCES chains(chain_id),
    PRIMARY KEY (merchant_id, chain_id)
);

CREATE TABLE withdrawals (
    id                TEXT PRIMARY KEY,
    merchant_id       TEXT NOT NULL REFERENCES merchants(id),
    amount_in_cents   BIGINT NOT NULL CHECK (amount_in_cents > 0),
    chain_id          BIGINT NOT NULL REFERENCES chains(chain_id),
    token_id          TEXT NOT NULL REFERENCES tokens(id),
    recipient_address TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
    currency          TEXT NOT NULL CHECK (currency = 'USD'),
    order_id          TEXT,
    custom_metadata   TEXT,
    error_message     TEXT,
    created_at        DATETIME NOT NULL,
    updated_at        DATETIME NOT NULL
);
CREATE INDEX withdrawals_merchant_created_idx ON withdrawals (merchant_id, created_at, id);
CREATE INDEX withdrawals_merchant_status_created_idx ON withdrawals (merchant_id, status, created_at);

CREATE TABLE withdrawal_receipts (
    withdrawal_id               TEXT PRIMARY KEY REFERENCES withdrawals(id),
    token_id                    TEXT NOT NULL REFERENCES tokens(id),
    chain_id                    BIGINT NOT NULL REFERENCES chains(chain_id),
    settled_amount_asset        TEXT NOT NULL,
    settled_amount_usd          TEXT NOT NULL,
    tx_hash                     TEXT NOT NULL,
    tx_block_number             BIGINT NOT NULL,
    tx_timestamp                DATETIME NOT NULL,
    tx_sender_address           TEXT NOT NULL,
    tx_gas_used                 BIGINT NOT NULL,
    tx_total_cost               TEXT NOT NULL,
    tx_total_cost_usd_fractions BIGINT NOT NULL,
    tx_is_sponsored             BOOLEAN NOT NULL,
    processed_by                TEXT NOT NULL,
    created_at                  DATETIME NOT NULL
);

-- The balance ledger: append-only signed cents. A credit per settled payment and a debit per
-- withdrawal are unique, so a retry can never book the same money twice.
CREATE TABLE ledger_entries (
    id            TEXT PRIMARY KEY,
    merchant_id   TEXT NOT NULL REFERENCES merchants(id),
    kind          TEXT NOT NULL CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal')),
    amount_cents  BIGINT NOT NULL,
    payment_id    TEXT REFERENCES payments(id),
    withdrawal_id TEXT REFERENCES withdrawals(id),
    created_at    DATETIME NOT NULL
);
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id);
CREATE UNIQUE INDEX ledger_entries_payment_uq ON ledger_entries (kind, payment_id) WHERE payment_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_entries_withdrawal_uq ON ledger_entries (kind, withdrawal_id) WHERE withdrawal_id IS NOT NULL;

CREATE TABLE idempotency_keys (
    merchant_id   TEXT NOT NULL REFERENCES merchants(id),
    key           TEXT NOT NULL,
    operation     TEXT NOT NULL,
    request_hash  BLOB NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
    status_code   INTEGER,
    response_body BLOB,
    created_at    DATETIME NOT NULL,
    expires_at    DATETIME NOT NULL,
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
