-- +goose Up
-- Live and test modes (issue 20). Every chain is live (a mainnet) or test (a testnet or the
-- devnet: chains.is_testnet); a secret key, a dashboard token and every money object belongs to
-- one mode, and a request acts only in its credential's mode. Ledger entries are booked in the
-- mode of the chain the money moved on, so a test credit can never fund a live payout.
--
-- Rows written before modes existed: keys keep the mode their prefix says; a withdrawal, a
-- ledger entry and a settled payment take the mode of their chain; an unsettled payment is live
-- when it quoted any live chain (its key was a live key then), else test.
ALTER TABLE api_keys ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE api_keys SET livemode = (prefix LIKE 'sk\_live\_%');

ALTER TABLE payments ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE payments p SET livemode = COALESCE(
    (SELECT NOT c.is_testnet FROM payment_receipts r JOIN chains c ON c.chain_id = r.chain_id WHERE r.payment_id = p.id),
    (SELECT NOT c.is_testnet FROM quotes q JOIN chains c ON c.chain_id = q.chain_id WHERE q.id = p.settling_quote_id),
    EXISTS (SELECT 1 FROM quotes q JOIN chains c ON c.chain_id = q.chain_id WHERE q.payment_id = p.id AND NOT c.is_testnet));

ALTER TABLE withdrawals ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE withdrawals w SET livemode = (SELECT NOT c.is_testnet FROM chains c WHERE c.chain_id = w.chain_id);

ALTER TABLE ledger_entries ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE ledger_entries e SET livemode = COALESCE(
    (SELECT NOT c.is_testnet FROM withdrawals w JOIN chains c ON c.chain_id = w.chain_id WHERE w.id = e.withdrawal_id),
    (SELECT NOT c.is_testnet FROM transfers t JOIN chains c ON c.chain_id = t.chain_id WHERE t.id = e.transfer_id),
    (SELECT NOT c.is_testnet FROM payment_receipts r JOIN chains c ON c.chain_id = r.chain_id WHERE r.payment_id = e.payment_id),
    (SELECT NOT c.is_testnet FROM payments p JOIN quotes q ON q.id = p.settling_quote_id JOIN chains c ON c.chain_id = q.chain_id
        WHERE p.id = e.payment_id),
    (SELECT p.livemode FROM payments p WHERE p.id = e.payment_id),
    FALSE);
DROP INDEX ledger_entries_merchant_idx;
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id, livemode);

-- A customer's reusable deposit address is per mode.
ALTER TABLE deposit_addresses ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE deposit_addresses a SET livemode = COALESCE(
    (SELECT bool_or(p.livemode) FROM payments p WHERE p.deposit_address_id = a.id), TRUE);
DROP INDEX deposit_addresses_customer_idx;
CREATE UNIQUE INDEX deposit_addresses_customer_idx ON deposit_addresses (merchant_id, livemode, customer_ref_id)
    WHERE customer_ref_id IS NOT NULL;

-- Webhook endpoints receive the events of their own mode only (an event's is its object's). An
-- existing endpoint served its merchant's keys: live when the merchant has a live key, else
-- test (a deployment that ran on testnets only made sk_test_ keys).
ALTER TABLE webhook_endpoints ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE webhook_endpoints SET livemode = EXISTS (SELECT 1 FROM api_keys k WHERE k.merchant_id = webhook_endpoints.merchant_id AND k.livemode);
ALTER TABLE events ADD COLUMN livemode BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE events SET livemode = COALESCE(
    (SELECT p.livemode FROM payments p WHERE p.id = events.entity_id),
    (SELECT w.livemode FROM withdrawals w WHERE w.id = events.entity_id),
    FALSE);

