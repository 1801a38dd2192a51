package payouts_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
)

// flakyChain wraps the manager's chain: fees it suggests can be forced low (a stuck
// transaction), and broadcasts can fail (the RPC down).
type flakyChain struct {
	payouts.Chain
	lowFees  atomic.Bool
	sendDown atomic.Bool
	sends    atomic.Int64
}

func (c *flakyChain) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	if c.lowFees.Load() {
		return big.NewInt(1), nil
	}
	return c.Chain.SuggestGasTipCap(ctx)
}

func (c *flakyChain) HeaderBaseFee(ctx context.Context) (*big.Int, error) {
	if c.lowFees.Load() {
		return big.NewInt(1), nil // a fee cap far under the base fee: never mined
	}
	return c.Chain.HeaderBaseFee(ctx)
}

func (c *flakyChain) SendRawTransaction(ctx context.Context, raw []byte) (common.Hash, error) {
	c.sends.Add(1)
	if c.sendDown.Load() {
		return common.Hash{}, errors.New("dial tcp 127.0.0.1:8545: connect: connection refused")
	}
	return c.Chain.SendRawTransaction(ctx, raw)
}

func (f *fixture) flaky() *flakyChain {
	c := &flakyChain{Chain: f.m.Chain}
	f.m.Chain = c
	return c
}

// A transaction stuck on a fee too low is replaced by a bump at the same nonce; every attempt
// is kept, and only one is mined: the recipient is paid once.
func TestStuckPayoutIsBumped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend})
		c := f.flaky()
		f.fund(10_000)
		w, to := f.withdraw(1000)
		c.lowFees.Store(true)
		require.Equal(t, 1, f.round().Signed)
		c.lowFees.Store(false)
		f.mine(3)
		f.round()
		assert.Equal(t, "0", f.tokenBalance(devnet.USDCAddress, to).String(), "the low-fee transaction is not mined")

		f.m.Config.BumpAfter = 0 // now: the next round bumps
		f.round()
		f.m.Config.BumpAfter = time.Hour
		o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
		require.NoError(t, err)
		require.Len(t, o.Attempts, 2, "the first attempt is kept")
		first, second := o.Attempts[0], o.Attempts[1]
		assert.True(t, second.TipCap.GreaterThanOrEqual(first.TipCap.Mul(decimalOf("1.1"))), "tip +10 %% at least")
		assert.True(t, second.FeeCap.GreaterThanOrEqual(first.FeeCap.Mul(decimalOf("1.1"))), "fee cap +10 %% at least")
		f.settleAll(w.ID)
		require.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w.ID).Status)
		assert.Equal(t, "10000000", f.tokenBalance(devnet.USDCAddress, to).String())
		assert.Equal(t, second.Hash, f.withdrawal(w.ID).Receipt.TxHash, "the bump is the one mined")
		_, err = f.eth.TransactionReceipt(f.ctx, common.HexToHash(first.Hash))
		assert.Error(t, err, "the stuck attempt never mined")
	})
}

// A broadcast while the RPC is down keeps the stored bytes; they go out when it is back.
func TestBroadcastWhileRPCDown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend})
		c := f.flaky()
		f.m.Config.ResendAfter = 0
		f.fund(10_000)
		w, to := f.withdraw(1500)
		c.sendDown.Store(true)
		require.Equal(t, 1, f.round().Signed, "signed and stored even though the broadcast fails")
		o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
		require.NoError(t, err)
		require.Nil(t, o.Attempts[0].BroadcastAt)
		require.NotNil(t, o.Attempts[0].LastError)
		f.mine(2)
		f.round()
		assert.Equal(t, domain.WithdrawalProcessing, f.withdrawal(w.ID).Status)
		c.sendDown.Store(false)
		f.settleAll(w.ID)
		assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w.ID).Status)
		assert.Equal(t, "15000000", f.tokenBalance(devnet.USDCAddress, to).String())
		o, err = f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
		require.NoError(t, err)
		assert.Len(t, o.Attempts, 1, "the same bytes, never re-signed")
	})
}

// A reorg drops the payout's receipt before its confirmations: the stored bytes are sent again
// and the recipient is paid once.
func TestReorgDropsPayoutReceipt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend})
		f.m.Config.ResendAfter = 0
		f.fund(10_000)
		w, to := f.withdraw(2000)
		f.round()
		f.mine(1)
		f.round()
		o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
		require.NoError(t, err)
		require.Equal(t, store.OutgoingMined, o.Status)
		rc, err := f.eth.TransactionReceipt(f.ctx, common.HexToHash(o.Attempts[0].Hash))
		require.NoError(t, err)
		parent, err := f.eth.HeaderByNumber(f.ctx, new(big.Int).Sub(rc.BlockNumber, big.NewInt(1)))
		require.NoError(t, err)
		f.dn.Backend().Rollback()
		require.NoError(t, f.dn.Backend().Fork(parent.Hash()))
		f.dn.Backend().Rollback() // the reorged-out transaction does not come back by itself
		f.mine(2)
		f.settleAll(w.ID)
		assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w.ID).Status)
		assert.Equal(t, "20000000", f.tokenBalance(devnet.USDCAddress, to).String(), "paid once")
	})
}

