-- +goose Up
-- At most one authorization per payment in flight (accepted or submitted): without this a
-- customer who signed twice (a double click, or a reload and a second signature) had both
-- relayed and paid twice (review of issue 24). The checkout refuses a second one (409
-- gasless_in_progress) and this index holds the line when two arrive at once; the store turns
-- its violation into that refusal.
--
-- A database that already holds a second one waiting ('accepted') fails the newer ones: nothing
-- was sent for them, and the customer's first authorization still pays. Two already 'submitted'
-- for one payment (both sent) cannot be undone here and stop the migration: let their relays
-- finish (a few blocks), then start again.
UPDATE gasless_authorizations SET status = 'failed', updated_at = now(),
    error = 'another signed payment for this payment was already being relayed: not sent, nothing was taken'
WHERE status = 'accepted' AND EXISTS (
    SELECT 1 FROM gasless_authorizations o
    WHERE o.payment_id = gasless_authorizations.payment_id AND o.status IN ('accepted', 'submitted')
      AND (o.status = 'submitted' OR o.created_at < gasless_authorizations.created_at
           OR (o.created_at = gasless_authorizations.created_at AND o.id < gasless_authorizations.id)));
CREATE UNIQUE INDEX gasless_authorizations_in_flight_idx ON gasless_authorizations (payment_id)
    WHERE status IN ('accepted', 'submitted');

-- +goose Down
DROP INDEX gasless_authorizations_in_flight_idx;
