package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"

	"github.com/paymentsd/paymentsd/domain"
)

// The chain and token catalogue is data: seeded here once (migration 2), editable afterwards.
// Contract addresses are the issuers' canonical lowercase deployments; native tokens use the
// zero address. USDC/USDT carry 18 decimals on BNB Smart Chain and 6 elsewhere.
type seedChain struct {
	id              int64
	name, symbol    string
	testnet         bool
	feeCents        int64
	confirmations   int32
	nativeMarketID  string
	stablecoinsByID map[string]string // symbol -> contract
	stableDecimals  int32
}

const zeroAddress = "0x0000000000000000000000000000000000000000"

var seedChains = []seedChain{
	{1, "Ethereum", "ETH", false, 150, 12, "ethereum", map[string]string{
		"USDC": "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USDT": "0xdac17f958d2ee523a2206206994597c13d831ec7"}, 6},
	{8453, "Base", "ETH", false, 5, 10, "ethereum", map[string]string{
		"USDC": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "USDT": "0xfde4c96c8593536e31f229ea8f37b2ada2699bb2"}, 6},
	{137, "Polygon", "POL", false, 5, 64, "polygon-ecosystem-token", map[string]string{
		"USDC": "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", "USDT": "0xc2132d05d31c914a87c6611c10748aeb04b58e8f"}, 6},
	{42161, "Arbitrum One", "ETH", false, 5, 20, "ethereum", map[string]string{
		"USDC": "0xaf88d065e77c8cc2239327c5edb3a432268e5831", "USDT": "0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9"}, 6},
	{10, "OP Mainnet", "ETH", false, 5, 20, "ethereum", map[string]string{
		"USDC": "0x0b2c639c533813f4aa9d7837caf62653d097ff85", "USDT": "0x94b008aa00579c1307b0ef2c499ad98a8ce58e58"}, 6},
	{56, "BNB Smart Chain", "BNB", false, 10, 15, "binancecoin", map[string]string{
		"USDC": "0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d", "USDT": "0x55d398326f99059ff775485246999027b3197955"}, 18},
	{43114, "Avalanche C-Chain", "AVAX", false, 10, 12, "avalanche-2", map[string]string{
		"USDC": "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e", "USDT": "0x9702230a8ea53601f5cd2dc00fdbc13d4df4a8c7"}, 6},
	{11155111, "Sepolia", "ETH", true, 0, 3, "ethereum", map[string]string{
		"USDC": "0x1c7d4b196cb0c7b01d743fbc6116a902379c7238"}, 6},
	{84532, "Base Sepolia", "ETH", true, 0, 3, "ethereum", map[string]string{
		"USDC": "0x036cbd53842c5426634e7929541ec2318f3dcf7e"}, 6},
}

var stableMarketIDs = map[string]string{"USDC": "usd-coin", "USDT": "tether"}

// NativeTokenID and ERC20TokenID build CAIP-19 asset ids, the token ids of this service.
func NativeTokenID(chainID int64) string { return fmt.Sprintf("eip155:%d/slip44:60", chainID) }

// ERC20TokenID is the CAIP-19 id of an ERC-20 token.
func ERC20TokenID(chainID int64, contract string) string {
	return fmt.Sprintf("eip155:%d/erc20:%s", chainID, strings.ToLower(contract))
}

func seedMigration(d Dialect) *goose.Migration {
	return goose.NewGoMigration(2, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		return seedCatalog(ctx, tx, d)
	}}, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range []string{"DELETE FROM tokens", "DELETE FROM chains"} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}})
}

func seedCatalog(ctx context.Context, tx *sql.Tx, d Dialect) error {
	ph := placeholders(d)
	insertChain := "INSERT INTO chains (chain_id, name, native_symbol, native_decimals, is_testnet, is_active, convenience_fee_cents, required_confirmations) VALUES (" + ph(8) + ")"
	insertToken := "INSERT INTO tokens (id, chain_id, symbol, market_api_id, contract_address, decimals, type, asset_type, status) VALUES (" + ph(9) + ")"
	for _, c := range seedChains {
		if _, err := tx.ExecContext(ctx, insertChain, c.id, c.name, c.symbol, 18, c.testnet, true, c.feeCents, c.confirmations); err != nil {
			return fmt.Errorf("seed chain %d: %w", c.id, err)
		}
		if _, err := tx.ExecContext(ctx, insertToken, NativeTokenID(c.id), c.id, c.symbol, c.nativeMarketID, zeroAddress, 18, string(domain.Volatile), string(domain.Native), string(domain.TokenActive)); err != nil {
			return fmt.Errorf("seed native token %d: %w", c.id, err)
		}
		for _, sym := range []string{"USDC", "USDT"} {
			contract, ok := c.stablecoinsByID[sym]
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, insertToken, ERC20TokenID(c.id, contract), c.id, sym, stableMarketIDs[sym], contract, c.stableDecimals, string(domain.Stablecoin), string(domain.ERC20), string(domain.TokenActive)); err != nil {
				return fmt.Errorf("seed %s on %d: %w", sym, c.id, err)
			}
		}
	}
	return nil
}

// placeholders returns a function producing n bind placeholders in the dialect's syntax.
func placeholders(d Dialect) func(n int) string {
	return func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			if d == Postgres {
				parts[i] = fmt.Sprintf("$%d", i+1)
			} else {
				parts[i] = "?"
			}
		}
		return strings.Join(parts, ", ")
	}
}
