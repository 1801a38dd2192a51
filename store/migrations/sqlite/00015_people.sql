-- +goose Up
-- The people of the dashboard: users (email and an argon2id password hash), the merchants each
-- acts for with a role, and single-use invitations (only a hash of the link's token is kept).
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    disabled_at   DATETIME,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);

CREATE TABLE memberships (
    user_id     TEXT NOT NULL REFERENCES users(id),
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'developer', 'admin', 'owner')),
    created_at  DATETIME NOT NULL,
    PRIMARY KEY (user_id, merchant_id)
);
CREATE INDEX memberships_merchant_idx ON memberships (merchant_id);

CREATE TABLE invitations (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    email       TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'developer', 'admin', 'owner')),
    token_hash  TEXT NOT NULL UNIQUE,
    expires_at  DATETIME NOT NULL,
    used_at     DATETIME,
    created_at  DATETIME NOT NULL
);

-- +goose Down
DROP TABLE invitations;
DROP INDEX memberships_merchant_idx;
DROP TABLE memberships;
DROP TABLE users;
