-- +goose Up
-- Sweeping (issue 10): funds received at deposit addresses are moved to the hot wallet by the
-- transaction manager. A sweep is one (chain, deposit address, token) consolidation: for an
-- ERC-20 it may first need a gas top-up from the hot wallet. The transfers it covers point at
-- it, so a transfer is swept once; a failed sweep lets them go for the next one.

CREATE TABLE sweeps (
    id           UUID PRIMARY KEY,
    chain_id     BIGINT NOT NULL REFERENCES chains(chain_id),
    address      TEXT NOT NULL,            -- the deposit address swept
    key_index    BIGINT NOT NULL,          -- its BIP-32 child index (the signing key)
    token_id     TEXT NOT NULL REFERENCES tokens(id),
    -- topping_up: a gas top-up is in flight; signed: the sweep transaction is; confirmed; failed
    -- (its transfers are free again); empty: the address held nothing (moved by other means).
    status       TEXT NOT NULL CHECK (status IN ('topping_up', 'signed', 'confirmed', 'failed', 'empty')),
    amount_asset NUMERIC(78, 0),                       -- what the sweep transaction moves, once signed
    topup_tx_id  UUID REFERENCES outgoing_txs(id),
    sweep_tx_id  UUID REFERENCES outgoing_txs(id),
    error        TEXT,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
-- One sweep in flight per deposit address: its tokens share one nonce sequence and one native
-- balance for gas, so a second sweep signed beside the first could never be paid for.
CREATE UNIQUE INDEX sweeps_open_idx ON sweeps (chain_id, address) WHERE status IN ('topping_up', 'signed');

ALTER TABLE transfers ADD COLUMN sweep_id UUID REFERENCES sweeps(id);
CREATE INDEX transfers_sweep_idx ON transfers (sweep_id) WHERE sweep_id IS NOT NULL;
CREATE INDEX transfers_unswept_idx ON transfers (chain_id, to_address, token_id) WHERE status = 'confirmed' AND sweep_id IS NULL;

-- The signing key of a sender that is a deposit address (its child index); NULL: the hot wallet.
ALTER TABLE outgoing_txs ADD COLUMN key_index BIGINT;

-- The genesis of the chain a nonce was counted on and a transaction signed for. A development
-- chain restarted from a new genesis is another chain: its nonces start over, and what was in
-- flight on the old one can never be mined. NULL (rows from before): the chain as it is now.
-- So a nonce is unique per (chain, sender, genesis); the transaction manager fills in NULL when it
-- next takes a nonce for that sender.
ALTER TABLE tx_nonces ADD COLUMN genesis_hash TEXT;
ALTER TABLE outgoing_txs ADD COLUMN genesis_hash TEXT;
ALTER TABLE outgoing_txs DROP CONSTRAINT outgoing_txs_chain_id_sender_nonce_key;
CREATE UNIQUE INDEX outgoing_txs_nonce_idx ON outgoing_txs (chain_id, sender, COALESCE(genesis_hash, ''), nonce);

-- Sweeps asked for by an operator (paymentsd sweep): a worker runs one regardless of the
-- threshold and marks the request done.
CREATE TABLE sweep_requests (
    id           UUID PRIMARY KEY,
    chain_id     BIGINT NOT NULL REFERENCES chains(chain_id),
    created_at   TIMESTAMPTZ NOT NULL,
    started_at   TIMESTAMPTZ,
    done_at      TIMESTAMPTZ,
    result       TEXT
);
CREATE INDEX sweep_requests_open_idx ON sweep_requests (chain_id) WHERE done_at IS NULL;

-- +goose Down
DROP TABLE sweep_requests;
DROP INDEX outgoing_txs_nonce_idx;
ALTER TABLE outgoing_txs DROP COLUMN genesis_hash;
ALTER TABLE outgoing_txs ADD CONSTRAINT outgoing_txs_chain_id_sender_nonce_key UNIQUE (chain_id, sender, nonce);
ALTER TABLE tx_nonces DROP COLUMN genesis_hash;
ALTER TABLE outgoing_txs DROP COLUMN key_index;
DROP INDEX transfers_unswept_idx;
DROP INDEX transfers_sweep_idx;
ALTER TABLE transfers DROP COLUMN sweep_id;
DROP TABLE sweeps;
