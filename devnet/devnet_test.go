package devnet

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startDevnet starts a manual-block devnet on a free loopback port and dials it
// over HTTP.
func startDevnet(t *testing.T) (*Devnet, *ethclient.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	require.True(t, strings.HasPrefix(d.URL(), "http://127.0.0.1:"), d.URL())
	require.NotContains(t, d.URL(), ":0")
	client, err := ethclient.DialContext(ctx, d.URL())
	require.NoError(t, err)
	t.Cleanup(client.Close)
	return d, client
}

func TestAccounts(t *testing.T) {
	// The well-known first account of the test mnemonic (Hardhat/Anvil account #0).
	assert.Equal(t, common.HexToAddress("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"), AccountAddress(0))
	assert.Equal(t, common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), AccountAddress(1))
	assert.Equal(t, common.HexToAddress("0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"), AccountAddress(9))
	key, err := AccountKey(0)
	require.NoError(t, err)
	assert.Equal(t, "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", common.Bytes2Hex(crypto.FromECDSA(key)))
	_, err = AccountKey(-1)
	assert.Error(t, err)
	_, err = AccountKey(1 << 31)
	assert.Error(t, err)
}

func TestFixedAddresses(t *testing.T) {
	deployer := crypto.PubkeyToAddress(deployerKey().PublicKey)
	assert.Equal(t, common.HexToAddress(DeployerAddress), deployer)
	assert.Equal(t, "0x9B99d9F98f9416fd959F348CAFf546447185CEdc", deployer.Hex())
	assert.Equal(t, strings.ToLower(crypto.CreateAddress(deployer, 0).Hex()), USDCAddress)
	assert.Equal(t, strings.ToLower(crypto.CreateAddress(deployer, 1).Hex()), USDTAddress)
	assert.Equal(t, USDCAddress, tokens[0].address)
	assert.Equal(t, USDTAddress, tokens[1].address)
	assert.Equal(t, strings.ToLower(crypto.CreateAddress(deployer, 2).Hex()), SweepBatchAddress)
	assert.Equal(t, strings.ToLower(crypto.CreateAddress(deployer, 3).Hex()), SweepDelegateAddress)
	assert.Equal(t, int64(1_000_000_000_000), int64(PrefundTokenUnits))
}

func TestTransferCalldata(t *testing.T) {
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	data := TransferCalldata(to, big.NewInt(1))
	assert.Equal(t, "a9059cbb"+
		"00000000000000000000000000000000000000000000000000000000000000aa"+
		"0000000000000000000000000000000000000000000000000000000000000001", common.Bytes2Hex(data))
}

