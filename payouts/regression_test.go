package payouts_test

import (
	"context"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
)

// Found in review (fixed): while the broadcast keeps failing (RPC down), every BumpAfter signs a new attempt at
// +12.5 %: the fees of a transaction that never reached a node grow without bound.
func TestNoBumpWhileNeverBroadcast(t *testing.T) {
	f := newFixture(t, opts{backend: "sqlite"})
	c := f.flaky()
	f.fund(10_000)
	w, _ := f.withdraw(1000)
	c.sendDown.Store(true)
	require.Equal(t, 1, f.round().Signed)
	f.m.Config.BumpAfter = 0 // one bump per round = one bump per 3 min of outage in production
	for range 40 {           // two hours of outage
		_, _ = f.m.Round(f.ctx)
	}
	c.sendDown.Store(false)
	f.m.Config.BumpAfter = time.Hour
	f.settleAll(w.ID)
	o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
	require.NoError(t, err)
	first, last := o.Attempts[0], o.Attempts[len(o.Attempts)-1]
	t.Logf("attempts %d, first tip %s fee cap %s, last tip %s fee cap %s", len(o.Attempts), first.TipCap, first.FeeCap, last.TipCap, last.FeeCap)
	rc, err := f.eth.TransactionReceipt(f.ctx, common.HexToHash(f.withdrawal(w.ID).Receipt.TxHash))
	require.NoError(t, err)
	t.Logf("paid effective gas price %s", rc.EffectiveGasPrice)
	assert.True(t, last.TipCap.LessThan(first.TipCap.Mul(decimalOf("2"))), "tip of a never-broadcast tx escalated %s -> %s", first.TipCap, last.TipCap)
}

// fixedFees reports fixed fees (so a test can compute the gas money needed).
type fixedFees struct {
	payouts.Chain
}

func (c *fixedFees) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	return big.NewInt(1e9), nil
}
func (c *fixedFees) HeaderBaseFee(ctx context.Context) (*big.Int, error) { return big.NewInt(2e9), nil }

// Found in review (fixed): gasShort does not reserve the gas of signed, unmined ERC-20 payouts: with ETH for one
// transfer, two are signed (both withdrawals processing, two nonces taken); the node refuses
// the second.
func TestGasReservedForSignedPayouts(t *testing.T) {
	f, _ := newFixtureWithHotWallet(t, "sqlite")
	f.m.Chain = &fixedFees{Chain: f.m.Chain}
	f.fundHot(devnet.USDCAddress, big.NewInt(100_000_000))
	// fee cap 5 gwei × ~80k gas ≈ 0.0004 ETH per transfer: 0.0005 ETH is enough for one.
	f.fundHot("", big.NewInt(1_200_000_000_000_000))
	f.mine(1)
	f.fund(10_000)
	w1, _ := f.withdraw(1000)
	w2, _ := f.withdraw(1000)
	res, err := f.m.Round(f.ctx)
	t.Logf("round: %+v err %v", res, err)
	o2, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w2.ID)
	if err == nil {
		t.Logf("w2 nonce %d gas limit %d last error %v", o2.Nonce, o2.GasLimit, deref(o2.Attempts[0].LastError))
	}
	assert.Equal(t, domain.WithdrawalProcessing, f.withdrawal(w1.ID).Status)
	assert.Equal(t, domain.WithdrawalPending, f.withdrawal(w2.ID).Status, "no gas money for a second transfer: should wait pending")
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Found in review (fixed): 50 unfundable withdrawals (the hot wallet has no USDC) at the head of the queue stop an
// ETH withdrawal the wallet can pay, on the same chain, forever.
func TestUnfundableWithdrawalsDoNotBlockOthers(t *testing.T) {
	f, _ := newFixtureWithHotWallet(t, "sqlite")
	f.fundHot("", new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	f.mine(1)
	f.fund(10_000)
	for range 50 {
		f.withdraw(100) // USDC, which the hot wallet does not hold
	}
	f.setToken("ETH")
	w, _ := f.withdraw(100)
	for range 5 {
		res := f.round()
		t.Logf("round: signed %d waiting %d blocked %q", res.Signed, res.Waiting, res.Blocked)
		f.mine(1)
	}
	assert.NotEqual(t, domain.WithdrawalPending, f.withdrawal(w.ID).Status, "the ETH withdrawal, fundable, never signed")
}

// laggingReceipts answers "not found" for receipts while lag is set, and a transient error
// (rate limit / "transaction indexing is in progress") while flaky is set.
type laggingReceipts struct {
	payouts.Chain
	lag, flaky atomic.Bool
	commit     func()
	mineOnSend atomic.Bool
}

func (c *laggingReceipts) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	if c.lag.Load() {
		return nil, chain.ErrNotFound
	}
	if c.flaky.Load() {
		return nil, errors.New("429 Too Many Requests")
	}
	return c.Chain.TransactionReceipt(ctx, h)
}

