-- +goose Up
-- The hosted checkout (issue 12): the quote the customer chose on the payment page. The others
-- stay payable until they expire; this only tells the page what to show.
ALTER TABLE payments ADD COLUMN selected_quote_id TEXT REFERENCES quotes(id);

-- +goose Down
ALTER TABLE payments DROP COLUMN selected_quote_id;
