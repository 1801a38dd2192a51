package payouts_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// The relayer of payments made without gas (issue 24), on the devnet: an accepted authorization
// is signed and stored with its move to submitted before it is broadcast, so a stop between the
// two leaves the stored bytes, which the next round sends — one relay transaction, once. An
// authorization that can no longer succeed is failed without a transaction: its nonce used by
// someone else first (whose transfer still pays the payment), the payment paid another way, the
// deadline too near.

type gaslessPayment struct {
	p       domain.Payment
	q       domain.Quote
	deposit common.Address
}

func (f *fixture) usdcPayment(cents int64) gaslessPayment {
	f.t.Helper()
	c, err := f.a.Payments.Create(f.ctx, f.merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
		OrderID: "order-" + uuid.NewString()[:8], Amount: &cents}, nil)
	require.NoError(f.t, err)
	for _, q := range c.Payment.Quotes {
		if q.Token.Chain.ID == devnet.ChainID && q.Token.Symbol == "USDC" {
			return gaslessPayment{p: c.Payment, q: q, deposit: common.HexToAddress(c.Payment.DepositAddress.Address)}
		}
	}
	f.t.Fatal("no devnet USDC quote")
	return gaslessPayment{}
}

// gaslessPayer is a fresh account holding amount of USDC and no ETH.
func (f *fixture) gaslessPayer(amount *big.Int) *ecdsa.PrivateKey {
	f.t.Helper()
	k, err := crypto.GenerateKey()
	require.NoError(f.t, err)
	funder, err := devnet.AccountKey(1)
	require.NoError(f.t, err)
	_, err = devnet.Pay(f.ctx, f.eth, funder, devnet.USDCAddress, crypto.PubkeyToAddress(k.PublicKey), amount)
	require.NoError(f.t, err)
	f.mine(1)
	return k
}

// accept stores key's signed transfer of g's quote as the checkout does once its checks passed.
func (f *fixture) accept(key *ecdsa.PrivateKey, g gaslessPayment, validBefore int64) (store.GaslessAuthorization, tokensig.Authorization, tokensig.Signature) {
	f.t.Helper()
	a := tokensig.Authorization{From: crypto.PubkeyToAddress(key.PublicKey), To: g.deposit, Value: g.q.ExpectedAmountAsset.BigInt(),
		ValidAfter: new(big.Int), ValidBefore: big.NewInt(validBefore), Nonce: crypto.Keccak256Hash([]byte(uuid.NewString()))}
	d := tokensig.Domain{Name: "USD Coin (devnet)", Version: "2", ChainID: devnet.ChainID, Contract: common.HexToAddress(devnet.USDCAddress)}
	sig, err := tokensig.Sign(key, d, a)
	require.NoError(f.t, err)
	now := time.Now().UTC()
	row := store.GaslessAuthorization{ID: uuid.Must(uuid.NewV7()), PaymentID: g.p.ID, QuoteID: g.q.ID, ChainID: devnet.ChainID,
		TokenID: g.q.Token.ID, From: strings.ToLower(a.From.Hex()), To: strings.ToLower(a.To.Hex()), Value: g.q.ExpectedAmountAsset,
		ValidBefore: validBefore, Nonce: a.Nonce.Hex(), Signature: sig.Hex(), FeePaidBy: domain.GaslessFeeMerchant, FeeAsset: decimal.Zero,
		CreatedAt: now}
	require.NoError(f.t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error { return tx.InsertGasless(row) }))
	return row, a, sig
}

func (f *fixture) gasless(id uuid.UUID, paymentID uuid.UUID) store.GaslessAuthorization {
	f.t.Helper()
	gs, err := f.a.Store.Read(f.ctx).PaymentGasless(paymentID)
	require.NoError(f.t, err)
	for _, g := range gs {
		if g.ID == id {
			return g
		}
	}
	f.t.Fatalf("authorization %s not stored", id)
	return store.GaslessAuthorization{}
}

func (f *fixture) paymentStatus(id uuid.UUID) domain.PaymentStatus {
	f.t.Helper()
	p, err := f.a.Store.Read(f.ctx).PaymentByID(id, f.a.Catalog)
	require.NoError(f.t, err)
	return p.Status
}

