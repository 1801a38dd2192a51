package payouts_test

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
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// confirmedAll reports whether every address has exactly one sweep, confirmed.
func (f *fixture) confirmedAll(ps ...paid) bool {
	for _, p := range ps {
		s := f.sweepsOf(p.deposit)
		if len(s) != 1 || s[0].Status != store.SweepConfirmed {
			return false
		}
	}
	return true
}

// checkBatched asserts that ps were swept by one batch of the hot wallet, with no gas ever
// sent to their deposit addresses, and all of their token at the hot wallet.
func (f *fixture) checkBatched(t *testing.T, token string, hotBefore *big.Int, ps ...paid) store.OutgoingTx {
	t.Helper()
	hot := f.m.Wallet.Address()
	first := f.sweepsOf(ps[0].deposit)[0]
	require.NotNil(t, first.SweepTxID)
	batch := outgoing(t, f, *first.SweepTxID)
	assert.Equal(t, store.OutgoingConfirmed, batch.Status)
	assert.Equal(t, common.HexToAddress(batch.Sender), hot, "the hot wallet sends the batch")
	assert.Nil(t, batch.KeyIndex)
	assert.Equal(t, devnet.SweepBatchAddress, batch.TxTo)
	want := new(big.Int).Set(hotBefore)
	for _, p := range ps {
		s := f.sweepsOf(p.deposit)[0]
		assert.Nil(t, s.TopupTxID, "no gas top-up")
		assert.Equal(t, *first.SweepTxID, *s.SweepTxID, "one batch for all")
		assert.Equal(t, p.q.ExpectedAmountAsset.String(), s.AmountAsset.String())
		assert.Equal(t, "0", f.tokenBalance(token, p.deposit).String(), "nothing left of the token")
		assert.Equal(t, "0", f.tokenBalance("", p.deposit).String(), "no native token, ever, at the deposit address")
		want.Add(want, p.q.ExpectedAmountAsset.BigInt())
	}
	assert.Equal(t, want.String(), f.tokenBalance(token, hot).String(), "the hot wallet got every payment")
	return batch
}

// Deposit addresses swept without gas top-ups, on the devnet, through the transaction manager:
// USDC and USDT by EIP-7702 delegation (two batches: one per token), then USDC by EIP-3009
// authorizations and by EIP-2612 permits (one batch each), while USDT, with neither extension,
// keeps its gas top-up when EIP-7702 is not to be used. Balances on chain, the sweeps' accounting
// and the ledger are checked at each step.
func TestSweepBatchesWithoutTopUps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "10",
			methods: []payouts.SweepMethod{payouts.SweepEIP7702}})
		hot := f.m.Wallet.Address()
		balance := f.balance()

		usdcBefore, usdtBefore := f.tokenBalance(devnet.USDCAddress, hot), f.tokenBalance(devnet.USDTAddress, hot)
		u := []paid{f.payOnChain(2000, "USDC"), f.payOnChain(2100, "USDC"), f.payOnChain(2200, "USDC")}
		usdt := f.payOnChain(2300, "USDT")
		f.until("the EIP-7702 batches confirmed", func() bool { return f.confirmedAll(append(u, usdt)...) })
		b := f.checkBatched(t, devnet.USDCAddress, usdcBefore, u...)
		assert.NotEmpty(t, b.AuthList, "a SetCode transaction: the deposit accounts' delegations ride in it")
		f.checkBatched(t, devnet.USDTAddress, usdtBefore, usdt)
		for _, p := range append(u, usdt) {
			code, err := f.eth.CodeAt(f.ctx, p.deposit, nil)
			require.NoError(t, err)
			assert.Len(t, code, 23, "delegated to the sweep delegate")
		}
		balance += 1980 + 2079 + 2178 + 2277 // the payments less the 1% fee: sweeps move no ledger money
		assert.Equal(t, balance, f.balance())

		f.m.Config.SweepMethods = []payouts.SweepMethod{payouts.SweepEIP3009}
		usdcBefore = f.tokenBalance(devnet.USDCAddress, hot)
		u = []paid{f.payOnChain(2000, "USDC"), f.payOnChain(2500, "USDC")}
		usdt = f.payOnChain(2000, "USDT")
		f.until("the EIP-3009 batch and USDT's top-up sweep confirmed", func() bool { return f.confirmedAll(append(u, usdt)...) })
		b = f.checkBatched(t, devnet.USDCAddress, usdcBefore, u...)
		assert.Empty(t, b.AuthList)
		require.NotNil(t, f.sweepsOf(usdt.deposit)[0].TopupTxID, "USDT has neither extension: topped up")

		f.m.Config.SweepMethods = []payouts.SweepMethod{payouts.SweepEIP2612}
		usdcBefore = f.tokenBalance(devnet.USDCAddress, hot)
		u = []paid{f.payOnChain(3000, "USDC"), f.payOnChain(3100, "USDC")}
		f.until("the EIP-2612 batch confirmed", func() bool { return f.confirmedAll(u...) })
		f.checkBatched(t, devnet.USDCAddress, usdcBefore, u...)

		unswept, err := f.a.Store.Read(f.ctx).UnsweptTotals(devnet.ChainID)
		require.NoError(t, err)
		assert.Empty(t, unswept, "every transfer is covered by a finished sweep")
	})
}

