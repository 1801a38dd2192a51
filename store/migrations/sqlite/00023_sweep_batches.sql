-- +goose Up
-- Sweeping without gas top-ups (issue 24): a deposit address holding a token is swept by a
-- signature of its own key (an EIP-3009 authorization, an EIP-2612 permit, or an EIP-7702
-- delegation to the sweeper's contract), many addresses in one transaction the hot wallet sends
-- to the SweepBatch contract. Such a batch is an ordinary outgoing transaction of the hot wallet
-- (kind 'sweep'); each sweep it carries points at it (sweeps.sweep_tx_id, shared), and its
-- outcome is read per sweep from the token's Transfer logs in its receipt.
--
-- auth_list: the EIP-7702 authorizations (JSON, as go-ethereum encodes them) of a SetCode
-- transaction, signed by the delegating deposit keys before the transaction itself. They are
-- part of every attempt's signed bytes, so a fee bump signs the same list again. NULL for every
-- other transaction.
ALTER TABLE outgoing_txs ADD COLUMN auth_list TEXT;

-- +goose Down
ALTER TABLE outgoing_txs DROP COLUMN auth_list;
