package payouts_test

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"github.com/tyler-smith/go-bip39"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/payouts"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// fixture is a real app on a real database, paying out on a real devnet (manual blocks).
type fixture struct {
	t        testing.TB
	ctx      context.Context
	a        *app.App
	m        *payouts.Manager
	dn       *devnet.Devnet
	eth      *ethclient.Client
	merchant domain.Merchant
}

type opts struct {
	dbURL   string
	dn      *devnet.Devnet // a devnet run apart, reached by its URL
	hotKey  string         // a configured hot wallet key instead of the devnet's account 9
	bump    time.Duration
	shared  bool // another process on the same database: no new merchant
	backend string
	// sweep: the deposit key's private half (a mnemonic file on PostgreSQL; the embedded
	// development key file on SQLite), swept from sweepMin USD at every round.
	sweep    bool
	sweepMin string
	// methods: the sweep methods in order (payouts.Config.SweepMethods); nil: today's gas
	// top-ups only, which the older sweep tests are about.
	methods []payouts.SweepMethod
}

func newFixture(t testing.TB, o opts) *fixture {
	t.Helper()
	ctx := context.Background()
	if o.dbURL == "" {
		o.dbURL = testdb.URL(t, o.backend)
	}
	if o.bump == 0 {
		o.bump = time.Hour
	}
	cc := config.Chains{Devnet: "127.0.0.1:0", WatchInterval: 50 * time.Millisecond, HotWalletKey: o.hotKey, PayoutBump: o.bump}
	if o.dn != nil {
		cc.Devnet, cc.RPCURLs = "off", map[int64][]string{devnet.ChainID: {o.dn.URL()}}
	}
	cfg := onchaintest.Config(o.dbURL, cc, time.Hour, 15*time.Minute)
	if o.sweep {
		cfg.XPub = ""
		if !cfg.IsEmbedded() {
			cfg.Chains.DepositMnemonic = mnemonicFile(t)
		}
		cfg.Chains.SweepMinUSD, cfg.Chains.SweepEvery = decimal.RequireFromString(o.sweepMin), time.Nanosecond
	}
	log := onchaintest.Logger("PAYOUTS_TEST_LOG")
	a, err := app.Open(ctx, cfg, log)
	require.NoError(t, err)
	t.Cleanup(a.Close)
	require.Len(t, a.Payouts, 1, "the devnet is the one chain paid out on")
	f := &fixture{t: t, ctx: ctx, a: a, m: a.Payouts[0], dn: a.Devnet}
	f.m.Config.SweepMethods = []payouts.SweepMethod{payouts.SweepTopUp}
	if o.methods != nil {
		f.m.Config.SweepMethods = o.methods
	}
	if o.dn != nil {
		f.dn = o.dn
	}
	f.eth, err = ethclient.Dial(f.dn.URL())
	require.NoError(t, err)
	t.Cleanup(f.eth.Close)
	if o.shared {
		return f
	}
	created, err := a.Merchants.Create(ctx, merchants.CreateInput{Name: "Acme", ShortName: "Acme", DepositsEnabled: true, WithdrawalsEnabled: true})
	require.NoError(t, err)
	f.merchant = created.Merchant
	return f
}

// fund gives the merchant a settled balance of cents (an operator's manual settlement).
func (f *fixture) fund(cents int64) {
	f.t.Helper()
	c, err := f.a.Payments.Create(f.ctx, f.merchant, payments.CreateInput{Type: domain.TypePayment, Currency: "USD",
		OrderID: "fund-" + uuid.NewString()[:8], Amount: &cents}, nil)
	require.NoError(f.t, err)
	var q domain.Quote
	for _, x := range c.Payment.Quotes {
		if x.Token.Symbol == "USDC" {
			q = x
		}
	}
	_, err = f.a.Payments.Settle(f.ctx, payments.SettleInput{PaymentID: c.Payment.ID, QuoteID: &q.ID,
		TxHash: "0x" + strings.Repeat("ab", 32)[:62] + uuid.NewString()[:2]}, nil)
	require.NoError(f.t, err)
}

