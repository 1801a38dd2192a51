package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/catalog"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
)

func TestEmbeddedIsValid(t *testing.T) {
	f, err := catalog.Embedded()
	require.NoError(t, err)
	chains, tokens := f.Domain()
	require.Len(t, chains, 11)
	require.Len(t, tokens, 31)
	byID := map[string]domain.Token{}
	for _, tk := range tokens {
		byID[tk.ID] = tk
		assert.Equal(t, domain.TokenActive, tk.Status, tk.ID)
	}
	// Depths and fees as the database held them after every migration (the version-2 seed and
	// migration 6's corrections): the file changed where they live, not what they are.
	depth := map[int64]int32{1: 12, 10: 10, 56: 15, 137: 64, 1337: 2, 8453: 10, 31337: 2, 42161: 20, 43114: 3, 84532: 3, 11155111: 3}
	fee := map[int64]int64{1: 150, 10: 5, 56: 10, 137: 5, 8453: 5, 42161: 5, 43114: 10}
	for _, c := range chains {
		assert.True(t, c.Enabled, "chain %d active by default", c.ID)
		assert.Equal(t, depth[c.ID], c.RequiredConfirmations, "chain %d depth", c.ID)
		assert.Equal(t, fee[c.ID], c.ConvenienceFeeCents, "chain %d fee", c.ID)
	}
	// The devnets' tokens are where the devnet deploys them; USDC implements both extensions
	// like Circle's, USDT neither like Ethereum's.
	for _, id := range []int64{1337, 31337} {
		for _, addr := range []string{devnet.USDCAddress, devnet.USDTAddress} {
			tk, ok := byID[catalog.ERC20TokenID(id, addr)]
			if assert.True(t, ok, "token %s on %d", addr, id) {
				usdc := addr == devnet.USDCAddress
				assert.Equal(t, usdc, tk.EIP3009, "%s on %d: EIP-3009", tk.Symbol, id)
				assert.Equal(t, usdc, tk.EIP2612, "%s on %d: EIP-2612", tk.Symbol, id)
				assert.Equal(t, int64(2), tk.Chain.Depth())
				assert.True(t, tk.Chain.IsTestnet)
			}
		}
	}
	usdcEth := byID["eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]
	assert.True(t, usdcEth.EIP3009 && usdcEth.EIP2612, "Circle's USDC implements both")
	usdtEth := byID["eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7"]
	assert.False(t, usdtEth.EIP3009 || usdtEth.EIP2612, "Ethereum's USDT implements neither")
	assert.Equal(t, "https://etherscan.io", usdcEth.Chain.BlockExplorerURL)
}

// newChain is an operator's file adding one EVM chain with its native token and a stablecoin.
const newChain = `
chains:
  - chainId: eip155:7777
    name: Example Chain
    nativeSymbol: EXC
    nativeDecimals: 18
    isTestnet: true
    confirmations: 5
    blockExplorerUrl: https://explorer.example
    tokens:
      - id: eip155:7777/slip44:60
        symbol: EXC
        contractAddress: "0x0000000000000000000000000000000000000000"
        decimals: 18
        type: volatile
        assetType: native
        marketApiId: ethereum
      - id: eip155:7777/erc20:0x1111111111111111111111111111111111111111
        symbol: USDC
        contractAddress: "0x1111111111111111111111111111111111111111"
        decimals: 6
        type: stablecoin
        assetType: erc20
        marketApiId: usd-coin
        eip2612: true
`

func TestMergeAddsAndOverrides(t *testing.T) {
	base, err := catalog.Embedded()
	require.NoError(t, err)
	f, err := catalog.Merge(base, []byte(newChain+`
  - chainId: eip155:8453
    confirmations: 30
    tokens:
      - id: eip155:8453/erc20:0xfde4c96c8593536e31f229ea8f37b2ada2699bb2
        status: blocked
  - chainId: eip155:56
    isActive: false
`), "operator.yaml")
	require.NoError(t, err)
	chains, tokens := f.Domain()
	require.Len(t, chains, 12)
	byChain := map[int64]domain.Chain{}
	for _, c := range chains {
		byChain[c.ID] = c
	}
	added := byChain[7777]
	assert.Equal(t, domain.Chain{ID: 7777, Name: "Example Chain", NativeSymbol: "EXC", NativeDecimals: 18, IsTestnet: true,
		Enabled: true, RequiredConfirmations: 5, BlockExplorerURL: "https://explorer.example"}, added)
	base8453 := byChain[8453]
	assert.Equal(t, int32(30), base8453.RequiredConfirmations, "the field spelt out is overridden")
	assert.Equal(t, "Base", base8453.Name, "the others keep the embedded values")
	assert.Equal(t, "https://basescan.org", base8453.BlockExplorerURL)
	assert.False(t, byChain[56].Enabled)
	var seen int
	for _, tk := range tokens {
		switch tk.ID {
		case "eip155:8453/erc20:0xfde4c96c8593536e31f229ea8f37b2ada2699bb2":
			seen++
			assert.Equal(t, domain.TokenBlocked, tk.Status)
			assert.Equal(t, "USDT", tk.Symbol)
		case "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913":
			seen++
			assert.Equal(t, domain.TokenActive, tk.Status, "a token the file does not name is untouched")
			assert.True(t, tk.EIP3009)
		case "eip155:7777/erc20:0x1111111111111111111111111111111111111111":
			seen++
			assert.Equal(t, domain.TokenActive, tk.Status, "a new token is active by default")
			assert.True(t, tk.EIP2612)
			assert.False(t, tk.EIP3009)
		}
	}
	assert.Equal(t, 3, seen)
	// The embedded base is not changed by merging over it.
	again, err := catalog.Embedded()
	require.NoError(t, err)
	assert.Equal(t, base, again)
}

func TestLoadOperatorFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	require.NoError(t, os.WriteFile(path, []byte(newChain), 0o600))
	f, err := catalog.Load(path)
	require.NoError(t, err)
	assert.Len(t, f.Chains, 12)
	_, err = catalog.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "PAYMENTS_CATALOG_FILE")
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	f, err = catalog.Load(empty)
	require.NoError(t, err, "an empty file changes nothing")
	assert.Len(t, f.Chains, 11)
}

