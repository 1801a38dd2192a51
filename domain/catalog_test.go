package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func symbols(ts []Token) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Symbol
	}
	return out
}

// One rule decides what may be quoted and paid out: an active token on an enabled chain.
func TestCatalogAcceptedTokens(t *testing.T) {
	base := Chain{ID: 8453, Enabled: true}
	l1 := Chain{ID: 1, Enabled: true}
	off := Chain{ID: 137, Enabled: false}
	cat := Catalog{Chains: []Chain{l1, off, base}, Tokens: map[string]Token{
		"usdt":  {ID: "usdt", Chain: base, Symbol: "USDT", AssetType: ERC20, Status: TokenActive},
		"eth":   {ID: "eth", Chain: base, Symbol: "ETH", AssetType: Native, Status: TokenActive},
		"usdc":  {ID: "usdc", Chain: base, Symbol: "USDC", AssetType: ERC20, Status: TokenActive},
		"dai":   {ID: "dai", Chain: base, Symbol: "DAI", AssetType: ERC20, Status: TokenActive},
		"dep":   {ID: "dep", Chain: base, Symbol: "OLD", AssetType: ERC20, Status: TokenDeprecated},
		"blk":   {ID: "blk", Chain: base, Symbol: "BAD", AssetType: ERC20, Status: TokenBlocked},
		"l1eth": {ID: "l1eth", Chain: l1, Symbol: "ETH", AssetType: Native, Status: TokenActive},
		"pol":   {ID: "pol", Chain: off, Symbol: "POL", AssetType: Native, Status: TokenActive},
	}}
	assert.Equal(t, []string{"ETH", "DAI", "USDC", "USDT"}, symbols(cat.AcceptedTokens(8453)), "native first, then by symbol; deprecated and blocked left out")
	assert.Equal(t, []string{"ETH"}, symbols(cat.AcceptedTokens(1)))
	assert.Empty(t, cat.AcceptedTokens(137), "a chain this deployment does not serve quotes nothing")
	assert.Empty(t, cat.AcceptedTokens(42161), "an unknown chain quotes nothing")

	tok, ok := cat.AcceptedToken(8453, "USDC")
	assert.True(t, ok)
	assert.Equal(t, "usdc", tok.ID)
	_, ok = cat.AcceptedToken(8453, "OLD")
	assert.False(t, ok, "deprecated tokens are not paid out")
	_, ok = cat.AcceptedToken(137, "POL")
	assert.False(t, ok, "tokens of unserved chains are not paid out")

	for _, tk := range cat.Tokens {
		assert.Equal(t, tk.Status == TokenActive && tk.Chain.Enabled, cat.Accepts(tk), tk.ID)
	}
	c, ok := cat.Chain(8453)
	assert.True(t, ok)
	assert.Equal(t, base, c)
}
