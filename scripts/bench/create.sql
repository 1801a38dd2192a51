-- What creating one payment cannot avoid: the idempotency key, a deposit address, the payment,
-- its 21 quotes (7 mainnet chains x native/USDC/USDT) in one statement, its event with a
-- snapshot of the same size, and the sealed response (~20 KB), in one transaction.
\set amount random(400, 5400)
BEGIN;
SELECT gen_random_uuid() AS pid, gen_random_uuid() AS aid, nextval('bench_index') AS idx \gset
INSERT INTO idempotency_keys (merchant_id, key, operation, request_hash, state, created_at, expires_at)
  VALUES (':merchant', 'pgb-' || ':pid', '/v1/external/secretkey-auth/payments', sha256(':pid'::bytea), 'done', now(), now() + interval '1 day');
INSERT INTO deposit_addresses (id, merchant_id, payment_id, derivation_index, address, created_at)
  VALUES (':aid', ':merchant', ':pid', :idx, '0x' || lpad(to_hex(:idx), 40, '0'), now());
INSERT INTO payments (id, merchant_id, type, amount_in_cents, amount_due_cents, amount_merchant_net_cents, currency,
  status, order_id, secret_hash, deposit_address_id, expires_at, created_at, updated_at, version)
  VALUES (':pid', ':merchant', 'payment', :amount, :amount + 5, :amount, 'USD', 'pending', 'pgb', sha256(':aid'::bytea),
  ':aid', now() + interval '1 day', now(), now(), 1);
INSERT INTO quotes (id, payment_id, token_id, chain_id, expected_amount_asset, rate_usd_asset, amount_due_cents,
  convenience_fee_cents, expires_at, status, created_at)
  SELECT gen_random_uuid(), ':pid', t.id, t.chain_id, 123456789, 1, :amount + 5, 5, now() + interval '15 minutes', 'active', now()
  FROM tokens t JOIN chains c ON c.chain_id = t.chain_id WHERE NOT c.is_testnet ORDER BY t.chain_id, t.id;
INSERT INTO events (id, type, entity, entity_id, merchant_id, sequence, payload, created_at)
  VALUES ('evt_' || replace(gen_random_uuid()::text, '-', ''), 'payment.created', 'payment', ':pid', ':merchant', 1,
  jsonb_build_object('id', ':pid', 'pad', repeat('x', 6000)), now());
UPDATE idempotency_keys SET status_code = 201, response_body = convert_to(repeat('y', 20000), 'UTF8')
  WHERE merchant_id = ':merchant' AND key = 'pgb-' || ':pid';
COMMIT;
