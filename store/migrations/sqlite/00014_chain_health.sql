-- +goose Up
-- Each chain's health as a worker process sees it (its RPC answering, on the right chain id),
-- published for the processes that run no chain client (serve --role api): they leave a chain
-- that is down out of new quotes too.
CREATE TABLE chain_health (
    chain_id   BIGINT PRIMARY KEY,
    state      TEXT NOT NULL,
    serving    BOOLEAN NOT NULL,
    updated_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE chain_health;