func (c *laggingReceipts) SendRawTransaction(ctx context.Context, raw []byte) (common.Hash, error) {
	if c.mineOnSend.Load() {
		c.mineOnSend.Store(false)
		c.commit() // the pending transaction is mined just before our resend reaches the node
		c.lag.Store(false)
		c.flaky.Store(true)
	}
	return c.Chain.SendRawTransaction(ctx, raw)
}

// Found in review (fixed): a resend that races the transaction being mined gets "nonce too low"; one transient
// error of the receipt lookup then marks the paid payout `conflict` forever: the withdrawal
// stays processing although the recipient was paid, and the operator is told a stranger used
// the nonce.
func TestNoFalseConflictOnTransientReceiptError(t *testing.T) {
	f := newFixture(t, opts{backend: "sqlite"})
	c := &laggingReceipts{Chain: f.m.Chain, commit: func() { f.dn.Commit() }}
	f.m.Chain = c
	f.m.Config.ResendAfter = 0
	f.fund(10_000)
	w, to := f.withdraw(1000)
	require.Equal(t, 1, f.round().Signed)
	c.lag.Store(true) // the receipt check of the next round finds nothing (tx still pending)
	c.mineOnSend.Store(true)
	_, _ = f.m.Round(f.ctx)
	c.flaky.Store(false)
	for range 5 {
		_, _ = f.m.Round(f.ctx)
		f.mine(1)
	}
	o, err := f.a.Store.Read(f.ctx).OutgoingForWithdrawal(w.ID)
	require.NoError(t, err)
	t.Logf("outgoing %s error %s; recipient balance %s; withdrawal %s", o.Status, deref(o.Error),
		f.tokenBalance(devnet.USDCAddress, to), f.withdrawal(w.ID).Status)
	assert.NotEqual(t, store.OutgoingConflict, o.Status)
	assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w.ID).Status)
}

// Found in review (fixed): with native money for one transfer's gas, two ERC-20 payouts were both
// signed and the second refused by the node, its nonce taken and its fees bumped until it
// could never go out. Now the second waits (pending, the reason said) until the wallet is
// funded, and then both are paid.
func TestGasShortThenFundedNotStuck(t *testing.T) {
	f, _ := newFixtureWithHotWallet(t, "sqlite")
	f.m.Chain = &fixedFees{Chain: f.m.Chain}
	f.fundHot(devnet.USDCAddress, big.NewInt(100_000_000))
	f.fundHot("", big.NewInt(1_200_000_000_000_000))
	f.mine(1)
	f.fund(10_000)
	w1, _ := f.withdraw(1000)
	w2, _ := f.withdraw(1000)
	res := f.round()
	require.Equal(t, 1, res.Signed, "gas for one transfer: one signed")
	assert.Equal(t, 1, res.Waiting)
	assert.Contains(t, res.Blocked, "wei of the native token")
	assert.Equal(t, domain.WithdrawalPending, f.withdrawal(w2.ID).Status)
	f.fundHot("", new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	f.settleAll(w1.ID, w2.ID)
	assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w1.ID).Status)
	assert.Equal(t, domain.WithdrawalCompleted, f.withdrawal(w2.ID).Status)
}