-- Idempotency-Keys are scoped per mode: a test key's are stored as "test <key>". Keys a merchant
-- with test keys only sent before (its requests were test requests) move there, so a retry
-- spanning the upgrade still finds its answer; operators' keys (cli:…) are not a mode's.
UPDATE idempotency_keys SET key = 'test ' || key
WHERE operation NOT LIKE 'cli:%'
  AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.merchant_id = idempotency_keys.merchant_id AND k.livemode);

-- Every list filter and sort stays served by a merchant-and-mode-leading index.
DROP INDEX payments_merchant_created_idx;
DROP INDEX payments_merchant_amount_idx;
DROP INDEX payments_merchant_status_created_idx;
DROP INDEX payments_merchant_type_created_idx;
CREATE INDEX payments_merchant_created_idx ON payments (merchant_id, livemode, created_at DESC, id DESC);
CREATE INDEX payments_merchant_amount_idx ON payments (merchant_id, livemode, amount_in_cents, id);
CREATE INDEX payments_merchant_status_created_idx ON payments (merchant_id, livemode, status, created_at DESC);
CREATE INDEX payments_merchant_type_created_idx ON payments (merchant_id, livemode, type, created_at DESC);
DROP INDEX withdrawals_merchant_created_idx;
DROP INDEX withdrawals_merchant_status_created_idx;
CREATE INDEX withdrawals_merchant_created_idx ON withdrawals (merchant_id, livemode, created_at DESC, id DESC);
CREATE INDEX withdrawals_merchant_status_created_idx ON withdrawals (merchant_id, livemode, status, created_at DESC);

-- The balance lock: one row per merchant and mode, locked by every change of that balance that
-- must see it (withdrawal creation), so test traffic never waits on live traffic and the other
-- way round.
CREATE TABLE balance_locks (
    merchant_id UUID NOT NULL REFERENCES merchants(id),
    livemode    BOOLEAN NOT NULL,
    PRIMARY KEY (merchant_id, livemode)
);
INSERT INTO balance_locks (merchant_id, livemode) SELECT id, TRUE FROM merchants;
INSERT INTO balance_locks (merchant_id, livemode) SELECT id, FALSE FROM merchants;

-- +goose Down
DROP TABLE balance_locks;
DROP INDEX withdrawals_merchant_created_idx;
DROP INDEX withdrawals_merchant_status_created_idx;
CREATE INDEX withdrawals_merchant_created_idx ON withdrawals (merchant_id, created_at DESC, id DESC);
CREATE INDEX withdrawals_merchant_status_created_idx ON withdrawals (merchant_id, status, created_at DESC);
DROP INDEX payments_merchant_created_idx;
DROP INDEX payments_merchant_amount_idx;
DROP INDEX payments_merchant_status_created_idx;
DROP INDEX payments_merchant_type_created_idx;
CREATE INDEX payments_merchant_created_idx ON payments (merchant_id, created_at DESC, id DESC);
CREATE INDEX payments_merchant_amount_idx ON payments (merchant_id, amount_in_cents, id);
CREATE INDEX payments_merchant_status_created_idx ON payments (merchant_id, status, created_at DESC);
CREATE INDEX payments_merchant_type_created_idx ON payments (merchant_id, type, created_at DESC);
UPDATE idempotency_keys SET key = substr(key, 6) WHERE key LIKE 'test %';
ALTER TABLE events DROP COLUMN livemode;
ALTER TABLE webhook_endpoints DROP COLUMN livemode;
DROP INDEX deposit_addresses_customer_idx;
ALTER TABLE deposit_addresses DROP COLUMN livemode;
CREATE UNIQUE INDEX deposit_addresses_customer_idx ON deposit_addresses (merchant_id, customer_ref_id)
    WHERE customer_ref_id IS NOT NULL;
DROP INDEX ledger_entries_merchant_idx;
ALTER TABLE ledger_entries DROP COLUMN livemode;
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id);
ALTER TABLE withdrawals DROP COLUMN livemode;
ALTER TABLE payments DROP COLUMN livemode;
ALTER TABLE api_keys DROP COLUMN livemode;
