-- +goose Up
-- The dashboard's token issuer (issue 13): Ed25519 signing keys, the private half sealed with
-- PAYMENTS_SECRETS_KEY (never in the clear), the public half published at
-- /.well-known/jwks.json. The newest key signs; a retired key stays published until every token
-- it signed has expired.
CREATE TABLE signing_keys (
    kid            TEXT PRIMARY KEY,
    private_sealed TEXT NOT NULL,
    public_key     TEXT NOT NULL,        -- base64url of the 32-byte Ed25519 public key
    created_at     DATETIME NOT NULL,
    retired_at     DATETIME                    -- no longer signs; published until retired_at + the longest TTL
);

-- +goose Down
DROP TABLE signing_keys;
