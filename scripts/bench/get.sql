-- What reading one payment cannot avoid: the merchant behind the key, the payment, its deposit
-- address, its quotes and its receipt.
SELECT m.* FROM merchants m JOIN api_keys k ON k.merchant_id = m.id WHERE k.key_hash = sha256(':key'::bytea) AND k.revoked_at IS NULL;
SELECT * FROM payments WHERE id = ':payment' AND merchant_id = ':merchant';
SELECT * FROM deposit_addresses WHERE id = (SELECT deposit_address_id FROM payments WHERE id = ':payment');
SELECT * FROM quotes WHERE payment_id = ':payment' ORDER BY created_at, id;
SELECT * FROM payment_receipts WHERE payment_id = ':payment';
