-- What reading one payment cannot avoid: the payment with its deposit address and its 21 quotes,
-- in one join (the key is cached for a second; only a completed payment has a receipt to read).
SELECT p.*, a.address, q.*
  FROM payments p
  JOIN deposit_addresses a ON a.id = p.deposit_address_id
  JOIN quotes q ON q.payment_id = p.id
 WHERE p.id = ':payment' AND p.merchant_id = ':merchant'
 ORDER BY q.created_at, q.id;
