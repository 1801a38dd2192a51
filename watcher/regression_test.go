package watcher_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

type failingReader struct{}

func (failingReader) TxFacts(context.Context, int64, string) (payments.TxFacts, error) {
	return payments.TxFacts{}, errors.New("rpc: transient failure")
}

// A payment paid in full before its expiry is never expired by the sweep, even when the scan
// has committed (the cursor past the expiry) and the settlement has not run (it failed, or the
// process died in between). Found in review.
func TestPaidInTimeNeverExpiresBetweenScanAndSettle(t *testing.T) {
	f := newFixture(t, "sqlite", fixtureOpts{paymentTTL: 3 * time.Second, quoteTTL: 2 * time.Second})
	f.sync()
	p := f.create(1000)
	q := f.quote(p, "USDC")
	f.pay(0, p, q, q.ExpectedAmountAsset)
	f.mine(1) // mined in time
	time.Sleep(time.Until(p.ExpiresAt) + 1100*time.Millisecond)
	f.mine(2)
	// One round whose settlement fails after the scan committed (or: the sweep runs between the
	// two, or the process dies there).
	w2 := *f.w
	w2.Settle = &payments.OnChain{Payments: f.a.Payments, Chains: failingReader{}, Risk: f.a.OnChain.Risk}
	_, err := w2.Round(f.ctx)
	require.Error(t, err)
	_, err = f.a.Expirer.SweepOnce(f.ctx)
	require.NoError(t, err)
	f.sync()
	f.sync()
	got := f.payment(p.ID)
	assert.Equal(t, domain.PaymentCompleted, got.Status, "paid in full, mined before the expiry")
	assert.Equal(t, int64(990), f.balance())
	assert.NotContains(t, f.events(p.ID), "payment.expired")
}

// A manual settlement of a payment the watcher has seen, then the watcher confirming the same
// transaction: credited once. Found in review.
func TestManualSettleThenWatcherCreditsOnce(t *testing.T) {
	f := newFixture(t, "sqlite", fixtureOpts{})
	p := f.create(1000)
	q := f.quote(p, "USDC")
	h := f.pay(0, p, q, q.ExpectedAmountAsset)
	f.mine(1)
	f.sync()
	require.Equal(t, domain.PaymentProcessing, f.payment(p.ID).Status)
	_, err := f.a.Payments.Settle(f.ctx, payments.SettleInput{PaymentID: p.ID, QuoteID: &q.ID, TxHash: lower(h)}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(990), f.balance())
	f.mine(2)
	f.sync()
	f.sync()
	assert.Equal(t, int64(990), f.balance(), "one payment of $10 credited once")
	assert.NotContains(t, f.events(p.ID), "payment.late_transfer")
}

// Reconcile of a payment that became final meanwhile (a stale list: another process, a manual
// settlement) does nothing — it used to dereference a nil quote. Found in review.
func TestReconcileOfAFinalPaymentIsANoOp(t *testing.T) {
	f := newFixture(t, "sqlite", fixtureOpts{})
	p := f.create(1000)
	q := f.quote(p, "USDC")
	f.pay(0, p, q, q.ExpectedAmountAsset)
	f.mine(2)
	f.sync()
	require.Equal(t, domain.PaymentCompleted, f.payment(p.ID).Status)
	changed, err := f.a.OnChain.Reconcile(f.ctx, p.ID)
	require.NoError(t, err)
	assert.False(t, changed)
}

// A customer's transfer that cannot be given a deposit (the merchant accepts nothing served)
// does not hold up another merchant's payment on the chain. Found in review.
func TestOneFailingItemDoesNotHoldUpTheChain(t *testing.T) {
	f := newFixture(t, "sqlite", fixtureOpts{})
	d := f.create(0, "cust-1")
	dq := f.quote(d, "USDC")
	f.pay(2, d, dq, units("5000000"))
	f.mine(2)
	f.sync()
	require.Equal(t, domain.PaymentCompleted, f.payment(d.ID).Status)

	// Another merchant's ordinary payment.
	other, err := f.a.Merchants.Create(f.ctx, merchants.CreateInput{Name: "Other", ShortName: "Other"})
	require.NoError(t, err)
	c, err := f.a.Payments.Create(f.ctx, other.Merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD", OrderID: "o", Amount: ptr(int64(1000))}, nil)
	require.NoError(t, err)
	p2 := c.Payment

	// The first merchant now accepts only a token this deployment does not serve.
	require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error {
		return tx.PutAcceptedAssets(f.merchant.ID, domain.SelectAssets("eip155:11155111/erc20:0x1c7d4b196cb0c7b01d743fbc6116a902379c7238")) // a testnet not served here
	}))
	f.pay(3, d, dq, units("1000000")) // the customer pays to their reusable address again
	q2 := f.quote(p2, "USDC")
	f.pay(4, p2, q2, q2.ExpectedAmountAsset)
	f.mine(3)
	var lastErr error
	for range 10 {
		_, lastErr = f.w.Round(f.ctx)
	}
	assert.Error(t, lastErr, "the round reports the transfer it could not attribute")
	assert.Equal(t, domain.PaymentCompleted, f.paymentOf(other.Merchant.ID, p2.ID).Status, "another merchant's payment settles")
}

func ptr[T any](v T) *T { return &v }

func (f *fixture) paymentOf(m, id uuid.UUID) domain.Payment {
	p, err := f.a.Store.Read(f.ctx).GetPayment(m, domain.ModeTest, id, f.a.Catalog)
	require.NoError(f.t, err)
	return p
}
