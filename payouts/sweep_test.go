package payouts_test

import (
	"math/big"
	"os"

	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// paid is a payment paid on the devnet in one token.
type paid struct {
	p       domain.Payment
	q       domain.Quote
	token   string // contract, "" for ETH
	deposit common.Address
}

// payOnChain creates a payment of cents and pays its devnet quote in symbol from account 0.
func (f *fixture) payOnChain(cents int64, symbol string) paid {
	f.t.Helper()
	c, err := f.a.Payments.Create(f.ctx, f.merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
		OrderID: "order-" + uuid.NewString()[:8], Amount: &cents}, nil)
	require.NoError(f.t, err)
	var q domain.Quote
	for _, x := range c.Payment.Quotes {
		if x.Token.Chain.ID == devnet.ChainID && x.Token.Symbol == symbol {
			q = x
		}
	}
	require.NotEqual(f.t, uuid.Nil, q.ID, "a devnet %s quote", symbol)
	token := ""
	if q.Token.AssetType == domain.ERC20 {
		token = q.Token.ContractAddress
	}
	payer, err := devnet.AccountKey(0)
	require.NoError(f.t, err)
	deposit := common.HexToAddress(c.Payment.DepositAddress.Address)
	_, err = devnet.Pay(f.ctx, f.eth, payer, token, deposit, q.ExpectedAmountAsset.BigInt())
	require.NoError(f.t, err)
	return paid{p: c.Payment, q: q, token: token, deposit: deposit}
}

// rounds runs n watcher and payout rounds, mining a block before each.
func (f *fixture) rounds(n int) {
	for range n {
		f.mine(1)
		_, _ = f.a.Watchers[0].Round(f.ctx)
		_, _ = f.m.Round(f.ctx)
	}
}

