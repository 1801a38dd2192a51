package payouts_test

import (
	"bytes"
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
)

// A deposit address that received USDC and ETH: both sweeps use the same nonce sequence and
// the same ETH balance.
func TestSweepAddressWithTwoTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		usdc := f.payOnChain(2000, "USDC")
		payer, err := devnet.AccountKey(0)
		require.NoError(t, err)
		// 0.02 ETH more to the same address (a customer paying the rest in ETH).
		_, err = devnet.Pay(f.ctx, f.eth, payer, "", usdc.deposit, big.NewInt(2e16))
		require.NoError(t, err)
		for i := 0; i < 60; i++ {
			f.mine(1)
			_, _ = f.a.Watchers[0].Round(f.ctx)
			_, err := f.m.Round(f.ctx)
			if i%10 == 0 || i == 59 {
				t.Logf("round %d err=%v", i, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for _, s := range f.sweepsOf(usdc.deposit) {
			t.Logf("sweep token=%s status=%s amount=%v topup=%v tx=%v err=%v", s.TokenID, s.Status, s.AmountAsset, s.TopupTxID, s.SweepTxID, s.Error)
			if s.SweepTxID != nil {
				o := outgoing(t, f, *s.SweepTxID)
				t.Logf("   outgoing nonce=%d status=%s attempts=%d lastErr=%v", o.Nonce, o.Status, len(o.Attempts), rvDeref(o.Attempts[len(o.Attempts)-1].LastError))
			}
		}
		t.Logf("eth at deposit: %s, usdc at deposit: %s", f.tokenBalance("", usdc.deposit), f.tokenBalance(devnet.USDCAddress, usdc.deposit))
		open, err := f.a.Store.Read(f.ctx).OpenSweeps(devnet.ChainID)
		require.NoError(t, err)
		require.Empty(t, open, "every sweep finished")
		confirmed := map[string]bool{}
		for _, s := range f.sweepsOf(usdc.deposit) {
			confirmed[s.TokenID] = confirmed[s.TokenID] || s.Status == store.SweepConfirmed
		}
		require.Len(t, confirmed, 2, "the USDC and the ETH were both swept")
		for tok, ok := range confirmed {
			require.True(t, ok, tok)
		}
		require.Equal(t, "0", f.tokenBalance(devnet.USDCAddress, usdc.deposit).String())
	})
}

func rvDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// A native sweep sends the whole balance, including a transfer not yet confirmed (so not
// covered); once that transfer confirms, only dust is left and it is never covered.
func TestSweepNativeMovesOnlyConfirmedFunds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		eth := f.payOnChain(2000, "ETH")
		f.mine(1) // block A: the payment
		payer, err := devnet.AccountKey(0)
		require.NoError(t, err)
		_, err = devnet.Pay(f.ctx, f.eth, payer, "", eth.deposit, big.NewInt(3e16)) // 0.03 ETH more
		require.NoError(t, err)
		f.mine(1) // block B: the second transfer; A has 2 confirmations, B one
		_, _ = f.a.Watchers[0].Round(f.ctx)
		_, _ = f.m.Round(f.ctx)
		f.rounds(40)
		for _, s := range f.sweepsOf(eth.deposit) {
			t.Logf("sweep status=%s amount=%v", s.Status, s.AmountAsset)
		}
		swept, err := f.a.Store.Read(f.ctx).SweptTotals(devnet.ChainID)
		require.NoError(t, err)
		unswept, err := f.a.Store.Read(f.ctx).UnsweptTotals(devnet.ChainID)
		require.NoError(t, err)
		for k, v := range unswept {
			t.Logf("unswept %s: %s at %v", k, v.Amount, v.Addresses)
		}
		t.Logf("swept %v; eth left at the deposit address: %s", swept, f.tokenBalance("", eth.deposit))
		require.Empty(t, unswept, "the whole balance was swept: nothing is unswept")
	})
}

// A sweep (no withdrawal) whose receipt is already at depth when first seen loses its mined hash.
func TestSweepSeenAtDepthKeepsItsMinedHash(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		eth := f.payOnChain(2000, "ETH")
		for i := 0; i < 40 && len(f.sweepsOf(eth.deposit)) == 0; i++ {
			f.mine(1)
			_, _ = f.a.Watchers[0].Round(f.ctx)
			_, _ = f.m.Round(f.ctx)
		}
		require.Len(t, f.sweepsOf(eth.deposit), 1)
		f.mine(5) // the worker was away (restart, RPC outage): the receipt is deep when next looked at
		_, _ = f.m.Round(f.ctx)
		s := f.sweepsOf(eth.deposit)[0]
		o := outgoing(t, f, *s.SweepTxID)
		t.Logf("outgoing status=%s minedHash=%v minedBlock=%v", o.Status, o.MinedHash, o.MinedBlock)
		require.Equal(t, store.OutgoingConfirmed, o.Status)
		require.NotNil(t, o.MinedHash, "a confirmed transaction keeps the hash that was mined")
	})
}

type pausingChain struct {
	payouts.Chain
	watch   common.Address
	blocked chan struct{}
	release chan struct{}
	armed   bool
}

