package watcher_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/watcher"
)

// fixture is a real app on a real database, watching a real devnet (manual blocks).
type fixture struct {
	t        testing.TB
	ctx      context.Context
	a        *app.App
	w        *watcher.Watcher
	dn       *devnet.Devnet
	eth      *ethclient.Client
	merchant domain.Merchant
	key      string // the merchant's secret key
}

type fixtureOpts struct {
	dbURL      string
	dn         *devnet.Devnet // an external devnet (reached by rpcURL) instead of the app's own
	rpcURL     string
	paymentTTL time.Duration
	quoteTTL   time.Duration
	sanctions  string
	rpcTimeout time.Duration
}

func newFixture(t testing.TB, backend string, o fixtureOpts) *fixture {
	t.Helper()
	ctx := context.Background()
	shared := o.dbURL != "" // another process on a database that has its merchant already
	if o.dbURL == "" {
		o.dbURL = testdb.URL(t, backend)
	}
	if o.paymentTTL == 0 {
		o.paymentTTL, o.quoteTTL = time.Hour, 15*time.Minute
	}
	cc := config.Chains{Devnet: "127.0.0.1:0", DevnetBlock: 0, WatchInterval: 50 * time.Millisecond, SanctionsFile: o.sanctions,
		RPCTimeout: o.rpcTimeout}
	if o.rpcURL != "" {
		cc.Devnet, cc.RPCURLs = "off", map[int64][]string{devnet.ChainID: {o.rpcURL}}
	}
	cfg := onchaintest.Config(o.dbURL, cc, o.paymentTTL, o.quoteTTL)
	log := onchaintest.Logger("WATCHER_TEST_LOG")
	a, err := app.Open(ctx, cfg, log)
	require.NoError(t, err)
	t.Cleanup(a.Close)
	require.Len(t, a.Watchers, 1, "the devnet is the one watched chain")
	f := &fixture{t: t, ctx: ctx, a: a, w: a.Watchers[0], dn: a.Devnet}
	if o.dn != nil {
		f.dn = o.dn
	}
	f.eth, err = ethclient.Dial(f.dn.URL())
	require.NoError(t, err)
	t.Cleanup(f.eth.Close)
	if shared {
		return f
	}
	created, err := a.Merchants.Create(ctx, merchants.CreateInput{Name: "Acme", ShortName: "Acme", DepositsEnabled: true, WithdrawalsEnabled: true})
	require.NoError(t, err)
	f.merchant, f.key = created.Merchant, created.SecretKey
	return f
}

// reopen builds a second app (another process) on the same database and devnet.
func (f *fixture) reopen(t testing.TB, rpcURL string) *fixture {
	g := newFixture(t, "", fixtureOpts{dbURL: f.a.Cfg.DatabaseURL, dn: f.dn, rpcURL: rpcURL,
		paymentTTL: f.a.Cfg.PaymentTTL, quoteTTL: f.a.Cfg.QuoteTTL, rpcTimeout: f.a.Cfg.Chains.RPCTimeout})
	g.merchant = f.merchant
	return g
}

// create makes a payment (cents > 0) or a deposit (cents == 0).
func (f *fixture) create(cents int64, customer ...string) domain.Payment {
	in := payments.CreateInput{Type: domain.TypePayment, Currency: "USD", OrderID: "order-" + uuid.NewString()[:8]}
	if cents > 0 {
		in.Amount = &cents
	} else {
		in.Type = domain.TypeDeposit
		if len(customer) > 0 {
			in.CustomerRefID = &customer[0]
		}
	}
	c, err := f.a.Payments.Create(f.ctx, f.merchant, in, nil)
	require.NoError(f.t, err)
	return c.Payment
}

// quote picks the payment's devnet quote for a symbol.
func (f *fixture) quote(p domain.Payment, symbol string) domain.Quote {
	for _, q := range p.Quotes {
		if q.Token.Chain.ID == devnet.ChainID && q.Token.Symbol == symbol {
			return q
		}
	}
	f.t.Fatalf("payment %s has no devnet %s quote", p.ID, symbol)
	return domain.Quote{}
}

func payer(t testing.TB, i int) *ecdsa.PrivateKey {
	k, err := devnet.AccountKey(i)
	require.NoError(t, err)
	return k
}

// pay sends amount of the quote's token to the payment's deposit address (not mined yet).
func (f *fixture) pay(account int, p domain.Payment, q domain.Quote, amount decimal.Decimal) common.Hash {
	token := ""
	if q.Token.AssetType == domain.ERC20 {
		token = q.Token.ContractAddress
	}
	h, err := devnet.Pay(f.ctx, f.eth, payer(f.t, account), token, common.HexToAddress(p.DepositAddress.Address), amount.BigInt())
	require.NoError(f.t, err)
	return h
}

// mine seals n blocks.
func (f *fixture) mine(n int) {
	for range n {
		f.dn.Commit()
	}
}

// round runs one watcher round and fails the test on an error.
func (f *fixture) round() watcher.RoundResult {
	f.t.Helper()
	res, err := f.w.Round(f.ctx)
	require.NoError(f.t, err)
	return res
}

// sync runs rounds until the watcher has caught up with the head.
func (f *fixture) sync() {
	f.t.Helper()
	for i := 0; i < 50; i++ {
		res := f.round()
		if res.To < res.From && res.Reorged == 0 {
			return
		}
	}
	f.t.Fatal("the watcher did not catch up in 50 rounds")
}

func (f *fixture) payment(id uuid.UUID) domain.Payment {
	f.t.Helper()
	p, err := f.a.Store.Read(f.ctx).GetPayment(f.merchant.ID, domain.ModeTest, id, f.a.Catalog)
	require.NoError(f.t, err)
	return p
}

func (f *fixture) balance() int64 {
	f.t.Helper()
	b, err := f.a.Store.Read(f.ctx).AvailableBalance(f.merchant.ID, domain.ModeTest)
	require.NoError(f.t, err)
	return b
}

func (f *fixture) events(id uuid.UUID) []string {
	f.t.Helper()
	es, err := f.a.Store.Read(f.ctx).EntityEvents(id)
	require.NoError(f.t, err)
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Type)
	}
	return out
}

func (f *fixture) transfers(id uuid.UUID) []store.Transfer {
	f.t.Helper()
	ts, err := f.a.Store.Read(f.ctx).PaymentTransfers(id)
	require.NoError(f.t, err)
	return ts
}

func units(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func lower(h common.Hash) string { return strings.ToLower(h.Hex()) }

func lowerAddr(a common.Address) string { return strings.ToLower(a.Hex()) }

func mustAddr(t testing.TB, i int) common.Address {
	t.Helper()
	return devnet.AccountAddress(i)
}

// get calls the API as the merchant and decodes the top-level fields of a 200 answer.
func (f *fixture) get(path string) map[string]json.RawMessage {
	f.t.Helper()
	e, err := f.a.Handler()
	require.NoError(f.t, err)
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("X-Service-Secret-Key", f.key)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	var out map[string]json.RawMessage
	require.NoError(f.t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}
