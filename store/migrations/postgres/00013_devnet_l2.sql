-- +goose Up
-- The embedded devnet's second chain (issue 21), "Devnet L2", chain 31337: like chain 1337 (see
-- 00006) always in the catalogue and served only when it runs in-process or has an RPC URL. The
-- same fixed deployer deploys the same tokens at the same nonces on it, so they sit at the same
-- addresses as on 1337 (devnet/chains.go); a token is told apart by its chain.
INSERT INTO chains (chain_id, name, native_symbol, native_decimals, is_testnet, is_active, convenience_fee_cents, required_confirmations)
    VALUES (31337, 'Devnet L2', 'ETH', 18, TRUE, TRUE, 0, 2);
INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status) VALUES
    ('eip155:31337/slip44:60', 31337, 'ETH', 'ethereum', '0x0000000000000000000000000000000000000000', 18, 'volatile', 'native', 'active'),
    ('eip155:31337/erc20:0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008', 31337, 'USDC', 'usd-coin', '0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008', 6, 'stablecoin', 'erc20', 'active'),
    ('eip155:31337/erc20:0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb', 31337, 'USDT', 'tether', '0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb', 6, 'stablecoin', 'erc20', 'active');

-- +goose Down
DELETE FROM merchant_accepted_assets WHERE token_id IN (SELECT id FROM tokens WHERE chain_id = 31337);
DELETE FROM tokens WHERE chain_id = 31337;
DELETE FROM chains WHERE chain_id = 31337;
