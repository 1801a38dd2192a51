-- +goose Up
-- Passkeys (issue 22): WebAuthn credentials, a second factor after the password. A passkey's
-- credential id is unique across users (an authenticator's id names one credential); the public
-- key is the COSE key as registered; sign_count is the authenticator's counter (a value not above
-- the stored one, unless both are 0, is a cloned authenticator and refused); flags keep the
-- backup-eligible bit the assertion is checked against.
CREATE TABLE passkeys (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES users(id),
    credential_id    BLOB NOT NULL UNIQUE,
    public_key       BLOB NOT NULL,
    sign_count       BIGINT NOT NULL DEFAULT 0,
    aaguid           TEXT NOT NULL,
    transports       TEXT NOT NULL DEFAULT '',   -- comma-separated (usb, nfc, ble, internal, hybrid)
    attestation_type TEXT NOT NULL DEFAULT '',
    flags            INTEGER NOT NULL DEFAULT 0,  -- the authenticator data flags at registration
    name             TEXT NOT NULL,
    created_at       DATETIME NOT NULL,
    last_used_at     DATETIME
);
CREATE INDEX passkeys_user_idx ON passkeys (user_id);

-- The single-use ceremonies (a registration, sign-in or step-up begun, not yet finished): in the
-- database so one `serve` process begins and another finishes. challenge is the base64url
-- challenge sent to the browser (it comes back in clientDataJSON); session the go-webauthn
-- session data (JSON); bound_to the password step's challenge a sign-in ceremony continues, or
-- the session a step-up ceremony belongs to.
CREATE TABLE webauthn_ceremonies (
    id                 TEXT PRIMARY KEY,
    challenge          TEXT NOT NULL UNIQUE,
    user_id            TEXT NOT NULL REFERENCES users(id),
    kind               TEXT NOT NULL CHECK (kind IN ('register', 'login')),
    session            TEXT NOT NULL,
    bound_to           TEXT,
    created_at         DATETIME NOT NULL,
    expires_at         DATETIME NOT NULL,
    used_at            DATETIME
);
CREATE INDEX webauthn_ceremonies_expires_idx ON webauthn_ceremonies (expires_at);

-- Sign-ins with the OIDC provider begun (authorization code + PKCE): the browser holds the state
-- in a cookie, the database its hash with the nonce and the PKCE verifier, spent once.
CREATE TABLE oidc_logins (
    id            TEXT PRIMARY KEY,
    state_hash    TEXT NOT NULL UNIQUE,
    nonce         TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at    DATETIME NOT NULL,
    expires_at    DATETIME NOT NULL,
    used_at       DATETIME
);
CREATE INDEX oidc_logins_expires_idx ON oidc_logins (expires_at);

-- +goose Down
DROP INDEX oidc_logins_expires_idx;
DROP TABLE oidc_logins;
DROP INDEX webauthn_ceremonies_expires_idx;
DROP TABLE webauthn_ceremonies;
DROP INDEX passkeys_user_idx;
DROP TABLE passkeys;