func TestDevnet(t *testing.T) {
	d, client := startDevnet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	chainID, err := client.ChainID(ctx)
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(ChainID), chainID)

	genesis, err := client.HeaderByNumber(ctx, big.NewInt(0))
	require.NoError(t, err)
	assert.Equal(t, d.GenesisHash(), genesis.Hash())
	head, err := client.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head, "Start commits exactly the deployment block")

	usdc, usdt := common.HexToAddress(USDCAddress), common.HexToAddress(USDTAddress)
	prefund := ethToWei(PrefundETH)
	for i := range NumAccounts {
		bal, err := client.BalanceAt(ctx, AccountAddress(i), nil)
		require.NoError(t, err)
		assert.Equal(t, prefund, bal, "account %d ETH", i)
		for _, tok := range []common.Address{usdc, usdt} {
			bal, err := TokenBalance(ctx, client, tok, AccountAddress(i))
			require.NoError(t, err)
			assert.Equal(t, big.NewInt(PrefundTokenUnits), bal, "account %d %s", i, tok.Hex())
		}
	}
	for _, tok := range tokens {
		code, err := client.CodeAt(ctx, common.HexToAddress(tok.address), nil)
		require.NoError(t, err)
		assert.NotEmpty(t, code, tok.symbol)
	}

	payer, err := AccountKey(1)
	require.NoError(t, err)
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	oneETH := ethToWei(1)
	hNative, err := Pay(ctx, client, payer, "", to, oneETH)
	require.NoError(t, err)
	hUSDC, err := Pay(ctx, client, payer, USDCAddress, to, big.NewInt(1_500_000))
	require.NoError(t, err)
	// USDT's transfer returns no data; Pay does not expect any.
	hUSDT, err := Pay(ctx, client, payer, strings.ToUpper(USDTAddress[2:]), to, big.NewInt(2_500_000))
	require.NoError(t, err)
	d.Commit()

	var gasCost big.Int
	for _, h := range []common.Hash{hNative, hUSDC, hUSDT} {
		r, err := client.TransactionReceipt(ctx, h)
		require.NoError(t, err)
		require.Equal(t, types.ReceiptStatusSuccessful, r.Status, h.Hex())
		assert.Equal(t, uint64(2), r.BlockNumber.Uint64())
		gasCost.Add(&gasCost, new(big.Int).Mul(r.EffectiveGasPrice, new(big.Int).SetUint64(r.GasUsed)))
	}
	bal, err := client.BalanceAt(ctx, to, nil)
	require.NoError(t, err)
	assert.Equal(t, oneETH, bal)
	payerETH, err := client.BalanceAt(ctx, AccountAddress(1), nil)
	require.NoError(t, err)
	assert.Equal(t, new(big.Int).Sub(new(big.Int).Sub(prefund, oneETH), &gasCost), payerETH)
	for tok, want := range map[common.Address]int64{usdc: 1_500_000, usdt: 2_500_000} {
		got, err := TokenBalance(ctx, client, tok, to)
		require.NoError(t, err)
		assert.Equal(t, big.NewInt(want), got, tok.Hex())
		got, err = TokenBalance(ctx, client, tok, AccountAddress(1))
		require.NoError(t, err)
		assert.Equal(t, big.NewInt(PrefundTokenUnits-want), got, tok.Hex())
	}

	// A transfer beyond the balance fails at estimation, before anything is sent.
	_, err = Pay(ctx, client, payer, USDTAddress, to, big.NewInt(PrefundTokenUnits))
	assert.Error(t, err)
	_, err = Pay(ctx, client, payer, "not-an-address", to, big.NewInt(1))
	assert.Error(t, err)
	_, err = Pay(ctx, client, payer, "", to, big.NewInt(-1))
	assert.Error(t, err)

	// Reorg: replace block 2 (the payments) by a longer side chain from block 1.
	block1, err := client.HeaderByNumber(ctx, big.NewInt(1))
	require.NoError(t, err)
	block2, err := client.HeaderByNumber(ctx, big.NewInt(2))
	require.NoError(t, err)
	d.Backend().Rollback()
	require.NoError(t, d.Backend().Fork(block1.Hash()))
	d.Backend().Rollback() // the fork may return the reorged-out payments to the pool
	d.Commit()
	d.Commit()
	d.Commit()
	newBlock2, err := client.HeaderByNumber(ctx, big.NewInt(2))
	require.NoError(t, err)
	assert.NotEqual(t, block2.Hash(), newBlock2.Hash(), "block 2 was replaced")
	assert.Equal(t, block1.Hash(), newBlock2.ParentHash)
	head, err = client.BlockNumber(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), head)
}

func TestRestartHasNewGenesis(t *testing.T) {
	a, _ := startDevnet(t)
	b, _ := startDevnet(t)
	assert.NotEqual(t, a.GenesisHash(), b.GenesisHash())
	assert.NotEqual(t, a.URL(), b.URL())
	assert.NotEqual(t, common.Hash{}, a.GenesisHash())
}

func TestBlockTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Start(ctx, Config{Addr: "127.0.0.1:0", BlockTime: 50 * time.Millisecond})
	require.NoError(t, err)
	client, err := ethclient.DialContext(ctx, d.URL())
	require.NoError(t, err)
	defer client.Close()
	require.Eventually(t, func() bool {
		n, err := client.BlockNumber(ctx)
		return err == nil && n >= 3
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	assert.Equal(t, common.Hash{}, d.Commit(), "Commit after Close does nothing")
}

func TestStartPortInUse(t *testing.T) {
	d, _ := startDevnet(t)
	addr := strings.TrimPrefix(d.URL(), "http://")
	_, err := Start(context.Background(), Config{Addr: addr})
	assert.Error(t, err)
}