// One pull of a batch fails on chain (its tokens moved away after the balance the sweep read);
// the others go through in the same transaction, the failed sweep lets its transfers go, and the
// next pass finds the address empty ("moved by other means"): every transfer accounted for.
func TestSweepBatchOnePullFails(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, opts{backend: backend, dbURL: testdb.URL(t, backend), sweep: true, sweepMin: "1000000",
			methods: []payouts.SweepMethod{payouts.SweepEIP3009}})
		u := []paid{f.payOnChain(2000, "USDC"), f.payOnChain(2100, "USDC"), f.payOnChain(2200, "USDC")}
		f.until("the payments recorded and confirmed", func() bool {
			c, err := f.a.Store.Read(f.ctx).SweepCandidates(devnet.ChainID, 100)
			require.NoError(t, err)
			return len(c) == 3
		})
		// The second address's key signs its USDC away to account 0 (who submits it): mined in
		// the newest block, above the depth the sweeper reads balances at.
		key, err := f.m.Deposits.Key(uint32(u[1].p.DepositAddress.DerivationIndex))
		require.NoError(t, err)
		require.Equal(t, u[1].deposit, crypto.PubkeyToAddress(key.PublicKey))
		steal(t, f, key, u[1].q.ExpectedAmountAsset.BigInt())

		req := store.SweepRequest{ID: uuid.Must(uuid.NewV7()), ChainID: devnet.ChainID, CreatedAt: time.Now().UTC()}
		require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error { return tx.InsertSweepRequest(req) }))
		_, err = f.m.Round(f.ctx) // signs the batch of three at the balances two blocks back
		require.NoError(t, err)
		f.until("the sweep request done", func() bool {
			r, err := f.a.Store.Read(f.ctx).GetSweepRequest(req.ID)
			require.NoError(t, err)
			return r.DoneAt != nil
		})
		a, b, c := f.sweepsOf(u[0].deposit), f.sweepsOf(u[1].deposit), f.sweepsOf(u[2].deposit)
		require.Len(t, a, 1)
		require.Len(t, c, 1)
		assert.Equal(t, store.SweepConfirmed, a[0].Status)
		assert.Equal(t, store.SweepConfirmed, c[0].Status)
		require.Len(t, b, 2, "the failed sweep, then the empty one")
		assert.Equal(t, store.SweepFailed, b[0].Status)
		assert.Equal(t, *a[0].SweepTxID, *b[0].SweepTxID, "in the same batch")
		require.NotNil(t, b[0].Error)
		assert.Contains(t, *b[0].Error, "transfer amount exceeds balance")
		assert.Equal(t, store.SweepEmpty, b[1].Status)
		unswept, err := f.a.Store.Read(f.ctx).UnsweptTotals(devnet.ChainID)
		require.NoError(t, err)
		assert.Empty(t, unswept)
	})
}

