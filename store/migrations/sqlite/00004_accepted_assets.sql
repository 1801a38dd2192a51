-- +goose Up
-- The (chain, token) pairs a merchant takes payments in. No rows for a merchant is the default:
-- every token the deployment serves, including tokens added to the catalogue later. A selection
-- is replaced as a whole, in one transaction.
CREATE TABLE merchant_accepted_assets (
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    token_id    TEXT NOT NULL REFERENCES tokens(id),
    PRIMARY KEY (merchant_id, token_id)
);

-- +goose Down
DROP TABLE merchant_accepted_assets;