func TestRelayGaslessPayments(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, opts{backend: backend})
			ctx := f.ctx
			expiry := time.Now().Add(10 * time.Minute).Unix()

			// Stopped between storing the signed relay and broadcasting it: nothing on chain yet;
			// the next round sends the stored bytes, once.
			a := f.usdcPayment(1_850)
			key := f.gaslessPayer(new(big.Int).Mul(a.q.ExpectedAmountAsset.BigInt(), big.NewInt(4)))
			row, _, _ := f.accept(key, a, expiry)
			f.m.Config.PauseAfterSign = time.Hour
			stopped, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, _ = f.m.Round(stopped)
			cancel()
			f.m.Config.PauseAfterSign = 0
			got := f.gasless(row.ID, a.p.ID)
			require.Equal(t, store.GaslessSubmitted, got.Status)
			require.NotNil(t, got.OutgoingTx)
			o := outgoing(t, f, *got.OutgoingTx)
			require.Len(t, o.Attempts, 1)
			assert.Nil(t, o.Attempts[0].BroadcastAt, "stored, not broadcast")
			assert.Equal(t, strings.ToLower(f.m.Wallet.Address().Hex()), o.Sender, "the hot wallet relays")
			_, err := f.eth.TransactionReceipt(ctx, common.HexToHash(o.Attempts[0].Hash))
			require.Error(t, err, "not on chain")
			f.until("relayed", func() bool { return f.gasless(row.ID, a.p.ID).Status == store.GaslessRelayed })
			f.until("completed", func() bool { return f.paymentStatus(a.p.ID) == domain.PaymentCompleted })
			o = outgoing(t, f, *got.OutgoingTx)
			assert.Len(t, o.Attempts, 1, "the stored bytes, never re-signed")
			assert.Equal(t, store.OutgoingConfirmed, o.Status)
			assert.Equal(t, *o.MinedHash, *f.gasless(row.ID, a.p.ID).TxHash)
			assert.Equal(t, a.q.ExpectedAmountAsset.String(), f.tokenBalance(devnet.USDCAddress, a.deposit).String())
			assert.Zero(t, f.tokenBalance("", crypto.PubkeyToAddress(key.PublicKey)).Sign(), "the payer never needed ETH")

			// Front-run: someone submits the same authorization first (paying the gas). The
			// relayer sends nothing; the transfer still pays the payment, sponsored.
			b := f.usdcPayment(1_850)
			rowB, authB, sigB := f.accept(key, b, expiry)
			data, err := chain.TransferWithAuthorizationCalldata(authB, sigB)
			require.NoError(t, err)
			f.sendCall(3, common.HexToAddress(devnet.USDCAddress), data)
			f.round() // before the watcher saw the transfer: the payment still looks unpaid
			gotB := f.gasless(rowB.ID, b.p.ID)
			assert.Equal(t, store.GaslessFailed, gotB.Status)
			assert.Nil(t, gotB.OutgoingTx, "no relay transaction")
			assert.Contains(t, *gotB.Error, "nonce used")
			f.until("completed", func() bool { return f.paymentStatus(b.p.ID) == domain.PaymentCompleted })

			// Paid another way before the relayer's turn; and a deadline too near: failed, nothing sent.
			c := f.usdcPayment(1_850)
			rowC, _, _ := f.accept(key, c, expiry)
			payer, err := devnet.AccountKey(0)
			require.NoError(t, err)
			_, err = devnet.Pay(ctx, f.eth, payer, devnet.USDCAddress, c.deposit, c.q.ExpectedAmountAsset.BigInt())
			require.NoError(t, err)
			f.mine(1)
			_, err = f.a.Watchers[0].Round(ctx)
			require.NoError(t, err)
			d := f.usdcPayment(1_850)
			rowD, _, _ := f.accept(key, d, time.Now().Add(5*time.Second).Unix())
			f.rounds(1)
			for _, g := range []store.GaslessAuthorization{f.gasless(rowC.ID, c.p.ID), f.gasless(rowD.ID, d.p.ID)} {
				assert.Equal(t, store.GaslessFailed, g.Status)
				assert.Nil(t, g.OutgoingTx)
			}
			assert.Contains(t, *f.gasless(rowC.ID, c.p.ID).Error, "paid another way")
			assert.Contains(t, *f.gasless(rowD.ID, d.p.ID).Error, "expired")
			assert.Equal(t, c.q.ExpectedAmountAsset.String(), f.tokenBalance(devnet.USDCAddress, c.deposit).String(), "paid once")
			assert.Zero(t, f.tokenBalance(devnet.USDCAddress, d.deposit).Sign())
			assert.Equal(t, domain.PaymentPending, f.paymentStatus(d.p.ID), "still payable the normal way")
		})
	}
}

