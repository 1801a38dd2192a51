-- +goose Up
-- Sign-in and sessions (issue 22): a user's second factor (TOTP, its secret sealed with
-- PAYMENTS_SECRETS_KEY; the last time step used, so a code is accepted once), single-use
-- recovery codes (hashes only), sign-in failures (the throttle, in the database so every
-- `serve` process shares it; a completed sign-in clears an account's for the account, never
-- for the address), second-factor challenges (hash of a single-use token), sessions (hash of
-- the current refresh token and of the one before it, for two tabs refreshing at once),
-- and the merchant setting that requires a second factor of its team.
ALTER TABLE users ADD COLUMN totp_secret_sealed TEXT;          -- confirmed: the second factor
ALTER TABLE users ADD COLUMN totp_pending_sealed TEXT;         -- enrolled, not yet confirmed
ALTER TABLE users ADD COLUMN totp_enabled_at TIMESTAMPTZ;
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
ALTER TABLE merchants ADD COLUMN require_2fa BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE recovery_codes (
    id         UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users(id),
    code_hash  TEXT NOT NULL,
    used_at    TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, code_hash)
);

CREATE TABLE login_failures (
    id          UUID PRIMARY KEY,
    account     TEXT NOT NULL,        -- the lowercased email tried (known or not)
    client_addr TEXT NOT NULL,
    cleared     BOOLEAN NOT NULL DEFAULT false, -- a full sign-in since: counts for the address only
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX login_failures_account_idx ON login_failures (account, at);
CREATE INDEX login_failures_addr_idx ON login_failures (client_addr, at);
CREATE INDEX login_failures_at_idx ON login_failures (at);

CREATE TABLE login_challenges (
    id         UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users(id),
    token_hash TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);

CREATE TABLE sessions (
    id                  UUID PRIMARY KEY,
    user_id             UUID NOT NULL REFERENCES users(id),
    refresh_token_hash  TEXT NOT NULL UNIQUE,
    previous_token_hash TEXT,                -- the token rotated away last (two tabs: 10 s grace)
    rotated_at          TIMESTAMPTZ,
    mode                TEXT NOT NULL DEFAULT 'test' CHECK (mode IN ('test', 'live')),
    created_at          TIMESTAMPTZ NOT NULL,
    last_used_at        TIMESTAMPTZ NOT NULL,
    expires_at          TIMESTAMPTZ NOT NULL, -- absolute (30 days); idle expiry is last_used_at + 7 days
    revoked_at          TIMESTAMPTZ,
    second_factor_at    TIMESTAMPTZ,
    ip                  TEXT NOT NULL DEFAULT '',
    user_agent          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- +goose Down
DROP INDEX sessions_user_idx;
DROP TABLE sessions;
DROP TABLE login_challenges;
DROP INDEX login_failures_at_idx;
DROP INDEX login_failures_addr_idx;
DROP INDEX login_failures_account_idx;
DROP TABLE login_failures;
DROP TABLE recovery_codes;
ALTER TABLE merchants DROP COLUMN require_2fa;
ALTER TABLE users DROP COLUMN totp_last_step;
ALTER TABLE users DROP COLUMN totp_enabled_at;
ALTER TABLE users DROP COLUMN totp_pending_sealed;
ALTER TABLE users DROP COLUMN totp_secret_sealed;
