-- What one page of 20 payments cannot avoid, as the API reads it: the count, the page, then the
-- page's quotes and deposit addresses by id (ANY(ARRAY(…)) evaluates the page once, as the API's
-- literal id lists do; receipts are read only for completed payments, and none are).
SELECT count(*) FROM payments WHERE merchant_id = ':merchant';
SELECT * FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20;
SELECT * FROM quotes WHERE payment_id = ANY(ARRAY(SELECT id FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20)) ORDER BY created_at, id;
SELECT * FROM deposit_addresses WHERE id = ANY(ARRAY(SELECT deposit_address_id FROM payments WHERE merchant_id = ':merchant' ORDER BY created_at DESC, id DESC LIMIT 20));
