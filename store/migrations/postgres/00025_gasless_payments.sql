-- +goose Up
-- USDC without gas (issue 24): a customer signs an EIP-3009 TransferWithAuthorization of the
-- quote's amount (plus a relay fee when the merchant passes the gas on) to the payment's deposit
-- address, and the hot wallet of the quote's chain submits it (transferWithAuthorization) through
-- the transaction manager. A row is stored once every check passed (status 'accepted'); the
-- payout manager signs the relay transaction and stores it with the row's move to 'submitted'
-- in one database transaction before broadcasting it (outgoing_tx_id); its receipt at the chain's
-- depth makes it 'relayed' or 'failed'. 'failed' also says why an accepted authorization was never
-- sent (expired, the payment paid another way, the nonce used meanwhile). The transfer itself is
-- recorded and settled by the watcher like any other.
--
-- fee_paid_by / fee_cents / fee_asset: who bears the relay's gas (the merchant's setting when the
-- authorization was accepted) and, when the buyer does, the relay fee in cents and in the token's
-- smallest unit included in value (0 when the merchant does).
CREATE TABLE gasless_authorizations (
    id             UUID PRIMARY KEY,
    payment_id     UUID NOT NULL REFERENCES payments(id),
    quote_id       UUID NOT NULL REFERENCES quotes(id),
    chain_id       BIGINT NOT NULL REFERENCES chains(chain_id),
    token_id       TEXT NOT NULL REFERENCES tokens(id),
    from_address   TEXT NOT NULL CHECK (from_address = lower(from_address)),
    to_address     TEXT NOT NULL CHECK (to_address = lower(to_address)),
    value          NUMERIC(78, 0) NOT NULL,
    valid_after    BIGINT NOT NULL,
    valid_before   BIGINT NOT NULL,
    nonce          TEXT NOT NULL CHECK (nonce = lower(nonce)),
    signature      TEXT NOT NULL,
    fee_paid_by    TEXT NOT NULL CHECK (fee_paid_by IN ('merchant', 'buyer')),
    fee_cents      BIGINT NOT NULL CHECK (fee_cents >= 0),
    fee_asset      NUMERIC(78, 0) NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('accepted', 'submitted', 'relayed', 'failed')),
    outgoing_tx_id UUID UNIQUE REFERENCES outgoing_txs(id),
    tx_hash        TEXT,
    error          TEXT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    -- An authorization's nonce is the token's, per signer: one row per (token, signer, nonce).
    UNIQUE (token_id, from_address, nonce)
);
CREATE INDEX gasless_authorizations_payment_idx ON gasless_authorizations (payment_id, created_at);
CREATE INDEX gasless_authorizations_accepted_idx ON gasless_authorizations (chain_id, created_at) WHERE status = 'accepted';

-- The merchant's setting: who bears a gasless payment's relay gas. 'merchant' (the default): the
-- customer signs the quote's amount and the relay's gas cost is charged to the merchant at
-- settlement; 'buyer': the chain's gasless fee is added to what the customer signs.
ALTER TABLE merchants ADD COLUMN gasless_fee_paid_by TEXT NOT NULL DEFAULT 'merchant'
    CHECK (gasless_fee_paid_by IN ('merchant', 'buyer'));

-- The relay fee a buyer pays on each chain when the merchant passes the gas on (catalogue data,
-- like the convenience fee).
ALTER TABLE chains ADD COLUMN gasless_fee_cents BIGINT NOT NULL DEFAULT 0 CHECK (gasless_fee_cents >= 0);

-- +goose Down
ALTER TABLE chains DROP COLUMN gasless_fee_cents;
ALTER TABLE merchants DROP COLUMN gasless_fee_paid_by;
DROP TABLE gasless_authorizations;
