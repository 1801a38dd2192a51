-- +goose Up
-- A transfer first recorded from a checkout page's report of its transaction (issue 24: the page
-- pays from a browser wallet and reports the hash; the server reads the transaction from the
-- chain at once) rather than by the watcher's scan. The watcher's later sight of it changes
-- nothing; the payment's receipt then says processedBy "frontend".
ALTER TABLE transfers ADD COLUMN reported BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE transfers DROP COLUMN reported;
