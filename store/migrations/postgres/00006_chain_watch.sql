-- +goose Up
-- The chain watcher (issue 9): a cursor per chain with the recent blocks' hashes (reorg checks),
-- every transfer seen to a deposit address keyed by (chain, tx hash, log index), what each
-- payment has received, and ledger credits per transfer for funds arriving outside a payment's
-- settlement (late, or after completion).

CREATE TABLE chain_cursors (
    chain_id     BIGINT PRIMARY KEY REFERENCES chains(chain_id),
    genesis_hash TEXT NOT NULL,
    block_number BIGINT NOT NULL,
    block_hash   TEXT NOT NULL,
    block_time   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE chain_blocks (
    chain_id    BIGINT NOT NULL REFERENCES chains(chain_id),
    number      BIGINT NOT NULL,
    hash        TEXT NOT NULL,
    parent_hash TEXT NOT NULL,
    PRIMARY KEY (chain_id, number)
);

CREATE TABLE transfers (
    id                 UUID PRIMARY KEY,
    chain_id           BIGINT NOT NULL REFERENCES chains(chain_id),
    tx_hash            TEXT NOT NULL,
    log_index          BIGINT NOT NULL, -- -1 for a native transfer
    block_number       BIGINT NOT NULL,
    block_hash         TEXT NOT NULL,
    block_time         TIMESTAMPTZ NOT NULL,
    token_id           TEXT NOT NULL REFERENCES tokens(id),
    from_address       TEXT NOT NULL,
    to_address         TEXT NOT NULL,
    amount             NUMERIC(78, 0) NOT NULL CHECK (amount > 0),
    deposit_address_id UUID NOT NULL REFERENCES deposit_addresses(id),
    payment_id         UUID REFERENCES payments(id),
    status             TEXT NOT NULL CHECK (status IN ('seen', 'confirmed', 'orphaned')),
    -- credited: the merchant's balance holds this transfer, by its payment's settlement or by a
    -- credit of its own (a transfer the settlement did not count).
    credited           BOOLEAN NOT NULL DEFAULT FALSE,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    UNIQUE (chain_id, tx_hash, log_index)
);
CREATE INDEX transfers_payment_idx ON transfers (payment_id);
CREATE INDEX transfers_seen_idx ON transfers (chain_id, block_number) WHERE status = 'seen';
CREATE INDEX transfers_unassigned_idx ON transfers (chain_id) WHERE payment_id IS NULL;
CREATE INDEX transfers_uncredited_idx ON transfers (chain_id) WHERE status = 'confirmed' AND NOT credited;

-- What a payment has received on the quote it is settling on: maintained by the lifecycle core
-- from the transfers, so a reader never joins them.
ALTER TABLE payments ADD COLUMN settling_quote_id UUID REFERENCES quotes(id);
ALTER TABLE payments ADD COLUMN received_amount_asset NUMERIC(78, 0);
ALTER TABLE payments ADD COLUMN confirmed_amount_asset NUMERIC(78, 0);
-- The watcher follows payments for a grace window after their expiry.
CREATE INDEX payments_expires_idx ON payments (expires_at);

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal', 'transfer_credit'));
ALTER TABLE ledger_entries ADD COLUMN transfer_id UUID REFERENCES transfers(id);
CREATE UNIQUE INDEX ledger_entries_transfer_uq ON ledger_entries (kind, transfer_id) WHERE transfer_id IS NOT NULL;

-- The embedded devnet (chain 1337) is always in the catalogue; it is served only when the devnet
-- runs in-process or has an RPC URL. Its tokens are deployed by a fixed key at nonces 0 and 1,
-- so their addresses never change (devnet/devnet.go).
INSERT INTO chains (chain_id, name, native_symbol, native_decimals, is_testnet, is_active, convenience_fee_cents, required_confirmations)
    VALUES (1337, 'Devnet', 'ETH', 18, TRUE, TRUE, 0, 2);
INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status) VALUES
    ('eip155:1337/slip44:60', 1337, 'ETH', 'ethereum', '0x0000000000000000000000000000000000000000', 18, 'volatile', 'native', 'active'),
    ('eip155:1337/erc20:0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008', 1337, 'USDC', 'usd-coin', '0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008', 6, 'stablecoin', 'erc20', 'active'),
    ('eip155:1337/erc20:0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb', 1337, 'USDT', 'tether', '0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb', 6, 'stablecoin', 'erc20', 'active');

-- Confirmation depths as DESIGN §10 sets them (the first seed had OP Mainnet at 20 and
-- Avalanche at 12). PAYMENTS_CONFIRMATIONS overrides them per deployment.
UPDATE chains SET required_confirmations = 10 WHERE chain_id = 10 AND required_confirmations = 20;
UPDATE chains SET required_confirmations = 3 WHERE chain_id = 43114 AND required_confirmations = 12;

-- +goose Down
UPDATE chains SET required_confirmations = 20 WHERE chain_id = 10 AND required_confirmations = 10;
UPDATE chains SET required_confirmations = 12 WHERE chain_id = 43114 AND required_confirmations = 3;
DROP INDEX ledger_entries_transfer_uq;
ALTER TABLE ledger_entries DROP COLUMN transfer_id;
DELETE FROM ledger_entries WHERE kind = 'transfer_credit';
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('payment_credit', 'withdrawal_debit', 'withdrawal_reversal'));
DROP INDEX payments_expires_idx;
ALTER TABLE payments DROP COLUMN confirmed_amount_asset;
ALTER TABLE payments DROP COLUMN received_amount_asset;
ALTER TABLE payments DROP COLUMN settling_quote_id;
DROP TABLE transfers;
DROP TABLE chain_blocks;
DROP TABLE chain_cursors;
DELETE FROM tokens WHERE chain_id = 1337;
DELETE FROM chains WHERE chain_id = 1337;
