-- What one page of 20 payments cannot avoid: the count, the page, and its quotes, addresses
-- and receipts.
SELECT count(*) FROM payments WHERE merchant_id = ':merchant';
SELECT * FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20;
SELECT * FROM quotes WHERE payment_id IN (SELECT id FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20) ORDER BY created_at, id;
SELECT * FROM deposit_addresses WHERE id IN (SELECT deposit_address_id FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20);
SELECT * FROM payment_receipts WHERE payment_id IN (SELECT id FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20);