func (c *pausingChain) CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if c.armed && len(msg.Data) >= 36 && bytes.Equal(msg.Data[:4], []byte{0x70, 0xa0, 0x82, 0x31}) &&
		common.BytesToAddress(msg.Data[4:36]) == c.watch {
		c.armed = false
		close(c.blocked)
		<-c.release
	}
	return c.Chain.CallContract(ctx, msg, block)
}

// Two managers (a lease that lapsed mid-round) both move a topped-up ERC-20 sweep on.
func TestSweepTwoManagersSignOneTokenSweep(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		usdc := f.payOnChain(2000, "USDC")
		f.until("top-up signed", func() bool {
			s := f.sweepsOf(usdc.deposit)
			return len(s) == 1 && s[0].Status == store.SweepToppingUp
		})
		var done bool
		for i := 0; i < 40 && !done; i++ {
			f.mine(1)
			_, _ = f.a.Watchers[0].Round(f.ctx)
			pc := &pausingChain{Chain: f.m.Chain, watch: usdc.deposit, blocked: make(chan struct{}), release: make(chan struct{}), armed: true}
			mb := *f.m
			mb.Chain = pc
			finished := make(chan struct{})
			go func() { _, _ = mb.Round(f.ctx); close(finished) }()
			select {
			case <-finished:
				continue
			case <-pc.blocked:
			}
			_, _ = f.m.Round(f.ctx) // A signs the token sweep
			close(pc.release)
			<-finished // B signs another one and points the sweep at it
			done = true
		}
		require.True(t, done)
		s := f.sweepsOf(usdc.deposit)[0]
		o := outgoing(t, f, *s.SweepTxID)
		t.Logf("sweep status=%s points at nonce %d", s.Status, o.Nonce)
		open, err := f.a.Store.Read(f.ctx).OpenOutgoingTxs(devnet.ChainID, usdc.deposit.Hex())
		require.NoError(t, err)
		t.Logf("open transactions from the deposit address: %d", len(open))
		f.rounds(30)
		for _, s := range f.sweepsOf(usdc.deposit) {
			t.Logf("sweep status=%s amount=%v err=%v", s.Status, s.AmountAsset, rvDeref(s.Error))
		}
		swept, _ := f.a.Store.Read(f.ctx).SweptTotals(devnet.ChainID)
		t.Logf("swept totals %v; usdc at deposit %s", swept, f.tokenBalance(devnet.USDCAddress, usdc.deposit))
		require.Len(t, open, 1, "one sweep transaction signed for one sweep")
	})
}

// How much of a gas top-up stays at the deposit address after its ERC-20 sweep.
func TestSweepTopupIsWhatTheSweepNeeds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		usdc := f.payOnChain(2000, "USDC")
		f.until("swept", func() bool {
			s := f.sweepsOf(usdc.deposit)
			return len(s) == 1 && s[0].Status == store.SweepConfirmed
		})
		s := f.sweepsOf(usdc.deposit)[0]
		topup := outgoing(t, f, *s.TopupTxID)
		left := f.tokenBalance("", usdc.deposit)
		t.Logf("top-up %s wei, left at the address after the sweep %s wei (%.0f%%)", topup.AmountAsset, left,
			100*float64(left.Int64())/float64(topup.AmountAsset.IntPart()))
		unswept, err := f.a.Store.Read(f.ctx).UnsweptTotals(devnet.ChainID)
		require.NoError(t, err)
		t.Logf("treasury unswept: %v", unswept)
		require.True(t, left.Cmp(topup.AmountAsset.BigInt()) < 0, "the sweep burnt part of its top-up")
		require.Empty(t, unswept)
	})
}

// A withdrawal to a payment's deposit address is refused (it would be a sale the merchant paid
// itself from its balance); USDC the hot wallet sends there anyway — an operator's own transfer —
// is still that payment's money: the watcher never skips it like a gas top-up.
func TestPayoutToADepositAddressIsAPayment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10"})
		f.fund(10_000)
		f.setToken("USDC")
		c, err := f.a.Payments.Create(f.ctx, f.merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
			OrderID: "invoice-1", Amount: ptr(int64(2000))}, nil)
		require.NoError(t, err)
		to := common.HexToAddress(c.Payment.DepositAddress.Address)
		_, err = f.a.Withdrawals.Create(f.ctx, f.merchant, withdrawalInput(2000, to), nil)
		var refused *domain.InvalidInputError
		require.ErrorAs(t, err, &refused)
		require.Equal(t, domain.CodeRecipientNotAllowed, refused.Code)
		hot, err := devnet.AccountKey(devnet.HotWalletAccount)
		require.NoError(t, err)
		_, err = devnet.Pay(f.ctx, f.eth, hot, devnet.USDCAddress, to, big.NewInt(20_000_000))
		require.NoError(t, err)
		f.rounds(30)
		t.Logf("USDC at the deposit address %s", f.tokenBalance(devnet.USDCAddress, to))
		p, err := f.a.Store.Read(f.ctx).PaymentByID(c.Payment.ID, f.a.Catalog)
		require.NoError(t, err)
		trs, err := f.a.Store.Read(f.ctx).PaymentTransfers(c.Payment.ID)
		require.NoError(t, err)
		t.Logf("payment %s, transfers recorded %d", p.Status, len(trs))
		require.Len(t, trs, 1, "the USDC that arrived at the payment's address is recorded")
	})
}

func ptr[T any](v T) *T { return &v }
