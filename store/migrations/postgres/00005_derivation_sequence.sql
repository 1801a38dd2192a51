-- +goose Up
-- Deposit-address indexes come from a sequence: the counter row serialised every payment
-- creation (its row lock was held until each create committed). A sequence never blocks; the
-- gaps a rolled-back create leaves are harmless (addresses are watched from the database, not
-- by scanning indexes). SQLite keeps the counter row: it has one writer anyway.
CREATE SEQUENCE deposit_derivation_index_seq MINVALUE 0;
SELECT setval('deposit_derivation_index_seq',
    GREATEST((SELECT next_index FROM address_counters WHERE name = 'deposit'),
             (SELECT COALESCE(MAX(derivation_index) + 1, 0) FROM deposit_addresses)),
    false);

-- +goose Down
UPDATE address_counters SET next_index = GREATEST(next_index,
    (SELECT COALESCE(MAX(derivation_index) + 1, 0) FROM deposit_addresses)) WHERE name = 'deposit';
DROP SEQUENCE deposit_derivation_index_seq;