// setToken makes the merchant's withdrawals pay out in symbol on the devnet.
func (f *fixture) setToken(symbol string) {
	f.t.Helper()
	require.NoError(f.t, f.a.Store.InTx(f.ctx, func(tx *store.Tx) error {
		cfg, err := tx.GetWithdrawalConfig(f.merchant.ID)
		if err != nil {
			return err
		}
		cfg.TokenSymbol = symbol
		return tx.PutWithdrawalConfig(cfg)
	}))
}

// withdraw creates a withdrawal of cents on the devnet to a fresh address.
func (f *fixture) withdraw(cents int64) (domain.Withdrawal, common.Address) {
	f.t.Helper()
	k, err := crypto.GenerateKey()
	require.NoError(f.t, err)
	to := crypto.PubkeyToAddress(k.PublicKey)
	w, err := f.a.Withdrawals.Create(f.ctx, f.merchant, withdrawals.CreateInput{AmountInCents: cents, ChainID: devnet.ChainID,
		RecipientAddress: strings.ToLower(to.Hex()), Currency: "USD"}, nil)
	require.NoError(f.t, err)
	return w, to
}

func (f *fixture) mine(n int) {
	for range n {
		f.dn.Commit()
	}
}

func (f *fixture) round() payouts.RoundResult {
	f.t.Helper()
	res, err := f.m.Round(f.ctx)
	require.NoError(f.t, err)
	return res
}

// settleAll mines and runs rounds until every withdrawal is final.
func (f *fixture) settleAll(ids ...uuid.UUID) {
	f.t.Helper()
	for i := 0; i < 60; i++ {
		_, _ = f.m.Round(f.ctx)
		done := true
		for _, id := range ids {
			done = done && f.withdrawal(id).Status.Terminal()
		}
		if done {
			return
		}
		f.mine(1)
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatal("withdrawals not final after 60 rounds")
}

func (f *fixture) withdrawal(id uuid.UUID) domain.Withdrawal {
	f.t.Helper()
	w, err := f.a.Store.Read(f.ctx).WithdrawalByID(id, f.a.Catalog)
	require.NoError(f.t, err)
	return w
}

func (f *fixture) balance() int64 {
	f.t.Helper()
	b, err := f.a.Store.Read(f.ctx).AvailableBalance(f.merchant.ID, domain.ModeTest)
	require.NoError(f.t, err)
	return b
}

// tokenBalance reads an address's balance of a devnet token ("" for ETH) from the chain.
func (f *fixture) tokenBalance(token string, who common.Address) *big.Int {
	f.t.Helper()
	if token == "" {
		b, err := f.eth.BalanceAt(f.ctx, who, nil)
		require.NoError(f.t, err)
		return b
	}
	b, err := devnet.TokenBalance(f.ctx, f.eth, common.HexToAddress(token), who)
	require.NoError(f.t, err)
	return b
}

func withdrawalInput(cents int64, to common.Address) withdrawals.CreateInput {
	return withdrawals.CreateInput{AmountInCents: cents, ChainID: devnet.ChainID, RecipientAddress: strings.ToLower(to.Hex()), Currency: "USD"}
}

func decimalOf(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// mnemonicFile writes a fresh BIP-39 mnemonic to a file (PAYMENTS_DEPOSIT_MNEMONIC_FILE).
func mnemonicFile(t testing.TB) string {
	entropy, err := bip39.NewEntropy(128)
	require.NoError(t, err)
	words, err := bip39.NewMnemonic(entropy)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "deposit.mnemonic")
	require.NoError(t, os.WriteFile(path, []byte(words+"\n"), 0o600))
	return path
}

// newFixtureWithHotWallet is a fixture whose hot wallet is a fresh, empty key.
func newFixtureWithHotWallet(t testing.TB, backend string) (*fixture, common.Address) {
	t.Helper()
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	f := newFixture(t, opts{backend: backend, hotKey: common.Bytes2Hex(crypto.FromECDSA(k))})
	return f, crypto.PubkeyToAddress(k.PublicKey)
}

// fundHot sends amount of a devnet token ("" for ETH) from test account 0 to the hot wallet.
func (f *fixture) fundHot(token string, amount *big.Int) {
	f.t.Helper()
	payer, err := devnet.AccountKey(0)
	require.NoError(f.t, err)
	_, err = devnet.Pay(f.ctx, f.eth, payer, token, f.m.Wallet.Address(), amount)
	require.NoError(f.t, err)
}
