package watcher_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
)

const batchABI = `[{"name":"transferBatch","type":"function","stateMutability":"nonpayable",
  "inputs":[{"name":"to","type":"address[]"},{"name":"values","type":"uint256[]"}],"outputs":[{"name":"","type":"bool"}]}]`

// Two Transfer logs in one transaction (a batch payout): both to one payment's address, and a
// third to another payment — each log counted once, none collapsed into another.
func TestTwoTransferLogsInOneTransaction(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		p1, p2 := f.create(1000), f.create(500)
		a1, a2 := common.HexToAddress(p1.DepositAddress.Address), common.HexToAddress(p2.DepositAddress.Address)
		parsed, err := abi.JSON(strings.NewReader(batchABI))
		require.NoError(t, err)
		data, err := parsed.Pack("transferBatch", []common.Address{a1, a1, a2},
			[]*big.Int{big.NewInt(6_000_000), big.NewInt(4_000_000), big.NewInt(5_000_000)})
		require.NoError(t, err)
		key := payer(t, 5)
		nonce, err := f.eth.PendingNonceAt(f.ctx, devnet.AccountAddress(5))
		require.NoError(t, err)
		usdc := common.HexToAddress(devnet.USDCAddress)
		tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(devnet.ChainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(devnet.ChainID), Nonce: nonce, GasTipCap: big.NewInt(1_000_000_000),
			GasFeeCap: big.NewInt(100_000_000_000), Gas: 1_000_000, To: &usdc, Data: data})
		require.NoError(t, f.eth.SendTransaction(f.ctx, tx))
		f.mine(2)
		f.sync()
		rc, err := f.eth.TransactionReceipt(f.ctx, tx.Hash())
		require.NoError(t, err)
		require.Equal(t, types.ReceiptStatusSuccessful, rc.Status, "gas used %d", rc.GasUsed)
		require.Len(t, rc.Logs, 3, "three Transfer logs in one transaction")

		got1 := f.payment(p1.ID)
		require.Equal(t, domain.PaymentCompleted, got1.Status, "6 + 4 USDC from two logs complete the $10.00 payment")
		assert.Equal(t, "10000000", got1.Receipt.SettledAmountAsset.String())
		ts := f.transfers(p1.ID)
		require.Len(t, ts, 2)
		assert.Equal(t, ts[0].TxHash, ts[1].TxHash)
		assert.NotEqual(t, ts[0].LogIndex, ts[1].LogIndex)
		assert.Equal(t, domain.PaymentCompleted, f.payment(p2.ID).Status)
		assert.Equal(t, int64(990+495), f.balance())
	})
}
