package watcher_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// Transfers after the expiry, and to a payment already completed, are recorded, credited at
// the quote's rate and announced (payment.late_transfer) — never dropped.
func TestLateTransfers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{paymentTTL: 1500 * time.Millisecond, quoteTTL: time.Second})
		f.sync()
		p := f.create(1000)
		q := f.quote(p, "USDC")
		time.Sleep(time.Until(p.ExpiresAt) + 1100*time.Millisecond) // block times are whole seconds
		// Nothing expires before the watcher has scanned past the expiry: a transfer mined in
		// time may still be on its way.
		f.mine(1)
		f.sync()
		_, err := f.a.Expirer.SweepOnce(f.ctx)
		require.NoError(t, err)
		require.Equal(t, domain.PaymentExpired, f.payment(p.ID).Status)

		f.pay(0, p, q, q.ExpectedAmountAsset)
		f.mine(2)
		f.sync()
		got := f.payment(p.ID)
		assert.Equal(t, domain.PaymentExpired, got.Status, "a final payment never changes")
		ts := f.transfers(p.ID)
		require.Len(t, ts, 1)
		assert.True(t, ts[0].Credited)
		assert.Equal(t, int64(990), f.balance(), "credited at the quote's rate, less the merchant fee")
		assert.Equal(t, "payment.late_transfer", last(f.events(p.ID)))

		// And one more after that: each transfer is credited once.
		f.pay(1, p, q, units("2000000"))
		f.mine(2)
		f.sync()
		f.sync()
		assert.Equal(t, int64(990+198), f.balance())
		assert.Len(t, f.transfers(p.ID), 2)
	})
}

// A transfer to a payment that completed is credited on its own.
func TestTransferAfterCompletion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		p := f.create(1000)
		q := f.quote(p, "USDC")
		f.pay(0, p, q, q.ExpectedAmountAsset)
		f.mine(2)
		f.sync()
		require.Equal(t, domain.PaymentCompleted, f.payment(p.ID).Status)
		eth := f.quote(p, "ETH")
		f.pay(1, p, eth, eth.ExpectedAmountAsset) // the customer pays twice, in another token
		f.mine(2)
		f.sync()
		assert.Equal(t, int64(990+990), f.balance())
		assert.Equal(t, []string{"payment.created", "payment.completed", "payment.late_transfer"}, f.events(p.ID))
	})
}

// Open-amount deposits complete at the value received; a customer's reused address keeps
// crediting the merchant: a new deposit is recorded when none is open.
func TestDepositsAndReusedAddress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		d := f.create(0, "cust-1")
		q := f.quote(d, "USDC")
		f.pay(2, d, q, units("5000000"))
		f.mine(2)
		f.sync()
		got := f.payment(d.ID)
		require.Equal(t, domain.PaymentCompleted, got.Status)
		assert.Equal(t, int64(500), got.AmountInCents)
		assert.Equal(t, int64(495), got.AmountMerchantNetCents)
		assert.Equal(t, "5000000", got.Receipt.SettledAmountAsset.String())

		// Months later the customer sends again to the same address: no payment is open.
		eth := f.quote(d, "ETH")
		f.pay(3, d, eth, eth.ExpectedAmountAsset.Add(units("1000000000000000"))) // 0.001 ETH = $3.00 at the static price
		f.mine(2)
		f.sync()
		f.sync()
		list, _, err := f.a.Store.Read(f.ctx).ListPayments(store.PaymentFilter{MerchantID: f.merchant.ID, Limit: 10, SortBy: "created_at"}, f.a.Catalog)
		require.NoError(t, err)
		require.Len(t, list, 2, "a new deposit was recorded for the customer's transfer")
		var auto domain.Payment
		for _, p := range list {
			if p.ID != d.ID {
				auto = p
			}
		}
		assert.Equal(t, domain.TypeDeposit, auto.Type)
		assert.Equal(t, d.DepositAddress.Address, auto.DepositAddress.Address)
		assert.Equal(t, "cust-1", *auto.CustomerRefID)
		assert.Equal(t, domain.PaymentCompleted, auto.Status)
		assert.Equal(t, int64(300), auto.AmountInCents)
		assert.Equal(t, int64(495+297), f.balance())
	})
}

// A sender on the sanctions list is flagged on the receipt; the payment still completes.
func TestSanctionedSender(t *testing.T) {
	list := filepath.Join(t.TempDir(), "sanctions.txt")
	require.NoError(t, os.WriteFile(list, []byte(devnet.AccountAddress(7).Hex()+"\n"), 0o600))
	f := newFixture(t, "sqlite", fixtureOpts{sanctions: list})
	p := f.create(1000)
	q := f.quote(p, "USDC")
	f.pay(7, p, q, q.ExpectedAmountAsset)
	f.mine(2)
	f.sync()
	got := f.payment(p.ID)
	require.Equal(t, domain.PaymentCompleted, got.Status)
	assert.Equal(t, int32(1), *got.Receipt.TxRiskScore)
	assert.Equal(t, "CRITICAL_RISK", *got.Receipt.TxRiskSeverity)
	assert.Equal(t, "sanctions-list", *got.Receipt.TxRiskProvider)

	p2 := f.create(1000)
	f.pay(8, p2, f.quote(p2, "USDC"), q.ExpectedAmountAsset)
	f.mine(2)
	f.sync()
	got = f.payment(p2.ID)
	assert.Equal(t, int32(100), *got.Receipt.TxRiskScore)
	assert.Equal(t, "NO_RISK", *got.Receipt.TxRiskSeverity)
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// An underpaid payment expires once the chain is past its expiry; what arrived is credited.
func TestUnderpaidExpires(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{paymentTTL: time.Minute, quoteTTL: 30 * time.Second})
		f.sync()
		p := f.create(1000)
		q := f.quote(p, "USDC")
		f.pay(0, p, q, units("4000000"))
		f.mine(2)
		f.sync()
		require.Equal(t, domain.PaymentProcessing, f.payment(p.ID).Status)
		// The chain's clock passes the expiry (a block two minutes later): nothing more can count.
		require.NoError(t, f.dn.Backend().AdjustTime(2*time.Minute))
		f.sync()
		got := f.payment(p.ID)
		require.Equal(t, domain.PaymentExpired, got.Status)
		assert.Nil(t, got.Receipt)
		require.NotNil(t, got.Received)
		assert.Equal(t, "4000000", got.Received.Confirmed.String())
		assert.Equal(t, int64(4), *got.MerchantFeeCents)
		assert.Equal(t, int64(396), got.AmountMerchantNetCents)
		assert.Equal(t, int64(396), f.balance(), "the partial amount is credited")
		assert.Equal(t, "payment.expired", last(f.events(p.ID)))
		for _, q := range got.Quotes {
			assert.NotEqual(t, domain.QuoteActive, q.Status)
		}
	})
}
