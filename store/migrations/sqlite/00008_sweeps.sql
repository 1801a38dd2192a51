-- +goose NO TRANSACTION
-- +goose Up
-- (Not in goose's transaction: SQLite cannot drop outgoing_txs' inline UNIQUE (chain_id, sender,
-- nonce) without rebuilding the table, and a rebuild needs foreign keys off, which only takes
-- effect outside a transaction. The rebuild itself runs in one.)
PRAGMA foreign_keys = OFF;
BEGIN;
-- Sweeping (issue 10): funds received at deposit addresses are moved to the hot wallet by the
-- transaction manager. A sweep is one (chain, deposit address, token) consolidation: for an
-- ERC-20 it may first need a gas top-up from the hot wallet. The transfers it covers point at
-- it, so a transfer is swept once; a failed sweep lets them go for the next one.

CREATE TABLE sweeps (
    id           TEXT PRIMARY KEY,
    chain_id     BIGINT NOT NULL REFERENCES chains(chain_id),
    address      TEXT NOT NULL,            -- the deposit address swept
    key_index    BIGINT NOT NULL,          -- its BIP-32 child index (the signing key)
    token_id     TEXT NOT NULL REFERENCES tokens(id),
    -- topping_up: a gas top-up is in flight; signed: the sweep transaction is; confirmed; failed
    -- (its transfers are free again); empty: the address held nothing (moved by other means).
    status       TEXT NOT NULL CHECK (status IN ('topping_up', 'signed', 'confirmed', 'failed', 'empty')),
    amount_asset TEXT,                       -- what the sweep transaction moves, once signed
    topup_tx_id  TEXT REFERENCES outgoing_txs(id),
    sweep_tx_id  TEXT REFERENCES outgoing_txs(id),
    error        TEXT,
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL
);
-- One sweep in flight per deposit address: its tokens share one nonce sequence and one native
-- balance for gas, so a second sweep signed beside the first could never be paid for.
CREATE UNIQUE INDEX sweeps_open_idx ON sweeps (chain_id, address) WHERE status IN ('topping_up', 'signed');

ALTER TABLE transfers ADD COLUMN sweep_id TEXT REFERENCES sweeps(id);
CREATE INDEX transfers_sweep_idx ON transfers (sweep_id) WHERE sweep_id IS NOT NULL;
CREATE INDEX transfers_unswept_idx ON transfers (chain_id, to_address, token_id) WHERE status = 'confirmed' AND sweep_id IS NULL;

-- outgoing_txs gains key_index (the signing key of a sender that is a deposit address: its child
-- index; NULL: the hot wallet) and genesis_hash (the genesis of the chain it was signed for). A
-- development chain restarted from a new genesis is another chain: its nonces start over, so a
-- nonce is unique per (chain, sender, genesis). NULL (rows from before): the chain as it is now;
-- the transaction manager fills it in when it next takes a nonce for that sender.
ALTER TABLE tx_nonces ADD COLUMN genesis_hash TEXT;
CREATE TABLE outgoing_txs_new (
    id            TEXT PRIMARY KEY,
    chain_id      BIGINT NOT NULL REFERENCES chains(chain_id),
    sender        TEXT NOT NULL,
    nonce         BIGINT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('payout', 'sweep', 'gas_topup', 'nonce_fill')),
    withdrawal_id TEXT UNIQUE REFERENCES withdrawals(id),
    token_id      TEXT NOT NULL REFERENCES tokens(id),
    recipient     TEXT NOT NULL,
    amount_asset  TEXT NOT NULL,
    rate_usd      TEXT NOT NULL,
    tx_to         TEXT NOT NULL,
    tx_value      TEXT NOT NULL,
    tx_data       TEXT NOT NULL,
    gas_limit     BIGINT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('signed', 'mined', 'confirmed', 'failed', 'conflict')),
    mined_hash    TEXT,
    mined_block   BIGINT,
    mined_block_hash TEXT,
    error         TEXT,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL,
    key_index     BIGINT,
    genesis_hash  TEXT
);
INSERT INTO outgoing_txs_new (id, chain_id, sender, nonce, kind, withdrawal_id, token_id, recipient, amount_asset, rate_usd,
    tx_to, tx_value, tx_data, gas_limit, status, mined_hash, mined_block, mined_block_hash, error, created_at, updated_at)
    SELECT id, chain_id, sender, nonce, kind, withdrawal_id, token_id, recipient, amount_asset, rate_usd,
    tx_to, tx_value, tx_data, gas_limit, status, mined_hash, mined_block, mined_block_hash, error, created_at, updated_at
    FROM outgoing_txs;
DROP TABLE outgoing_txs;
ALTER TABLE outgoing_txs_new RENAME TO outgoing_txs;
CREATE INDEX outgoing_txs_open_idx ON outgoing_txs (chain_id, nonce) WHERE status IN ('signed', 'mined', 'conflict');
CREATE UNIQUE INDEX outgoing_txs_nonce_idx ON outgoing_txs (chain_id, sender, COALESCE(genesis_hash, ''), nonce);

-- Sweeps asked for by an operator (paymentsd sweep): a worker runs one regardless of the
-- threshold and marks the request done.
CREATE TABLE sweep_requests (
    id           TEXT PRIMARY KEY,
    chain_id     BIGINT NOT NULL REFERENCES chains(chain_id),
    created_at   DATETIME NOT NULL,
    started_at   DATETIME,
    done_at      DATETIME,
    result       TEXT
);
CREATE INDEX sweep_requests_open_idx ON sweep_requests (chain_id) WHERE done_at IS NULL;

COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Not reversible on SQLite without another rebuild; restore from a backup to go back.
SELECT 1;
