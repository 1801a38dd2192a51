-- +goose Up
-- The transaction manager (issue 10, DESIGN §11). Per (chain, sender) the next nonce is kept
-- here, not asked of a node: a nonce is used by exactly one logical transaction, signed in the
-- same database transaction that takes it. Each logical transaction keeps every signed attempt
-- (raw bytes, hash, fees), stored before it is broadcast: any of them may be the one mined.

CREATE TABLE tx_nonces (
    chain_id   BIGINT NOT NULL REFERENCES chains(chain_id),
    sender     TEXT NOT NULL,
    next_nonce BIGINT NOT NULL,
    PRIMARY KEY (chain_id, sender)
);

CREATE TABLE outgoing_txs (
    id            UUID PRIMARY KEY,
    chain_id      BIGINT NOT NULL REFERENCES chains(chain_id),
    sender        TEXT NOT NULL,
    nonce         BIGINT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('payout', 'sweep', 'gas_topup', 'nonce_fill')),
    withdrawal_id UUID UNIQUE REFERENCES withdrawals(id),
    token_id      TEXT NOT NULL REFERENCES tokens(id),
    recipient     TEXT NOT NULL,          -- who receives the token
    amount_asset  NUMERIC(78, 0) NOT NULL,            -- in the token's smallest unit
    rate_usd      TEXT NOT NULL,          -- the token's USD price the amount was computed at
    tx_to         TEXT NOT NULL,          -- the transaction's to (the token contract for an ERC-20)
    tx_value      NUMERIC(78, 0) NOT NULL,            -- wei sent
    tx_data       TEXT NOT NULL,          -- hex calldata
    gas_limit     BIGINT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('signed', 'mined', 'confirmed', 'failed', 'conflict')),
    mined_hash    TEXT,
    mined_block   BIGINT,
    mined_block_hash TEXT,
    error         TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (chain_id, sender, nonce)
);
CREATE INDEX outgoing_txs_open_idx ON outgoing_txs (chain_id, nonce) WHERE status IN ('signed', 'mined', 'conflict');

CREATE TABLE tx_attempts (
    id             UUID PRIMARY KEY,
    outgoing_tx_id UUID NOT NULL REFERENCES outgoing_txs(id),
    hash           TEXT NOT NULL UNIQUE,
    raw            TEXT NOT NULL,         -- the signed transaction, hex: resent as is
    tip_cap        NUMERIC(78, 0) NOT NULL,
    fee_cap        NUMERIC(78, 0) NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    broadcast_at   TIMESTAMPTZ,
    last_error     TEXT
);
CREATE INDEX tx_attempts_tx_idx ON tx_attempts (outgoing_tx_id, created_at);

-- +goose Down
DROP TABLE tx_attempts;
DROP TABLE outgoing_txs;
DROP TABLE tx_nonces;