// sendCall has devnet account sender call to with data (paying the gas), and mines it.
func (f *fixture) sendCall(sender int, to common.Address, data []byte) {
	f.t.Helper()
	key, err := devnet.AccountKey(sender)
	require.NoError(f.t, err)
	nonce, err := f.eth.PendingNonceAt(f.ctx, devnet.AccountAddress(sender))
	require.NoError(f.t, err)
	tip, err := f.eth.SuggestGasTipCap(f.ctx)
	require.NoError(f.t, err)
	head, err := f.eth.HeaderByNumber(f.ctx, nil)
	require.NoError(f.t, err)
	gas, err := f.eth.EstimateGas(f.ctx, ethereum.CallMsg{From: devnet.AccountAddress(sender), To: &to, Data: data})
	require.NoError(f.t, err)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(devnet.ChainID)), &types.DynamicFeeTx{Nonce: nonce,
		GasTipCap: tip, GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip), Gas: gas * 2, To: &to, Data: data})
	require.NoError(f.t, err)
	require.NoError(f.t, f.eth.SendTransaction(f.ctx, tx))
	for range 50 {
		f.mine(1)
		if rc, err := f.eth.TransactionReceipt(f.ctx, tx.Hash()); err == nil {
			require.Equal(f.t, types.ReceiptStatusSuccessful, rc.Status)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatal("the call was not mined")
}

// One relay at a time per signer (review of issue 24, defect 2): a payer whose balance covers
// one of two signed payments had both relayed, and the second reverted on chain with our gas. The
// second now waits while the first is submitted, then fails without a transaction once the
// balance is spent. And a deposit address that holds the token already (a normal transfer the
// watcher has not recorded yet) has its authorization failed, nothing sent.
func TestRelayOneAtATimePerSigner(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, opts{backend: backend})
			expiry := time.Now().Add(10 * time.Minute).Unix()
			a, b := f.usdcPayment(1_850), f.usdcPayment(1_850)
			key := f.gaslessPayer(a.q.ExpectedAmountAsset.BigInt()) // enough for one
			rowA, _, _ := f.accept(key, a, expiry)
			rowB, _, _ := f.accept(key, b, expiry)

			f.round()
			gotA, gotB := f.gasless(rowA.ID, a.p.ID), f.gasless(rowB.ID, b.p.ID)
			require.Equal(t, store.GaslessSubmitted, gotA.Status)
			assert.Equal(t, store.GaslessAccepted, gotB.Status, "waits while the signer's other relay is in flight")
			assert.Nil(t, gotB.OutgoingTx, "no relay transaction for the second")

			f.until("first relayed", func() bool { return f.gasless(rowA.ID, a.p.ID).Status == store.GaslessRelayed })
			f.round()
			gotB = f.gasless(rowB.ID, b.p.ID)
			assert.Equal(t, store.GaslessFailed, gotB.Status)
			assert.Nil(t, gotB.OutgoingTx, "failed without a transaction: nothing reverted, no gas burnt")
			assert.Contains(t, *gotB.Error, "holds 0")
			assert.Zero(t, f.tokenBalance(devnet.USDCAddress, b.deposit).Sign())

			// Paid by a normal transfer the watcher has not seen yet: failed, nothing sent.
			c := f.usdcPayment(1_850)
			keyC := f.gaslessPayer(c.q.ExpectedAmountAsset.BigInt())
			rowC, _, _ := f.accept(keyC, c, expiry)
			payer, err := devnet.AccountKey(0)
			require.NoError(t, err)
			_, err = devnet.Pay(f.ctx, f.eth, payer, devnet.USDCAddress, c.deposit, c.q.ExpectedAmountAsset.BigInt())
			require.NoError(t, err)
			f.mine(1)
			f.round()
			gotC := f.gasless(rowC.ID, c.p.ID)
			assert.Equal(t, store.GaslessFailed, gotC.Status)
			assert.Nil(t, gotC.OutgoingTx)
			assert.Contains(t, *gotC.Error, "deposit address holds")
			assert.Equal(t, c.q.ExpectedAmountAsset.String(), f.tokenBalance(devnet.USDCAddress, c.deposit).String(), "paid once")
			assert.Equal(t, c.q.ExpectedAmountAsset.String(), f.tokenBalance(devnet.USDCAddress, crypto.PubkeyToAddress(keyC.PublicKey)).String(),
				"the signer kept its tokens")
		})
	}
}

