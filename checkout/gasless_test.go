package checkout_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// The checks of a posted EIP-3009 authorization (issue 24), each refusal on its own against a
// token on a fake chain, on both databases: the store keeps nothing of a refused one.

const usdcMainnet = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"

var fakeTokenABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
 {"type":"function","name":"name","inputs":[],"outputs":[{"type":"string"}]},
 {"type":"function","name":"version","inputs":[],"outputs":[{"type":"string"}]},
 {"type":"function","name":"DOMAIN_SEPARATOR","inputs":[],"outputs":[{"type":"bytes32"}]},
 {"type":"function","name":"authorizationState","inputs":[{"type":"address"},{"type":"bytes32"}],"outputs":[{"type":"bool"}]},
 {"type":"function","name":"balanceOf","inputs":[{"type":"address"}],"outputs":[{"type":"uint256"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// fakeToken answers a FiatToken v2's views: its domain, nonce states and balances.
type fakeToken struct {
	domain   tokensig.Domain
	used     map[common.Hash]bool
	balances map[common.Address]*big.Int
	down     bool
	hang     bool // answers nothing until the caller gives up
}

func (f *fakeToken) CallContract(ctx context.Context, msg ethereum.CallMsg, _ *big.Int) ([]byte, error) {
	if f.down {
		return nil, errors.New("connection refused")
	}
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if msg.To == nil || *msg.To != f.domain.Contract {
		return nil, errors.New("execution reverted")
	}
	m, err := fakeTokenABI.MethodById(msg.Data[:4])
	if err != nil {
		return nil, err
	}
	args, err := m.Inputs.Unpack(msg.Data[4:])
	if err != nil {
		return nil, err
	}
	switch m.Name {
	case "name":
		return m.Outputs.Pack(f.domain.Name)
	case "version":
		return m.Outputs.Pack(f.domain.Version)
	case "DOMAIN_SEPARATOR":
		return m.Outputs.Pack([32]byte(f.domain.Separator()))
	case "authorizationState":
		return m.Outputs.Pack(f.used[common.Hash(args[1].([32]byte))])
	default: // balanceOf
		b := f.balances[args[0].(common.Address)]
		if b == nil {
			b = new(big.Int)
		}
		return m.Outputs.Pack(b)
	}
}

type gaslessFixture struct {
	svc     *checkout.Service
	st      *store.Store
	chain   *fakeToken
	payer   *ecdsa.PrivateKey
	p       domain.Payment
	usdc    domain.Quote
	eth     domain.Quote
	now     time.Time
	deposit common.Address
}

func newGaslessFixture(t *testing.T, backend string) gaslessFixture {
	ctx := context.Background()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	cat, err := st.Read(ctx).LoadCatalog()
	require.NoError(t, err)
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Acme", ShortName: "acme", CreatedAt: now}
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	loaded := insertGaslessPayment(t, st, cat, m, now)
	payer, err := crypto.GenerateKey()
	require.NoError(t, err)
	fake := &fakeToken{domain: tokensig.Domain{Name: "USD Coin", Version: "2", ChainID: 1, Contract: common.HexToAddress(usdcMainnet)},
		used: map[common.Hash]bool{}, balances: map[common.Address]*big.Int{crypto.PubkeyToAddress(payer.PublicKey): big.NewInt(20_000_000)}}
	svc := &checkout.Service{Store: st, Catalog: cat, GaslessChains: map[int64]checkout.GaslessChain{1: fake},
		Now: func() time.Time { return now }}
	return gaslessFixture{svc: svc, st: st, chain: fake, payer: payer, p: loaded, usdc: loaded.Quotes[0], eth: loaded.Quotes[1], now: now,
		deposit: common.HexToAddress(loaded.DepositAddress.Address)}
}

// request is a good authorization of the USDC quote, signed by key after edit changed its terms.
func (f gaslessFixture) request(t *testing.T, key *ecdsa.PrivateKey, edit func(a *tokensig.Authorization, d *tokensig.Domain)) checkout.GaslessRequest {
	a := tokensig.Authorization{From: crypto.PubkeyToAddress(f.payer.PublicKey), To: f.deposit, Value: big.NewInt(20_000_000),
		ValidAfter: new(big.Int), ValidBefore: big.NewInt(f.usdc.ExpiresAt.Unix()), Nonce: crypto.Keccak256Hash([]byte(t.Name()))}
	d := f.chain.domain
	if edit != nil {
		edit(&a, &d)
	}
	sig, err := tokensig.Sign(key, d, a)
	require.NoError(t, err)
	return checkout.GaslessRequest{QuoteID: f.usdc.ID, EVMChainID: d.ChainID, TokenAddress: strings.ToLower(d.Contract.Hex()),
		From: strings.ToLower(a.From.Hex()), To: strings.ToLower(a.To.Hex()), Value: a.Value.String(), ValidAfter: a.ValidAfter.Int64(),
		ValidBefore: a.ValidBefore.Int64(), Nonce: a.Nonce.Hex(), Signature: sig.Hex()}
}

func (f gaslessFixture) stored(t *testing.T) []store.GaslessAuthorization {
	gs, err := f.st.Read(context.Background()).PaymentGasless(f.p.ID)
	require.NoError(t, err)
	return gs
}

// offered is what the checkout view offers f's USDC quote without gas (nil: not offered).
func (f gaslessFixture) offered(t *testing.T) *checkout.GaslessOffer {
	t.Helper()
	v, err := f.svc.View(context.Background(), f.p)
	require.NoError(t, err)
	for _, q := range v.Quotes {
		if q.ID == f.usdc.ID {
			return q.Gasless
		}
	}
	t.Fatal("the USDC quote is not in the view")
	return nil
}

// refusal is an error's API code and param, and whether it is a 409 (state) rather than a 400.
func refusal(err error) (code domain.ErrorCode, param string, conflict bool) {
	var invalid *domain.InvalidInputError
	var refused *domain.PolicyRefusal
	switch {
	case errors.As(err, &invalid):
		return invalid.Code, invalid.Param, false
	case errors.As(err, &refused):
		return refused.Code, refused.Param, true
	}
	return "", "", false
}

func TestGaslessChecks(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			f := newGaslessFixture(t, backend)
			ctx := context.Background()
			other, err := crypto.GenerateKey()
			require.NoError(t, err)
			for _, c := range []struct {
				name     string
				key      *ecdsa.PrivateKey
				edit     func(a *tokensig.Authorization, d *tokensig.Domain)
				req      func(r *checkout.GaslessRequest)
				code     domain.ErrorCode
				param    string
				conflict bool
			}{
				{name: "wrong signer", key: other, code: domain.CodeSignatureInvalid, param: "signature"},
				{name: "signed for other terms", req: func(r *checkout.GaslessRequest) { r.ValidBefore-- },
					code: domain.CodeSignatureInvalid, param: "signature"},
				{name: "wrong amount", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) { a.Value = big.NewInt(19_999_999) },
					code: checkout.CodeAuthorizationInvalid, param: "value"},
				{name: "wrong token", edit: func(_ *tokensig.Authorization, d *tokensig.Domain) {
					d.Contract = common.HexToAddress("0xdac17f958d2ee523a2206206994597c13d831ec7")
				}, code: checkout.CodeAuthorizationInvalid, param: "tokenAddress"},
				{name: "wrong chain", edit: func(_ *tokensig.Authorization, d *tokensig.Domain) { d.ChainID = 8453 },
					code: checkout.CodeAuthorizationInvalid, param: "evmChainId"},
				{name: "wrong recipient", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) {
					a.To = common.HexToAddress("0x00000000000000000000000000000000000b0b")
				}, code: checkout.CodeAuthorizationInvalid, param: "to"},
				{name: "not valid at once", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) { a.ValidAfter = big.NewInt(1) },
					code: checkout.CodeAuthorizationInvalid, param: "validAfter"},
				{name: "valid past the quote", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) { a.ValidBefore.Add(a.ValidBefore, big.NewInt(1)) },
					code: checkout.CodeAuthorizationInvalid, param: "validBefore"},
				{name: "expired", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) { a.ValidBefore = big.NewInt(f.now.Unix() - 1) },
					code: checkout.CodeAuthorizationExpired, param: "validBefore"},
				{name: "about to expire", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) { a.ValidBefore = big.NewInt(f.now.Unix() + 29) },
					code: checkout.CodeAuthorizationExpired, param: "validBefore"},
				{name: "malformed signature", req: func(r *checkout.GaslessRequest) { r.Signature = r.Signature[:len(r.Signature)-2] },
					code: domain.CodeSignatureInvalid, param: "signature"},
				{name: "replayed nonce", edit: func(a *tokensig.Authorization, _ *tokensig.Domain) {
					f.chain.used[a.Nonce] = true
				}, code: checkout.CodeAuthorizationUsed, param: "nonce", conflict: true},
				{name: "insufficient balance", key: other, edit: func(a *tokensig.Authorization, _ *tokensig.Domain) {
					a.From = crypto.PubkeyToAddress(other.PublicKey)
				}, code: domain.CodeInsufficientBalance, param: "from", conflict: true},
				{name: "native quote", req: func(r *checkout.GaslessRequest) { r.QuoteID = f.eth.ID },
					code: checkout.CodeGaslessNotOffered, param: "quoteId", conflict: true},
			} {
				t.Run(c.name, func(t *testing.T) {
					key := f.payer
					if c.key != nil {
						key = c.key
					}
					r := f.request(t, key, c.edit)
					if c.req != nil {
						c.req(&r)
					}
					_, err := f.svc.SubmitGasless(ctx, f.p, r)
					require.Error(t, err)
					code, param, conflict := refusal(err)
					assert.Equal(t, c.code, code, "%v", err)
					assert.Equal(t, c.param, param)
					assert.Equal(t, c.conflict, conflict)
					assert.Empty(t, f.stored(t), "a refusal stores nothing")
				})
			}

			// Another payment's quote, and the chain down.
			_, err = f.svc.SubmitGasless(ctx, f.p, checkout.GaslessRequest{QuoteID: uuid.New()})
			assert.ErrorIs(t, err, domain.ErrQuoteNotFound)
			f.chain.down = true
			_, err = f.svc.SubmitGasless(ctx, f.p, f.request(t, f.payer, nil))
			assert.ErrorIs(t, err, domain.ErrGaslessUnavailable)
			f.chain.down = false

			// The good one is stored for the relayer with its terms; posted again, refused.
			good := f.request(t, f.payer, nil)
			g, err := f.svc.SubmitGasless(ctx, f.p, good)
			require.NoError(t, err)
			assert.Equal(t, store.GaslessAccepted, g.Status)
			assert.Equal(t, domain.GaslessFeeMerchant, g.FeePaidBy)
			rows := f.stored(t)
			require.Len(t, rows, 1)
			assert.Equal(t, g.ID, rows[0].ID)
			assert.Equal(t, "20000000", rows[0].Value.String())
			assert.Equal(t, strings.ToLower(good.Nonce), rows[0].Nonce)
			assert.Equal(t, strings.ToLower(good.Signature), rows[0].Signature)
			assert.Equal(t, f.usdc.ExpiresAt.Unix(), rows[0].ValidBefore)
			_, err = f.svc.SubmitGasless(ctx, f.p, good)
			code, param, conflict := refusal(err)
			assert.Equal(t, checkout.CodeAuthorizationUsed, code)
			assert.Equal(t, "nonce", param)
			assert.True(t, conflict)
			assert.Len(t, f.stored(t), 1)

			// One in flight per payment: a second authorization (a customer who signed again
			// after a reload) is refused while the first waits or is relayed, and the view stops
			// offering the quotes without gas; once it failed, another is taken.
			second := func(name string) checkout.GaslessRequest {
				return f.request(t, f.payer, func(a *tokensig.Authorization, _ *tokensig.Domain) { a.Nonce = crypto.Keccak256Hash([]byte(name)) })
			}
			_, err = f.svc.SubmitGasless(ctx, f.p, second("again"))
			require.ErrorIs(t, err, domain.ErrGaslessInProgress)
			assert.Len(t, f.stored(t), 1)
			assert.Nil(t, f.offered(t), "not offered while one is in flight")
			fail := func(id uuid.UUID) {
				t.Helper()
				why := "reverted"
				require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
					return tx.FinishGasless(id, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessFailed, nil, &why, f.now)
				}))
			}
			fail(g.ID)
			require.NotNil(t, f.offered(t), "offered again once it failed")

			// A wallet answering v as 0/1 is read as 27/28.
			low := second("low v")
			raw := common.FromHex(low.Signature)
			raw[64] -= 27
			low.Signature = fmt.Sprintf("0x%x", raw)
			lowG, err := f.svc.SubmitGasless(ctx, f.p, low)
			require.NoError(t, err)

			// Three failed: no longer offered without gas, and a fourth is refused.
			fail(lowG.ID)
			third, err := f.svc.SubmitGasless(ctx, f.p, second("third"))
			require.NoError(t, err)
			fail(third.ID)
			assert.Nil(t, f.offered(t), "not offered after three failed")
			_, err = f.svc.SubmitGasless(ctx, f.p, second("fourth"))
			code, param, conflict = refusal(err)
			assert.Equal(t, checkout.CodeGaslessNotOffered, code, "%v", err)
			assert.Equal(t, "quoteId", param)
			assert.True(t, conflict)
			assert.Len(t, f.stored(t), 3)

			// A final payment takes none.
			done := f.p
			done.Status = domain.PaymentCompleted
			_, err = f.svc.SubmitGasless(ctx, done, f.request(t, f.payer, func(a *tokensig.Authorization, _ *tokensig.Domain) {
				a.Nonce = crypto.Keccak256Hash([]byte("late"))
			}))
			assert.ErrorIs(t, err, domain.ErrPaymentNotOpen)
		})
	}
}

