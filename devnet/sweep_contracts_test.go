package devnet

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/holiman/uint256"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/tokensig"
)

// The ABI tuples of SweepBatch's pulls (field names are the Solidity ones, capitalised).
type authItem struct {
	From        common.Address
	Value       *big.Int
	ValidBefore *big.Int
	Nonce       [32]byte
	V           uint8
	R           [32]byte
	S           [32]byte
}

type permitItem struct {
	Owner    common.Address
	Value    *big.Int
	Deadline *big.Int
	V        uint8
	R        [32]byte
	S        [32]byte
}

// mined commits blocks until tx has a receipt.
func mined(t *testing.T, d *Devnet, c *ethclient.Client, tx *types.Transaction) *types.Receipt {
	t.Helper()
	for range 50 {
		d.Commit()
		if r, err := c.TransactionReceipt(context.Background(), tx.Hash()); err == nil {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s not mined", tx.Hash().Hex())
	return nil
}

// fundFresh sends 1 token (10^6 units) plus i units to each of n fresh keys from account 0.
func fundFresh(t *testing.T, d *Devnet, c *ethclient.Client, token string, n int) []*ecdsa.PrivateKey {
	t.Helper()
	k0, err := AccountKey(0)
	require.NoError(t, err)
	tk := common.HexToAddress(token)
	keys := make([]*ecdsa.PrivateKey, n)
	var last *types.Transaction
	for i := range keys {
		keys[i], err = crypto.GenerateKey()
		require.NoError(t, err)
		last, err = sendTx(context.Background(), c, k0, &tk, new(big.Int), TransferCalldata(crypto.PubkeyToAddress(keys[i].PublicKey), value(i)))
		require.NoError(t, err)
	}
	mined(t, d, c, last)
	return keys
}

func value(i int) *big.Int { return big.NewInt(int64(1_000_000 + i)) }

func usdcDomain(d *Devnet) tokensig.Domain {
	return tokensig.Domain{Name: tokens[0].name, Version: "2", ChainID: d.ChainID(), Contract: common.HexToAddress(USDCAddress)}
}

func call(t *testing.T, c *ethclient.Client, to string, data []byte) []byte {
	t.Helper()
	addr := common.HexToAddress(to)
	out, err := c.CallContract(context.Background(), ethereum.CallMsg{To: &addr, Data: data}, nil)
	require.NoError(t, err)
	return out
}

// USDC's EIP-712 domain is FiatToken v2's, and the sweep batch pays the collector what three
// EIP-3009 authorizations allow, skipping a forged one and reporting it, without reverting.
func TestUSDCAuthorizationsThroughTheSweepBatch(t *testing.T) {
	d, c := startDevnet(t)
	ctx := context.Background()
	data, err := devTokenABI.Pack("DOMAIN_SEPARATOR")
	require.NoError(t, err)
	assert.Equal(t, usdcDomain(d).Separator().Bytes(), call(t, c, USDCAddress, data), "DOMAIN_SEPARATOR")

	keys := fundFresh(t, d, c, USDCAddress, 3)
	before, err := TokenBalance(ctx, c, common.HexToAddress(USDCAddress), SweepCollector())
	require.NoError(t, err)
	items := make([]authItem, len(keys))
	for i, k := range keys {
		a := tokensig.Authorization{From: crypto.PubkeyToAddress(k.PublicKey), To: SweepCollector(), Value: value(i),
			ValidAfter: new(big.Int), ValidBefore: big.NewInt(time.Now().Add(time.Hour).Unix()), Nonce: common.Hash{byte(i + 1)}}
		signer := k
		if i == 1 {
			signer = keys[0] // a signature by another key: this pull must fail alone
		}
		sig, err := tokensig.Sign(signer, usdcDomain(d), a)
		require.NoError(t, err)
		items[i] = authItem{a.From, a.Value, a.ValidBefore, a.Nonce, sig.V, sig.R, sig.S}
	}
	data, err = sweepBatchABI.Pack("transferWithAuthorizations", common.HexToAddress(USDCAddress), items)
	require.NoError(t, err)
	hot, err := AccountKey(HotWalletAccount)
	require.NoError(t, err)
	batch := common.HexToAddress(SweepBatchAddress)
	tx, err := sendTx(ctx, c, hot, &batch, new(big.Int), data)
	require.NoError(t, err)
	rc := mined(t, d, c, tx)
	require.Equal(t, types.ReceiptStatusSuccessful, rc.Status)
	failed := 0
	for _, l := range rc.Logs {
		if l.Address == batch && l.Topics[0] == sweepBatchABI.Events["PullFailed"].ID {
			failed++
			assert.Equal(t, common.BigToHash(big.NewInt(1)), l.Topics[1], "the forged pull's index")
		}
	}
	assert.Equal(t, 1, failed)
	after, err := TokenBalance(ctx, c, common.HexToAddress(USDCAddress), SweepCollector())
	require.NoError(t, err)
	assert.Equal(t, new(big.Int).Add(before, new(big.Int).Add(value(0), value(2))).String(), after.String())
	data, err = devTokenABI.Pack("authorizationState", items[0].From, items[0].Nonce)
	require.NoError(t, err)
	assert.Equal(t, common.BigToHash(big.NewInt(1)).Bytes(), call(t, c, USDCAddress, data), "nonce used")

	// The same authorization again: the nonce is used, the pull fails, nothing moves.
	data, err = sweepBatchABI.Pack("transferWithAuthorizations", common.HexToAddress(USDCAddress), items[:1])
	require.NoError(t, err)
	tx, err = sendTx(ctx, c, hot, &batch, new(big.Int), data)
	require.NoError(t, err)
	rc = mined(t, d, c, tx)
	require.Len(t, rc.Logs, 1, "only PullFailed")
	again, err := TokenBalance(ctx, c, common.HexToAddress(USDCAddress), SweepCollector())
	require.NoError(t, err)
	assert.Equal(t, after.String(), again.String())
}

// EIP-2612 permits pulled by the batch, and EIP-7702 delegations of deposit accounts holding
// USDT (no signature extension) swept in one SetCode transaction: no gas at any deposit address.
func TestPermitsAndDelegatedSweeps(t *testing.T) {
	d, c := startDevnet(t)
	ctx := context.Background()
	hot, err := AccountKey(HotWalletAccount)
	require.NoError(t, err)
	batch := common.HexToAddress(SweepBatchAddress)

	keys := fundFresh(t, d, c, USDCAddress, 2)
	items := make([]permitItem, len(keys))
	for i, k := range keys {
		p := tokensig.Permit{Owner: crypto.PubkeyToAddress(k.PublicKey), Spender: batch, Value: value(i), Nonce: new(big.Int),
			Deadline: big.NewInt(time.Now().Add(time.Hour).Unix())}
		sig, err := tokensig.Sign(k, usdcDomain(d), p)
		require.NoError(t, err)
		items[i] = permitItem{p.Owner, p.Value, p.Deadline, sig.V, sig.R, sig.S}
	}
	data, err := sweepBatchABI.Pack("permitsAndPulls", common.HexToAddress(USDCAddress), items)
	require.NoError(t, err)
	tx, err := sendTx(ctx, c, hot, &batch, new(big.Int), data)
	require.NoError(t, err)
	require.Equal(t, types.ReceiptStatusSuccessful, mined(t, d, c, tx).Status)
	for _, k := range keys {
		left, err := TokenBalance(ctx, c, common.HexToAddress(USDCAddress), crypto.PubkeyToAddress(k.PublicKey))
		require.NoError(t, err)
		assert.Equal(t, "0", left.String())
	}

	keys = fundFresh(t, d, c, USDTAddress, 2)
	chainID := uint256.NewInt(uint64(d.ChainID()))
	var auths []types.SetCodeAuthorization
	var deposits []common.Address
	var values []*big.Int
	for i, k := range keys {
		a, err := types.SignSetCode(k, types.SetCodeAuthorization{ChainID: *chainID, Address: common.HexToAddress(SweepDelegateAddress)})
		require.NoError(t, err)
		auths, deposits, values = append(auths, a), append(deposits, crypto.PubkeyToAddress(k.PublicKey)), append(values, value(i))
	}
	data, err = sweepBatchABI.Pack("sweepDelegated", common.HexToAddress(USDTAddress), deposits, values)
	require.NoError(t, err)
	from := SweepCollector()
	nonce, err := c.PendingNonceAt(ctx, from)
	require.NoError(t, err)
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &batch, Data: data, AuthorizationList: auths})
	require.NoError(t, err)
	head, err := c.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	tip, err := c.SuggestGasTipCap(ctx)
	require.NoError(t, err)
	fee := uint256.MustFromBig(new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip))
	tx, err = types.SignNewTx(hot, types.LatestSignerForChainID(big.NewInt(d.ChainID())), &types.SetCodeTx{ChainID: chainID,
		Nonce: nonce, GasTipCap: uint256.MustFromBig(tip), GasFeeCap: fee, Gas: gas, To: batch, Value: new(uint256.Int), Data: data, AuthList: auths})
	require.NoError(t, err)
	require.NoError(t, c.SendTransaction(ctx, tx))
	require.Equal(t, types.ReceiptStatusSuccessful, mined(t, d, c, tx).Status)
	for _, a := range deposits {
		left, err := TokenBalance(ctx, c, common.HexToAddress(USDTAddress), a)
		require.NoError(t, err)
		assert.Equal(t, "0", left.String())
		eth, err := c.BalanceAt(ctx, a, nil)
		require.NoError(t, err)
		assert.Equal(t, "0", eth.String(), "no native token at the deposit address")
		code, err := c.CodeAt(ctx, a, nil)
		require.NoError(t, err)
		assert.Equal(t, types.AddressToDelegation(common.HexToAddress(SweepDelegateAddress)), code, "delegated")
	}
	// A delegated deposit address still takes ether, at a little more than a plain transfer's
	// 21,000 gas (the delegate's empty receive runs): a wallet that estimates gas pays it.
	payer, err := AccountKey(0)
	require.NoError(t, err)
	tx, err = sendTx(ctx, c, payer, &deposits[0], big.NewInt(1e15), nil)
	require.NoError(t, err)
	rc := mined(t, d, c, tx)
	require.Equal(t, types.ReceiptStatusSuccessful, rc.Status)
	t.Logf("ether to a delegated deposit address: %d gas", rc.GasUsed)
	assert.Less(t, rc.GasUsed, uint64(30_000))
}
