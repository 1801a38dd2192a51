package main

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
)

const (
	baseUSDCID = "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	l1ETHID    = "eip155:1/slip44:60"
)

// assetTriples flattens the command's "assets" into "chainId symbol tokenId" strings.
func assetTriples(t *testing.T, out map[string]any) []string {
	t.Helper()
	list, ok := out["assets"].([]any)
	require.True(t, ok, "assets is a list: %v", out)
	triples := make([]string, len(list))
	for i, a := range list {
		m := a.(map[string]any)
		triples[i] = m["chainId"].(string) + " " + m["symbol"].(string) + " " + m["tokenId"].(string)
	}
	return triples
}

func TestAcceptedAssetsCommand(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	show := func(extra ...string) map[string]any {
		t.Helper()
		return cliJSON(t, append([]string{"merchants", "accepted-assets", "--database-url", db, "--merchant", mid}, extra...)...)
	}

	// Default: every served token (all networks on SQLite), in quote order. PAYMENTS_DEVNET is
	// on (cliEnv), so this passive command serves the devnet as a serve process would.
	def := show()
	assert.Equal(t, mid, def["merchantId"])
	assert.Equal(t, true, def["default"])
	all := assetTriples(t, def)
	assert.Len(t, all, 31, "every catalogue token is active and served, the devnets' three each included")
	assert.Equal(t, []string{"eip155:1 ETH " + l1ETHID, "eip155:1 USDC eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
		"eip155:1 USDT eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7"}, all[:3],
		"by chain id, native first, then by symbol")
	assert.Equal(t, []string{"eip155:1337 ETH eip155:1337/slip44:60",
		"eip155:1337 USDC eip155:1337/erc20:0x790ef98c943d9f21bbdd98c6e6de2d3c7ab16008",
		"eip155:1337 USDT eip155:1337/erc20:0xf1a226dda6d5e9ae6e9a5bcdc237ca8fa3987ccb"}, all[12:15],
		"the devnet's tokens between Polygon's and Base's (chain id order)")
	assert.Equal(t, "eip155:11155111 USDC eip155:11155111/erc20:0x1c7d4b196cb0c7b01d743fbc6116a902379c7238", all[len(all)-1])

	// With the devnet off the same command does not serve it: the other 25 tokens, same order.
	t.Setenv("PAYMENTS_DEVNET", "off")
	off := assetTriples(t, show())
	assert.Equal(t, append(append([]string{}, all[:12]...), all[15:]...), off, "the devnet's tokens only drop out")
	// A devnet run apart (`paymentsd devnet`) and reached by URL is served as well: an operator
	// command does not dial it, but serves what a serve process with these settings would.
	t.Setenv("PAYMENTS_RPC_URLS", "eip155:1337=http://127.0.0.1:1")
	assert.Equal(t, all, assetTriples(t, show()), "the devnet by RPC URL is served")
	t.Setenv("PAYMENTS_RPC_URLS", "")
	t.Setenv("PAYMENTS_DEVNET", "127.0.0.1:0")

	// Set two pairs (symbol in any case, spaces, a duplicate by token id): printed, then shown.
	set := show("--set", " eip155:8453/usdc, eip155:1/ETH ,"+l1ETHID)
	want := []string{"eip155:1 ETH " + l1ETHID, "eip155:8453 USDC " + baseUSDCID}
	assert.Equal(t, false, set["default"])
	assert.Equal(t, want, assetTriples(t, set))
	again := show()
	assert.Equal(t, false, again["default"])
	assert.Equal(t, want, assetTriples(t, again))

	// A bad entry is named and nothing changes.
	for _, bad := range []string{"eip155:8453/USDC,eip155:8453/DOGE", "eip155:999/ETH", "base/USDC", "eip155:8453/USDC,,eip155:1/ETH",
		"eip155:1/erc20:0x0000000000000000000000000000000000000001"} {
		_, _, err := cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", mid, "--set", bad)
		require.Error(t, err, bad)
		assert.NotErrorIs(t, err, errUsage)
		assert.Equal(t, 1, exitCode(err))
		assert.Equal(t, want, assetTriples(t, show()), "unchanged after %q", bad)
	}
	for _, msg := range []struct{ set, names string }{
		{"eip155:8453/USDC,eip155:8453/DOGE", `"eip155:8453/DOGE"`},
		{"eip155:999/ETH", `"eip155:999/ETH"`},
	} {
		_, _, err := cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", mid, "--set", msg.set)
		require.Error(t, err)
		assert.Contains(t, err.Error(), msg.names)
	}
	// An empty --set is a usage error: accepting nothing means the merchant cannot be paid.
	out, errOut, err := cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", mid, "--set", " ")
	require.ErrorIs(t, err, errUsage)
	assert.Contains(t, errOut, "'all'")
	assert.Empty(t, out)
	assert.Equal(t, want, assetTriples(t, show()))

	// The selection is what payments are quoted in.
	p := createPayment(t, db, mid, 1000, payments.TypePayment)
	var quoted []string
	for _, q := range p.Quotes {
		quoted = append(quoted, q.Token.ID)
	}
	assert.ElementsMatch(t, []string{l1ETHID, baseUSDCID}, quoted)

	// 'all' (any case) goes back to the default.
	back := show("--set", "ALL")
	assert.Equal(t, true, back["default"])
	assert.Equal(t, all, assetTriples(t, back))
	assert.Equal(t, true, show()["default"])
}

func TestAcceptedAssetsCommandErrors(t *testing.T) {
	db := cliEnv(t)
	createMerchant(t, db) // a migrated database with a merchant that is not the one asked for
	unknown := uuid.NewString()
	_, _, err := cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", unknown)
	assert.ErrorIs(t, err, domain.ErrMerchantNotFound)
	_, _, err = cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", unknown, "--set", "eip155:1/ETH")
	assert.ErrorIs(t, err, domain.ErrMerchantNotFound)
	_, _, err = cli(t, "merchants", "accepted-assets", "--database-url", db, "--merchant", unknown, "--set", "all")
	assert.ErrorIs(t, err, domain.ErrMerchantNotFound)

	for _, args := range [][]string{{}, {"--merchant", "nope"}} {
		out, errOut, err := cli(t, append([]string{"merchants", "accepted-assets", "--database-url", db}, args...)...)
		require.ErrorIs(t, err, errUsage)
		assert.Contains(t, errOut, "--merchant must be a merchant id")
		assert.Empty(t, out)
	}
	help, _, err := cli(t, "help")
	require.NoError(t, err)
	assert.True(t, strings.Contains(help, "merchants accepted-assets"), "listed in the usage")
}