// steal moves amount of USDC from key's address to account 0 by an EIP-3009 authorization that
// account 0 submits (the address holds no gas), and mines it.
func steal(t *testing.T, f *fixture, key *ecdsa.PrivateKey, amount *big.Int) {
	t.Helper()
	usdc := common.HexToAddress(devnet.USDCAddress)
	a := tokensig.Authorization{From: crypto.PubkeyToAddress(key.PublicKey), To: devnet.AccountAddress(0), Value: amount,
		ValidAfter: new(big.Int), ValidBefore: big.NewInt(time.Now().Add(time.Hour).Unix()), Nonce: common.Hash{0x5e}}
	sig, err := tokensig.Sign(key, tokensig.Domain{Name: "USD Coin (devnet)", Version: "2", ChainID: devnet.ChainID, Contract: usdc}, a)
	require.NoError(t, err)
	data, err := devnet.TokenABI().Pack("transferWithAuthorization", a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore,
		[32]byte(a.Nonce), sig.V, [32]byte(sig.R), [32]byte(sig.S))
	require.NoError(t, err)
	payer, err := devnet.AccountKey(0)
	require.NoError(t, err)
	nonce, err := f.eth.PendingNonceAt(f.ctx, devnet.AccountAddress(0))
	require.NoError(t, err)
	tip, err := f.eth.SuggestGasTipCap(f.ctx)
	require.NoError(t, err)
	head, err := f.eth.HeaderByNumber(f.ctx, nil)
	require.NoError(t, err)
	tx, err := types.SignNewTx(payer, types.LatestSignerForChainID(big.NewInt(devnet.ChainID)), &types.DynamicFeeTx{Nonce: nonce,
		GasTipCap: tip, GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip), Gas: 200_000, To: &usdc, Data: data})
	require.NoError(t, err)
	require.NoError(t, f.eth.SendTransaction(f.ctx, tx))
	for range 50 {
		f.mine(1)
		if rc, err := f.eth.TransactionReceipt(f.ctx, tx.Hash()); err == nil {
			require.Equal(t, types.ReceiptStatusSuccessful, rc.Status)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the theft was not mined")
}

// heavyGas makes every gas estimate 40 times what the node says: a chain where pulls cost far
// more (EIP-8037's state gas does that to EIP-3009), so batches hit the cap per transaction.
type heavyGas struct{ payouts.Chain }

func (c heavyGas) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	g, err := c.Chain.EstimateGas(ctx, msg)
	return g * 40, err
}

// A batch never asks for more gas than a node accepts in one transaction (EIP-7825): the pulls
// that do not fit wait for the next pass, and all are swept in the end.
func TestSweepBatchFitsTheGasCap(t *testing.T) {
	f := newFixture(t, opts{backend: "sqlite", dbURL: testdb.URL(t, "sqlite"), sweep: true, sweepMin: "10",
		methods: []payouts.SweepMethod{payouts.SweepEIP7702}})
	f.m.Chain = heavyGas{f.m.Chain}
	var ps []paid
	for i := range 20 {
		ps = append(ps, f.payOnChain(2000+int64(i), "USDC"))
	}
	f.until("all swept", func() bool { return f.confirmedAll(ps...) })
	batches := map[uuid.UUID]bool{}
	for _, p := range ps {
		batches[*f.sweepsOf(p.deposit)[0].SweepTxID] = true
	}
	require.Greater(t, len(batches), 1, "20 pulls at 40 times the gas do not fit one transaction")
	for id := range batches {
		assert.LessOrEqual(t, outgoing(t, f, id).GasLimit, int64(payouts.MaxBatchGas))
	}
}