// until runs watcher and payout rounds, mining a block each time, until done says so.
func (f *fixture) until(what string, done func() bool) {
	f.t.Helper()
	for range 80 {
		f.mine(1)
		_, _ = f.a.Watchers[0].Round(f.ctx)
		_, _ = f.m.Round(f.ctx)
		if done() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("%s: not done after 80 rounds", what)
}

func (f *fixture) sweepsOf(address common.Address) []store.Sweep {
	f.t.Helper()
	all, err := f.a.Store.Read(f.ctx).SweepsSince(devnet.ChainID, time.Time{})
	require.NoError(f.t, err)
	var out []store.Sweep
	for _, s := range all {
		if common.HexToAddress(s.Address) == address {
			out = append(out, s)
		}
	}
	return out
}

// Deposit addresses swept into the hot wallet by the transaction manager: native ETH by a
// transfer of the balance less gas, an ERC-20 after a gas top-up from the hot wallet; below the
// threshold only on request. The chain's balances and the ledger are checked at each step.
func TestSweepNativeAndERC20(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		dbURL := testdb.URL(t, backend)
		f := newFixture(t, opts{backend: backend, dbURL: dbURL, sweep: true, sweepMin: "10"})
		require.NotNil(t, f.m.Deposits, "this process holds the deposit key")
		if backend == "sqlite" {
			st, err := os.Stat(app.DevDepositKeyFile(dbURL))
			require.NoError(t, err, "the embedded development key keeps its private half beside the database")
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		}
		hot := f.m.Wallet.Address()
		usdc := f.payOnChain(2000, "USDC")
		eth := f.payOnChain(2000, "ETH")
		usdt := f.payOnChain(400, "USDT") // $4: below the $10 threshold
		hotUSDC, hotETH, hotUSDT := f.tokenBalance(devnet.USDCAddress, hot), f.tokenBalance("", hot), f.tokenBalance(devnet.USDTAddress, hot)
		const credited = 1980 + 1980 + 396 // the three payments less the 1% merchant fee

		f.until("both sweeps above the threshold confirmed", func() bool {
			a, b := f.sweepsOf(usdc.deposit), f.sweepsOf(eth.deposit)
			return len(a) == 1 && a[0].Status == store.SweepConfirmed && len(b) == 1 && b[0].Status == store.SweepConfirmed
		})
		for _, x := range []paid{usdc, eth, usdt} {
			got, err := f.a.Store.Read(f.ctx).PaymentByID(x.p.ID, f.a.Catalog)
			require.NoError(t, err)
			require.Equal(t, domain.PaymentCompleted, got.Status)
		}
		// USDC: all of it at the hot wallet; the deposit address kept only what is left of its gas top-up.
		sw := f.sweepsOf(usdc.deposit)[0]
		require.NotNil(t, sw.TopupTxID, "an ERC-20 sweep needs gas first")
		assert.Equal(t, usdc.q.ExpectedAmountAsset.String(), sw.AmountAsset.String())
		assert.Equal(t, "0", f.tokenBalance(devnet.USDCAddress, usdc.deposit).String())
		assert.Equal(t, new(big.Int).Add(hotUSDC, usdc.q.ExpectedAmountAsset.BigInt()).String(),
			f.tokenBalance(devnet.USDCAddress, hot).String())
		// ETH: the balance less the gas at the sweep's fee cap; what the gas did not use stays.
		sw = f.sweepsOf(eth.deposit)[0]
		assert.Nil(t, sw.TopupTxID)
		left := f.tokenBalance("", eth.deposit)
		assert.Equal(t, eth.q.ExpectedAmountAsset.String(), decimal.NewFromBigInt(left, 0).Add(*sw.AmountAsset).Add(sweepGasCost(t, f, sw)).String(),
			"swept + gas + left = paid")
		// The hot wallet got the ETH sweep and paid the USDC top-up (its value and gas).
		topup := outgoing(t, f, *f.sweepsOf(usdc.deposit)[0].TopupTxID)
		gotETH := new(big.Int).Sub(f.tokenBalance("", hot), hotETH)
		want := new(big.Int).Sub(sw.AmountAsset.BigInt(), topup.AmountAsset.BigInt())
		want.Sub(want, txCost(t, f, *topup.MinedHash))
		assert.Equal(t, want.String(), gotETH.String())
		// Our own top-up to a deposit address is no customer transfer, and sweeps move no ledger money.
		trs, err := f.a.Store.Read(f.ctx).PaymentTransfers(usdc.p.ID)
		require.NoError(t, err)
		assert.Len(t, trs, 1, "the USDC payment's one transfer; the top-up is not recorded")
		assert.Equal(t, int64(credited), f.balance())
		assert.Empty(t, f.sweepsOf(usdt.deposit), "below the threshold: not swept")
		assert.Equal(t, hotUSDT.String(), f.tokenBalance(devnet.USDTAddress, hot).String())

		// An operator's request sweeps below the threshold.
		req := store.SweepRequest{ID: uuid.Must(uuid.NewV7()), ChainID: devnet.ChainID, CreatedAt: time.Now().UTC()}
		require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error { return tx.InsertSweepRequest(req) }))
		f.until("the requested sweep done", func() bool {
			r, err := f.a.Store.Read(f.ctx).GetSweepRequest(req.ID)
			require.NoError(t, err)
			return r.DoneAt != nil
		})
		us := f.sweepsOf(usdt.deposit)
		require.Len(t, us, 1)
		assert.Equal(t, store.SweepConfirmed, us[0].Status)
		assert.Equal(t, new(big.Int).Add(hotUSDT, usdt.q.ExpectedAmountAsset.BigInt()).String(), f.tokenBalance(devnet.USDTAddress, hot).String())

		// The treasury's figures from the store: everything swept, nothing left unswept of the tokens.
		swept, err := f.a.Store.Read(f.ctx).SweptTotals(devnet.ChainID)
		require.NoError(t, err)
		unswept, err := f.a.Store.Read(f.ctx).UnsweptTotals(devnet.ChainID)
		require.NoError(t, err)
		assert.Equal(t, usdc.q.ExpectedAmountAsset.String(), swept[usdc.q.Token.ID].String())
		assert.Equal(t, usdt.q.ExpectedAmountAsset.String(), swept[usdt.q.Token.ID].String())
		assert.Empty(t, unswept, "every transfer is covered by a finished sweep")
		assert.Equal(t, int64(credited), f.balance())
	})
}

func outgoing(t testing.TB, f *fixture, id uuid.UUID) store.OutgoingTx {
	t.Helper()
	all, err := f.a.Store.Read(f.ctx).OutgoingTxsByID([]uuid.UUID{id})
	require.NoError(t, err)
	require.Len(t, all, 1)
	return all[0]
}

func txCost(t *testing.T, f *fixture, hash string) *big.Int {
	t.Helper()
	rc, err := f.eth.TransactionReceipt(f.ctx, common.HexToHash(hash))
	require.NoError(t, err)
	return new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
}

func sweepGasCost(t *testing.T, f *fixture, s store.Sweep) decimal.Decimal {
	t.Helper()
	o := outgoing(t, f, *s.SweepTxID)
	return decimal.NewFromBigInt(txCost(t, f, *o.MinedHash), 0)
}
