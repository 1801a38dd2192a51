package watcher_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

func forEachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// checkReceipt compares every receipt field with the chain's own answer for the transaction.
func (f *fixture) checkReceipt(p domain.Payment, q domain.Quote, tx common.Hash, settled decimal.Decimal, payerIdx int) {
	t := f.t
	t.Helper()
	require.NotNil(t, p.Receipt, "a completed payment has a receipt")
	r := p.Receipt
	chainTx, _, err := f.eth.TransactionByHash(f.ctx, tx)
	require.NoError(t, err)
	rc, err := f.eth.TransactionReceipt(f.ctx, tx)
	require.NoError(t, err)
	header, err := f.eth.HeaderByNumber(f.ctx, rc.BlockNumber)
	require.NoError(t, err)
	sender, err := types.Sender(types.LatestSignerForChainID(chainTx.ChainId()), chainTx)
	require.NoError(t, err)

	assert.Equal(t, q.ID, r.QuoteID)
	assert.Equal(t, q.Token.ID, r.Token.ID)
	assert.True(t, settled.Equal(r.SettledAmountAsset), "settled %s, want %s", r.SettledAmountAsset, settled)
	assert.Equal(t, lower(tx), *r.TxHash)
	assert.Equal(t, rc.BlockNumber.Int64(), *r.TxBlockNumber)
	assert.Equal(t, int64(header.Time), r.TxTimestamp.Unix())
	assert.Equal(t, lowerAddr(sender), *r.TxSenderAddress)
	assert.Equal(t, lowerAddr(sender), lowerAddr(mustAddr(t, payerIdx)))
	assert.Equal(t, int64(rc.GasUsed), *r.TxGasUsed)
	cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	assert.Equal(t, cost.String(), r.TxTotalCost.String())
	require.NotNil(t, r.TxTotalCostUSDFractions)
	assert.False(t, *r.TxIsSponsored, "the payer signed its own transaction")
	assert.Equal(t, domain.ProcessedByCron, *r.ProcessedBy)
	assert.Equal(t, int32(2), r.RequiredConfirmations)
	assert.GreaterOrEqual(t, r.Confirmations, int32(2))
	assert.Equal(t, "sanctions-list", *r.TxRiskProvider)
}

// An exact USDC payment: seen (processing) at one confirmation, completed at two, with a
// receipt that matches the chain, the quote used, the others expired and the merchant credited
// once.
func TestExactERC20Payment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		f.sync()
		p := f.create(1000)
		q := f.quote(p, "USDC")
		assert.Equal(t, "10000000", q.ExpectedAmountAsset.String(), "$10.00 of a 6-decimal stablecoin, no devnet fee")
		tx := f.pay(0, p, q, q.ExpectedAmountAsset)
		f.mine(1)
		f.sync()
		got := f.payment(p.ID)
		assert.Equal(t, domain.PaymentProcessing, got.Status, "seen with one confirmation of two")
		require.NotNil(t, got.Received)
		assert.Equal(t, q.ID, got.Received.QuoteID)
		assert.Equal(t, "10000000", got.Received.Amount.String())
		assert.Equal(t, "0", got.Received.Confirmed.String())
		assert.Equal(t, int64(0), f.balance())

		f.mine(1)
		f.sync()
		got = f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		f.checkReceipt(got, q, tx, q.ExpectedAmountAsset, 0)
		assert.Equal(t, "10", got.Receipt.SettledAmountUSD.String())
		assert.Equal(t, int64(1000), got.AmountDueCents)
		assert.Equal(t, int64(10), *got.MerchantFeeCents)
		assert.Equal(t, int64(990), got.AmountMerchantNetCents)
		for _, other := range got.Quotes {
			want := domain.QuoteExpired
			if other.ID == q.ID {
				want = domain.QuoteUsed
			}
			assert.Equal(t, want, other.Status, "quote %s", other.Token.ID)
		}
		assert.Equal(t, int64(990), f.balance())
		assert.Equal(t, []string{"payment.created", "payment.processing", "payment.completed"}, f.events(p.ID))

		// More rounds and more blocks change nothing: the transfer is counted once.
		f.mine(3)
		f.sync()
		assert.Equal(t, int64(990), f.balance())
		assert.Len(t, f.transfers(p.ID), 1)
		assert.Len(t, f.events(p.ID), 3)
	})
}

// A native ETH payment settles from the block's transactions.
func TestExactNativePayment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		p := f.create(2500)
		q := f.quote(p, "ETH")
		tx := f.pay(1, p, q, q.ExpectedAmountAsset)
		f.mine(2)
		f.sync()
		got := f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		f.checkReceipt(got, q, tx, q.ExpectedAmountAsset, 1)
		ts := f.transfers(p.ID)
		require.Len(t, ts, 1)
		assert.Equal(t, int64(-1), ts[0].LogIndex, "a native transfer has log index -1")
		assert.Equal(t, int64(2500-25), f.balance())
	})
}

// Underpaid: the payment shows what arrived and waits (payment.underpaid); a top-up before the
// expiry completes it with the sum of both transfers.
func TestUnderpayThenTopUp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		p := f.create(1000)
		q := f.quote(p, "USDT")
		f.pay(2, p, q, units("4000000"))
		f.mine(2)
		f.sync()
		got := f.payment(p.ID)
		assert.Equal(t, domain.PaymentProcessing, got.Status)
		require.NotNil(t, got.Received)
		assert.Equal(t, "4000000", got.Received.Confirmed.String())
		assert.Equal(t, "6000000", q.ExpectedAmountAsset.Sub(got.Received.Confirmed).String(), "still due")
		assert.Contains(t, f.events(p.ID), "payment.underpaid")
		assert.Equal(t, int64(0), f.balance())
		// The API shows what arrived and what is still due.
		body := f.get("/v1/external/secretkey-auth/payments/" + p.ID.String())
		assert.JSONEq(t, `{"quoteId": "`+q.ID.String()+`", "amountAsset": "4000000", "confirmedAmountAsset": "4000000",
			"remainingAmountAsset": "6000000"}`, string(body["received"]))

		tx := f.pay(2, p, q, units("6000000"))
		f.mine(2)
		f.sync()
		got = f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		f.checkReceipt(got, q, tx, units("10000000"), 2)
		assert.Equal(t, int64(990), f.balance())
	})
}

// Overpaid: completed, the excess recorded on the receipt and credited.
func TestOverpay(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		p := f.create(1000)
		q := f.quote(p, "USDC")
		tx := f.pay(3, p, q, units("15000000"))
		f.mine(2)
		f.sync()
		got := f.payment(p.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		f.checkReceipt(got, q, tx, units("15000000"), 3)
		assert.Equal(t, "15", got.Receipt.SettledAmountUSD.String())
		assert.Equal(t, int64(1000), got.AmountInCents)
		assert.Equal(t, int64(15), *got.MerchantFeeCents, "1% of the $15.00 received")
		assert.Equal(t, int64(1485), got.AmountMerchantNetCents, "the $5.00 excess is the merchant's")
		assert.Equal(t, int64(1485), f.balance())
	})
}