func TestBadFiles(t *testing.T) {
	edit := func(old, new string) string {
		require.Contains(t, newChain, old)
		return strings.Replace(newChain, old, new, 1)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"unknown field", edit("    confirmations: 5", "    confirmations: 5\n    confirmation: 5"), "field confirmation not found"},
		{"wrong type", edit("confirmations: 5", "confirmations: five"), "cannot unmarshal"},
		{"not CAIP-2", edit("chainId: eip155:7777", "chainId: 7777"), "chainId must be CAIP-2"},
		{"leading zero", edit("chainId: eip155:7777", "chainId: eip155:07777"), "chainId must be CAIP-2"},
		{"no chainId", edit("  - chainId: eip155:7777\n    name", "  - name"), "chainId is required"},
		{"no confirmations", edit("confirmations: 5", "confirmations: 0"), "confirmations must be at least 1"},
		{"explorer not a URL", edit("https://explorer.example", "explorer.example"), "blockExplorerUrl"},
		{"uppercase contract", strings.ReplaceAll(newChain, "0x1111111111111111111111111111111111111111", "0x111111111111111111111111111111111111111A"), "lowercase"},
		{"id not the contract's", edit("id: eip155:7777/erc20:0x1111111111111111111111111111111111111111", "id: eip155:7777/erc20:0x2222222222222222222222222222222222222222"), "id must be eip155:7777/erc20:0x1111"},
		{"id of another chain", edit("id: eip155:7777/slip44:60", "id: eip155:1/slip44:60"), "id must be eip155:7777/slip44:60"},
		{"decimals out of range", edit("decimals: 6", "decimals: 77"), "decimals 77 out of 0..36"},
		{"bad type", edit("type: stablecoin", "type: pegged"), "type must be stablecoin or volatile"},
		{"bad status", edit("eip2612: true", "status: retired"), "status must be"},
		{"no native token", edit("assetType: native", "assetType: erc20"), "exactly one native token"},
		{"native symbol differs", edit("symbol: EXC", "symbol: ETH"), "nativeSymbol"},
		{"native with permit", edit("marketApiId: ethereum", "marketApiId: ethereum\n        eip2612: true"), "eip3009 and eip2612 must be false"},
		{"no market id", edit("marketApiId: usd-coin", "marketApiId: \"\""), "marketApiId are required"},
		{"duplicate token", newChain + `      - id: eip155:7777/erc20:0x1111111111111111111111111111111111111111
        decimals: 6
`, ""}, // the same id twice in one file is one token merged twice: valid
		{"duplicate contract under the zero address", edit("0x1111111111111111111111111111111111111111\"", "0x0000000000000000000000000000000000000000\""), "contractAddress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := catalog.Embedded()
			require.NoError(t, err)
			_, err = catalog.Merge(base, []byte(tc.file), "operator.yaml")
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, catalog.ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "operator.yaml")
		})
	}
}

// Duplicates cannot come from merging (entries match by id), so Validate is tested on a File.
func TestValidateDuplicates(t *testing.T) {
	f, err := catalog.Embedded()
	require.NoError(t, err)
	dup := catalog.File{Chains: append(append([]catalog.Chain(nil), f.Chains...), f.Chains[0])}
	assert.ErrorContains(t, dup.Validate(), "duplicate chainId")
	c := f.Chains[0]
	c.Tokens = append(append([]catalog.Token(nil), c.Tokens...), c.Tokens[1])
	assert.ErrorContains(t, catalog.File{Chains: []catalog.Chain{c}}.Validate(), "duplicate id")
}