// A hot wallet that cannot fund a payout leaves the withdrawal pending with the reason; once
// funded, it goes out.
func TestInsufficientHotWalletThenFunded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f, hot := newFixtureWithHotWallet(t, backend)
		assert.Equal(t, hot, f.m.Wallet.Address())
		f.fund(10_000)
		w, to := f.withdraw(2500)
		res := f.round()
		assert.Equal(t, 0, res.Signed)
		assert.Equal(t, 1, res.Waiting)
		assert.Contains(t, res.Blocked, "holds 0 USDC")
		assert.Equal(t, domain.WithdrawalPending, f.withdrawal(w.ID).Status)
		assert.Contains(t, f.a.PayoutStatus()["eip155:1337"], hot.Hex())

		// The token, but no gas money yet: still waiting, now for the native token.
		f.fundHot(devnet.USDCAddress, big.NewInt(100_000_000))
		f.mine(1)
		res = f.round()
		assert.Equal(t, 1, res.Waiting)
		assert.Contains(t, res.Blocked, "holds 0 wei")
		assert.Equal(t, domain.WithdrawalPending, f.withdrawal(w.ID).Status)

		f.fundHot("", new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
		f.mine(1)
		f.settleAll(w.ID)
		assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w.ID).Status)
		assert.Equal(t, "25000000", f.tokenBalance(devnet.USDCAddress, to).String())
	})
}

// 64 concurrent withdrawals draining a balance: the balance is never overdrawn, and every one
// that was accepted is paid exactly once, at consecutive nonces.
func TestSixtyFourConcurrentWithdrawals(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend})
		f.fund(5_000) // $49.50 net: room for 49 withdrawals of $1.00
		type made struct {
			w  domain.Withdrawal
			to common.Address
		}
		var mu sync.Mutex
		var ok []made
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, _ := crypto.GenerateKey()
				to := crypto.PubkeyToAddress(k.PublicKey)
				w, err := f.createWithdrawal(100, to)
				if err == nil {
					mu.Lock()
					ok = append(ok, made{w, to})
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, ok, 49, "exactly what the balance allows")
		assert.Equal(t, int64(50), f.balance())
		ids := make([]uuid.UUID, len(ok))
		for i, m := range ok {
			ids[i] = m.w.ID
		}
		f.settleAll(ids...)
		for _, m := range ok {
			assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(m.w.ID).Status)
			assert.Equal(t, "1000000", f.tokenBalance(devnet.USDCAddress, m.to).String())
		}
		nonces := map[int64]bool{}
		for _, id := range ids {
			o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(id)
			require.NoError(t, err)
			nonces[o.Nonce] = true
		}
		assert.Len(t, nonces, 49, "one nonce each")
	})
}

func (f *fixture) createWithdrawal(cents int64, to common.Address) (domain.Withdrawal, error) {
	return f.a.Withdrawals.Create(f.ctx, f.merchant, withdrawalInput(cents, to), nil)
}

// Two processes on one PostgreSQL, both running their payout managers against one devnet,
// never send one withdrawal twice.
func TestTwoProcessesPayOnce(t *testing.T) {
	dn, err := devnet.Start(context.Background(), devnet.Config{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dn.Close() })
	f := newFixture(t, opts{backend: "postgres", dn: dn})
	g := newFixture(t, opts{dbURL: f.a.Cfg.DatabaseURL, dn: dn, shared: true})
	g.merchant = f.merchant
	f.fund(10_000)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, x := range []*fixture{f, g} {
		x.m.Config.Interval = 20 * time.Millisecond
		rt := &worker.Runtime{Leases: x.a.Store, Holder: fmt.Sprintf("process-%d", i), Log: x.m.Log}
		wg.Add(1)
		go func() { defer wg.Done(); rt.Run(ctx, x.m.Loop()) }()
	}
	type made struct {
		id uuid.UUID
		to common.Address
	}
	var all []made
	for i := range 10 {
		w, to := f.withdraw(int64(100 + i))
		all = append(all, made{w.ID, to})
		if i == 5 {
			g.a.Close() // one process goes away mid-way
		}
	}
	require.Eventually(t, func() bool {
		f.mine(1)
		for _, m := range all {
			if f.withdrawal(m.id).Status != domain.WithdrawalCompleted {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond)
	cancel()
	wg.Wait()
	for i, m := range all {
		want := big.NewInt(int64(100+i) * 10_000) // cents → USDC units
		assert.Equal(t, want.String(), f.tokenBalance(devnet.USDCAddress, m.to).String(), "paid once")
	}
}
