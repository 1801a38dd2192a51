package merchants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

const (
	baseUSDC = "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	baseETH  = "eip155:8453/slip44:60"
	l1ETH    = "eip155:1/slip44:60"
	l1Old    = "eip155:1/erc20:0x00000000000000000000000000000000000000aa"
	sepETH   = "eip155:11155111/slip44:60"
)

func testCatalog() domain.Catalog {
	base := domain.Chain{ID: 8453, Enabled: true}
	l1 := domain.Chain{ID: 1, Enabled: true}
	sepolia := domain.Chain{ID: 11155111, Enabled: false} // not served
	tok := func(id string, c domain.Chain, sym string, at domain.AssetType, st domain.TokenStatus) domain.Token {
		return domain.Token{ID: id, Chain: c, Symbol: sym, AssetType: at, Status: st}
	}
	return domain.Catalog{Chains: []domain.Chain{l1, base, sepolia}, Tokens: map[string]domain.Token{
		baseUSDC: tok(baseUSDC, base, "USDC", domain.ERC20, domain.TokenActive),
		baseETH:  tok(baseETH, base, "ETH", domain.Native, domain.TokenActive),
		l1ETH:    tok(l1ETH, l1, "ETH", domain.Native, domain.TokenActive),
		l1Old:    tok(l1Old, l1, "OLD", domain.ERC20, domain.TokenDeprecated),
		sepETH:   tok(sepETH, sepolia, "ETH", domain.Native, domain.TokenActive),
	}}
}

func TestParseAssets(t *testing.T) {
	s := &Service{Catalog: testCatalog()}
	ok := []struct {
		in   string
		want []string
	}{
		{"eip155:8453/USDC,eip155:1/ETH", []string{baseUSDC, l1ETH}},
		{" eip155:8453/usdc , EIP155:1/eth ", []string{baseUSDC, l1ETH}},
		{"eip155:8453/erc20:0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913", []string{baseUSDC}},
		{"eip155:1/slip44:60,eip155:1/ETH,eip155:1/ETH", []string{l1ETH}},
		{"eip155:8453/ETH,eip155:8453/USDC", []string{baseETH, baseUSDC}},
	}
	for _, c := range ok {
		got, err := s.ParseAssets(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	bad := []struct{ in, names string }{
		{"eip155:8453/DOGE", `"eip155:8453/DOGE"`},
		{"eip155:8453/USDC,eip155:1/OLD", `"eip155:1/OLD"`}, // deprecated
		{"eip155:11155111/ETH", `"eip155:11155111/ETH"`},    // chain not served
		{sepETH, sepETH}, // by id: same rule
		{"eip155:1/erc20:0xdead", `"eip155:1/erc20:0xdead"`}, // unknown id
		{"eip155:999/ETH", `"eip155:999/ETH"`},               // unknown chain
		{"base/USDC", `"base/USDC"`},                         // not CAIP-2
		{"USDC", `"USDC"`},                                   // no chain
		{"eip155:8453/", `"eip155:8453/"`},                   // no symbol
		{"eip155:8453/USDC,,eip155:1/ETH", "empty entry"},    // empty entry
		{"", "empty entry"},
	}
	for _, c := range bad {
		_, err := s.ParseAssets(c.in)
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.names, c.in)
	}
}
