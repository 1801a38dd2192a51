package devnet

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChains(t *testing.T) {
	assert.Equal(t, []int64{1337, 31337}, ChainIDs())
	assert.Equal(t, []Chain{{1337, "Devnet"}, {31337, "Devnet L2"}}, Chains())
	assert.True(t, IsDevnet(ChainID))
	assert.True(t, IsDevnet(L2ChainID))
	assert.False(t, IsDevnet(1))
	assert.False(t, IsDevnet(0))
	name, ok := ChainName(L2ChainID)
	assert.True(t, ok)
	assert.Equal(t, "Devnet L2", name)
	Chains()[0].Name = "changed"
	assert.Equal(t, "Devnet", Chains()[0].Name, "Chains returns a copy")
}

func TestNextAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8545": "127.0.0.1:8546",
		"127.0.0.1:0":    "127.0.0.1:0",
		":8545":          ":8546",
		"[::1]:9000":     "[::1]:9001",
		"localhost:1":    "localhost:2",
	} {
		got, err := NextAddr(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"127.0.0.1:65535", "127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000", "127.0.0.1:-1"} {
		_, err := NextAddr(bad)
		assert.Error(t, err, bad)
	}
}

func TestStartRefusesAnotherChainID(t *testing.T) {
	_, err := Start(context.Background(), Config{ChainID: 1, Addr: "127.0.0.1:0"})
	assert.ErrorContains(t, err, "not a devnet chain")
}

// The second chain: its own chain id (and network id), the same accounts, the same tokens at
// the same addresses, and a transaction signed for one chain is refused by the other.
func TestL2Chain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l1, c1 := startDevnet(t)
	l2, err := Start(ctx, Config{ChainID: L2ChainID, Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l2.Close()) })
	c2, err := ethclient.DialContext(ctx, l2.URL())
	require.NoError(t, err)
	t.Cleanup(c2.Close)

	assert.Equal(t, ChainID, l1.ChainID())
	assert.Equal(t, "Devnet", l1.Name())
	assert.Equal(t, L2ChainID, l2.ChainID())
	assert.Equal(t, "Devnet L2", l2.Name())
	id, err := c2.ChainID(ctx)
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(31337), id)
	network, err := c2.NetworkID(ctx)
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(31337), network)
	id, err = c1.ChainID(ctx)
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(1337), id, "the first chain keeps its id")

	head, err := c2.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head, "Start commits exactly the deployment block")
	for _, tok := range tokens {
		code, err := c2.CodeAt(ctx, common.HexToAddress(tok.address), nil)
		require.NoError(t, err)
		assert.NotEmpty(t, code, tok.symbol)
		for i := range NumAccounts {
			bal, err := TokenBalance(ctx, c2, common.HexToAddress(tok.address), AccountAddress(i))
			require.NoError(t, err)
			assert.Equal(t, big.NewInt(PrefundTokenUnits), bal, "account %d %s", i, tok.symbol)
		}
	}
	hot, err := c2.BalanceAt(ctx, AccountAddress(HotWalletAccount), nil)
	require.NoError(t, err)
	assert.Equal(t, ethToWei(PrefundETH), hot, "the dev hot wallet is funded on the second chain too")

	// A payment on the L2, from the same test account.
	payer, err := AccountKey(2)
	require.NoError(t, err)
	to := common.HexToAddress("0x00000000000000000000000000000000000000bb")
	h, err := Pay(ctx, c2, payer, USDTAddress, to, big.NewInt(7_000_000))
	require.NoError(t, err)
	l2.Commit()
	r, err := c2.TransactionReceipt(ctx, h)
	require.NoError(t, err)
	require.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	got, err := TokenBalance(ctx, c2, common.HexToAddress(USDTAddress), to)
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(7_000_000), got)
	got, err = TokenBalance(ctx, c1, common.HexToAddress(USDTAddress), to)
	require.NoError(t, err)
	assert.Zero(t, got.Sign(), "the first chain saw nothing")
	_, err = c1.TransactionReceipt(ctx, h)
	assert.ErrorIs(t, err, ethereum.NotFound, "the L2's transaction is not on the first chain")

	// The L2 transaction replayed on the first chain: refused (EIP-155 chain id in the signature).
	tx, _, err := c2.TransactionByHash(ctx, h)
	require.NoError(t, err)
	assert.Error(t, c1.SendTransaction(ctx, tx))
}