// A relay moves the customer's tokens, not the hot wallet's (review of issue 24, defect 3): a
// relay signed and not mined must not count as the hot wallet's outflow, or a USDC withdrawal
// waits for funds the wallet holds (and the treasury understates what it holds). Fails before
// the fix: the withdrawal waits with "the payouts signed and this one need …".
func TestRelayInFlightIsNotTheHotWalletsOutflow(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			f, hot := newFixtureWithHotWallet(t, backend)
			f.fundHot("", new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
			f.fundHot(devnet.USDCAddress, big.NewInt(15_000_000)) // 15 USDC: the withdrawal's 10, not the relay's 18.50 more
			f.mine(1)
			f.fund(10_000)
			a := f.usdcPayment(1_850)
			key := f.gaslessPayer(a.q.ExpectedAmountAsset.BigInt())
			row, _, _ := f.accept(key, a, time.Now().Add(10*time.Minute).Unix())
			w, _ := f.withdraw(1_000)

			res := f.round() // the relay first, signed and broadcast, not mined; then the withdrawal
			require.Equal(t, store.GaslessSubmitted, f.gasless(row.ID, a.p.ID).Status)
			assert.NotContains(t, res.Blocked, "payouts signed")
			assert.Equal(t, domain.WithdrawalProcessing, f.withdrawal(w.ID).Status, "the withdrawal is signed beside the relay")
			usdc := a.q.Token.ID
			signed, err := f.a.Store.Read(f.ctx).UnminedOutflow(devnet.ChainID, hot.Hex(), usdc)
			require.NoError(t, err)
			assert.Equal(t, "10000000", signed.String(), "the withdrawal's 10 USDC, nothing of the relay")
			f.settleAll(w.ID)
			f.until("relayed", func() bool { return f.gasless(row.ID, a.p.ID).Status == store.GaslessRelayed })
			assert.Equal(t, "5000000", f.tokenBalance(devnet.USDCAddress, hot).String(), "the relay took none of the hot wallet's USDC")
		})
	}
}

// raceOnEstimate runs hook once, when the relayer estimates a relay's gas: between its checks
// and the signing, as another relayer or a failure would.
type raceOnEstimate struct {
	payouts.Chain
	hook func()
}

func (c *raceOnEstimate) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	if h := c.hook; h != nil {
		c.hook = nil
		h()
	}
	return c.Chain.EstimateGas(ctx, msg)
}

// An authorization that moved on between the relayer's checks and its signing (another
// relayer took it, or it failed) is not an error of the round: nothing is stored or sent, and
// the round goes on. Fails before: the round reports the store's conflict (logged at Error).
func TestRelayLostRaceIsNotAnError(t *testing.T) {
	f := newFixture(t, opts{backend: "sqlite"})
	a := f.usdcPayment(1_850)
	key := f.gaslessPayer(a.q.ExpectedAmountAsset.BigInt())
	row, _, _ := f.accept(key, a, time.Now().Add(10*time.Minute).Unix())
	why := "taken up elsewhere"
	f.m.Chain = &raceOnEstimate{Chain: f.m.Chain, hook: func() {
		require.NoError(t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error {
			return tx.FinishGasless(row.ID, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessFailed, nil, &why, time.Now())
		}))
	}}
	_, err := f.m.Round(f.ctx)
	require.NoError(t, err)
	got := f.gasless(row.ID, a.p.ID)
	assert.Equal(t, store.GaslessFailed, got.Status)
	assert.Equal(t, why, *got.Error)
	assert.Nil(t, got.OutgoingTx, "nothing stored: the signing's transaction rolled back")
}
