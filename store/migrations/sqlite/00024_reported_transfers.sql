-- +goose Up
-- A transfer whose transaction a checkout page reported (issue 24: the page pays from a browser
-- wallet and reports the hash) and the server read from the chain on that report, whether the
-- watcher's scan had recorded it yet or not. A payment completed by such a transfer has a receipt
-- with processedBy "frontend".
ALTER TABLE transfers ADD COLUMN reported BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE transfers DROP COLUMN reported;
