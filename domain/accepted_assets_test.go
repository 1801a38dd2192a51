package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A merchant's accepted assets narrow the catalogue's rule, never widen it.
func TestAcceptedAssetsNarrowTheCatalogue(t *testing.T) {
	base := Chain{ID: 8453, Enabled: true}
	l1 := Chain{ID: 1, Enabled: true}
	off := Chain{ID: 137, Enabled: false}
	cat := Catalog{Chains: []Chain{l1, off, base}, Tokens: map[string]Token{
		"usdt":  {ID: "usdt", Chain: base, Symbol: "USDT", AssetType: ERC20, Status: TokenActive},
		"eth":   {ID: "eth", Chain: base, Symbol: "ETH", AssetType: Native, Status: TokenActive},
		"usdc":  {ID: "usdc", Chain: base, Symbol: "USDC", AssetType: ERC20, Status: TokenActive},
		"dep":   {ID: "dep", Chain: base, Symbol: "OLD", AssetType: ERC20, Status: TokenDeprecated},
		"l1eth": {ID: "l1eth", Chain: l1, Symbol: "ETH", AssetType: Native, Status: TokenActive},
		"pol":   {ID: "pol", Chain: off, Symbol: "POL", AssetType: Native, Status: TokenActive},
	}}
	var def AcceptedAssets
	assert.True(t, def.IsDefault())
	assert.Nil(t, def.TokenIDs())
	assert.True(t, SelectAssets().IsDefault(), "no ids is the default")
	assert.Equal(t, []string{"ETH", "ETH", "USDC", "USDT"}, symbols(cat.MerchantTokens(def)),
		"the default is every accepted token, by chain id, native first, then by symbol")
	for _, ch := range cat.Chains {
		assert.Equal(t, cat.AcceptedTokens(ch.ID), cat.QuotedTokens(ch.ID, def), "chain %d", ch.ID)
	}

	sel := SelectAssets("usdt", "l1eth", "dep", "pol", "usdt")
	assert.False(t, sel.IsDefault())
	assert.Equal(t, []string{"dep", "l1eth", "pol", "usdt"}, sel.TokenIDs(), "sorted, duplicates once")
	assert.Equal(t, []string{"USDT"}, symbols(cat.QuotedTokens(8453, sel)))
	assert.Empty(t, cat.QuotedTokens(137, sel), "a selected token on an unserved chain is not quoted")
	assert.Equal(t, []string{"l1eth", "usdt"}, ids(cat.MerchantTokens(sel)), "deprecated and unserved tokens drop out")
	assert.Empty(t, cat.MerchantTokens(SelectAssets("dep", "pol", "unknown")), "a selection can quote nothing")
}

func ids(ts []Token) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
