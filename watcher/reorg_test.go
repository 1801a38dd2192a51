package watcher_test

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// A reorg drops the counted transfer before its confirmations: the watcher walks back, the
// transfer is un-counted (processing → pending), and a later payment completes the payment
// once, with one credit.
func TestReorgDropsCountedTransfer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		f.sync()
		p := f.create(1000)
		q := f.quote(p, "USDC")
		tx := f.pay(4, p, q, q.ExpectedAmountAsset)
		f.mine(1)
		f.sync()
		require.Equal(t, domain.PaymentProcessing, f.payment(p.ID).Status)

		rc, err := f.eth.TransactionReceipt(f.ctx, tx)
		require.NoError(t, err)
		parent, err := f.eth.HeaderByNumber(f.ctx, new(big.Int).Sub(rc.BlockNumber, big.NewInt(1)))
		require.NoError(t, err)
		sent, _, err := f.eth.TransactionByHash(f.ctx, tx)
		require.NoError(t, err)

		// The side chain forks below the transfer's block; the payer's nonce is taken by another
		// transaction there, so the transfer can never come back.
		f.dn.Backend().Rollback()
		require.NoError(t, f.dn.Backend().Fork(parent.Hash()))
		f.replace(4, sent.Nonce())
		f.mine(2)

		res := f.round()
		assert.GreaterOrEqual(t, res.Reorged, 1, "the watcher walked back")
		got := f.payment(p.ID)
		assert.Equal(t, domain.PaymentPending, got.Status, "the counted transfer was reorged out")
		assert.Nil(t, got.Received)
		ts := f.transfers(p.ID)
		require.Len(t, ts, 1)
		assert.Equal(t, store.TransferOrphaned, ts[0].Status)
		assert.Equal(t, []string{"payment.created", "payment.processing", "payment.pending"}, f.events(p.ID))
		_, err = f.eth.TransactionReceipt(f.ctx, tx)
		require.Error(t, err, "the transfer is not in the canonical chain")

		f.mine(3)
		f.sync()
		assert.Equal(t, domain.PaymentPending, f.payment(p.ID).Status)
		assert.Equal(t, int64(0), f.balance())

		tx2 := f.pay(5, p, q, q.ExpectedAmountAsset)
		f.mine(2)
		f.sync()
		got = f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		f.checkReceipt(got, q, tx2, q.ExpectedAmountAsset, 5)
		assert.Equal(t, int64(990), f.balance())
	})
}

// A reorg that moves the transfer to another block (it is mined again on the new chain)
// keeps it counted once.
func TestReorgMovesTransfer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		f.sync()
		p := f.create(1000)
		q := f.quote(p, "USDT")
		tx := f.pay(6, p, q, q.ExpectedAmountAsset)
		f.mine(1)
		f.sync()
		rc, err := f.eth.TransactionReceipt(f.ctx, tx)
		require.NoError(t, err)
		parent, err := f.eth.HeaderByNumber(f.ctx, new(big.Int).Sub(rc.BlockNumber, big.NewInt(1)))
		require.NoError(t, err)
		require.NoError(t, f.dn.Backend().Fork(parent.Hash()))
		f.mine(3)
		f.mine(2)
		f.sync()
		rc2, err := f.eth.TransactionReceipt(f.ctx, tx)
		if err != nil {
			t.Skip("the simulated chain did not re-include the transaction after the fork")
		}
		require.NotEqual(t, rc.BlockHash, rc2.BlockHash, "mined again in another block")
		got := f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		assert.Equal(t, rc2.BlockNumber.Int64(), *got.Receipt.TxBlockNumber, "the receipt names the canonical block")
		ts := f.transfers(p.ID)
		require.Len(t, ts, 1, "one transfer, recorded once")
		assert.Equal(t, store.TransferConfirmed, ts[0].Status)
		assert.Equal(t, int64(990), f.balance())
	})
}

// replace sends a self-transfer at nonce from a devnet account with a high fee.
func (f *fixture) replace(account int, nonce uint64) {
	f.t.Helper()
	key := payer(f.t, account)
	to := devnet.AccountAddress(account)
	gwei := big.NewInt(1_000_000_000)
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(devnet.ChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(devnet.ChainID), Nonce: nonce, GasTipCap: new(big.Int).Mul(gwei, big.NewInt(50)),
		GasFeeCap: new(big.Int).Mul(gwei, big.NewInt(500)), Gas: 21000, To: &to, Value: big.NewInt(0)})
	// After a Fork the pool moves to the new head asynchronously: until it has, it still counts
	// the orphaned transaction's nonce as used ("nonce too low"; CI once sent too early).
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err = f.eth.SendTransaction(f.ctx, tx); err == nil || !strings.Contains(err.Error(), "nonce too low") || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(f.t, err)
}