// The offer: the token's own domain, the quote's amount (plus the buyer's relay fee, rounded up
// in the token), the quote's expiry; none for a native quote.
func TestGaslessOffer(t *testing.T) {
	f := newGaslessFixture(t, "sqlite")
	ctx := context.Background()
	// The chain down at the first view: not offered, and not asked again for 30 s (a polled view
	// never waits on it); then read once and kept.
	f.chain.down = true
	o, err := f.svc.Offer(ctx, f.p, f.usdc)
	require.NoError(t, err)
	assert.Nil(t, o)
	f.chain.down = false
	o, err = f.svc.Offer(ctx, f.p, f.usdc)
	require.NoError(t, err)
	assert.Nil(t, o, "a failed read is not retried at once")
	now := f.now
	f.svc.Now = func() time.Time { return now.Add(31 * time.Second) }
	o, err = f.svc.Offer(ctx, f.p, f.usdc)
	require.NoError(t, err)
	require.NotNil(t, o)
	assert.Equal(t, f.chain.domain, o.Domain)
	assert.Equal(t, domain.GaslessFeeMerchant, o.FeePaidBy)
	assert.True(t, o.Value.Equal(decimal.NewFromInt(20_000_000)))
	assert.True(t, o.FeeAsset.IsZero())
	assert.Equal(t, f.usdc.ExpiresAt.Unix(), o.ValidBefore)
	none, err := f.svc.Offer(ctx, f.p, f.eth)
	require.NoError(t, err)
	assert.Nil(t, none)

	buyer := f.p
	buyer.Merchant.GaslessFeePaidBy = domain.GaslessFeeBuyer
	o, err = f.svc.Offer(ctx, buyer, f.usdc)
	require.NoError(t, err)
	assert.Equal(t, int64(100), o.FeeCents, "Ethereum's gasless fee (catalogue)")
	assert.True(t, o.FeeAsset.Equal(decimal.NewFromInt(1_000_000)), "%s", o.FeeAsset)
	assert.True(t, o.Value.Equal(decimal.NewFromInt(21_000_000)))
	// At a rate that does not divide: rounded up (owed to us), exact.
	q := f.usdc
	q.RateUSDAsset = decimal.RequireFromString("0.9997")
	cents, units, err := checkout.GaslessFee(domain.GaslessFeeBuyer, q)
	require.NoError(t, err)
	assert.Equal(t, int64(100), cents)
	assert.Equal(t, "1000301", units.String()) // 1.00 / 0.9997 = 1.000300090… USDC
	cents, units, err = checkout.GaslessFee(domain.GaslessFeeMerchant, q)
	require.NoError(t, err)
	assert.Zero(t, cents)
	assert.True(t, units.IsZero())

	// A quote with too little time left is not offered (the page refreshes the quotes).
	f.svc.Now = func() time.Time { return f.usdc.ExpiresAt.Add(-checkout.GaslessMinValidity) }
	o, err = f.svc.Offer(ctx, f.p, f.usdc)
	require.NoError(t, err)
	assert.Nil(t, o)
}
