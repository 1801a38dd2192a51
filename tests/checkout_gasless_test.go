package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// USDC without gas (issue 24), from the outside: a payer holding USDC and no ETH at all signs an
// EIP-3009 TransferWithAuthorization of the quote (as the checkout offers it), the page posts it,
// and the service's hot wallet relays it: the payment completes, its receipt says txIsSponsored
// with the relay's real gas from the chain, and the payer still holds no ETH. A replayed
// authorization and an expired one are refused and change nothing. The relay's gas is charged to
// the merchant by default; a merchant who passes it on has the buyer sign the chain's relay fee on
// top, counted in the convenience fee.

// gaslessPayer is a fresh account holding USDC and no native token.
func (r reportEnv) gaslessPayer(usdc *big.Int) *ecdsa.PrivateKey {
	r.t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(r.t, err)
	r.pay(2, "USDC", crypto.PubkeyToAddress(key.PublicKey), usdc)
	r.app.Devnet.Commit()
	return key
}

// gaslessOffer is the checkout's gasless offer of p's quote.
func (r reportEnv) gaslessOffer(p checkoutPayment) map[string]any {
	r.t.Helper()
	res := r.do(http.MethodGet, checkoutPath(p.id), "", nil, "X-Service-Payment-Secret", p.secret)
	require.Equal(r.t, http.StatusOK, res.Status, string(res.Body))
	for _, q := range res.JSON(r.t)["quotes"].([]any) {
		if q := q.(map[string]any); q["id"] == p.quoteID {
			g, _ := q["gasless"].(map[string]any)
			return g
		}
	}
	r.t.Fatalf("quote %s not in the checkout", p.quoteID)
	return nil
}

// signedTransfer is an authorization's JSON body, signed by key in the devnet USDC's domain as
// the offer names it; edit changes the terms before signing.
func signedTransfer(t *testing.T, key *ecdsa.PrivateKey, p checkoutPayment, offer map[string]any, edit func(a *tokensig.Authorization)) map[string]any {
	t.Helper()
	value, ok := new(big.Int).SetString(offer["valueAsset"].(string), 10)
	require.True(t, ok)
	var nonce common.Hash
	_, err := rand.Read(nonce[:])
	require.NoError(t, err)
	a := tokensig.Authorization{From: crypto.PubkeyToAddress(key.PublicKey), To: p.deposit, Value: value, ValidAfter: new(big.Int),
		ValidBefore: big.NewInt(int64(offer["validBefore"].(float64))), Nonce: nonce}
	if edit != nil {
		edit(&a)
	}
	d := tokensig.Domain{Name: offer["domainName"].(string), Version: offer["domainVersion"].(string), ChainID: devnet.ChainID,
		Contract: common.HexToAddress(devnet.USDCAddress)}
	sig, err := tokensig.Sign(key, d, a)
	require.NoError(t, err)
	return map[string]any{"quoteId": p.quoteID, "evmChainId": devnet.ChainID, "tokenAddress": devnet.USDCAddress,
		"from": strings.ToLower(a.From.Hex()), "to": strings.ToLower(a.To.Hex()), "value": a.Value.String(),
		"validAfter": a.ValidAfter.Int64(), "validBefore": a.ValidBefore.Int64(), "nonce": a.Nonce.Hex(), "signature": sig.Hex()}
}

func (r reportEnv) submitGasless(p checkoutPayment, body map[string]any) response {
	r.t.Helper()
	return r.do(http.MethodPost, checkoutPath(p.id, "/gasless-payments"), "", body, "X-Service-Payment-Secret", p.secret)
}

func (r reportEnv) payment(p checkoutPayment) map[string]any {
	r.t.Helper()
	return r.do(http.MethodGet, paymentsPath+"/"+p.id, r.key, nil).JSON(r.t)
}

func (r reportEnv) gaslessRows(p checkoutPayment) []store.GaslessAuthorization {
	r.t.Helper()
	gs, err := r.app.Store.Read(context.Background()).PaymentGasless(uuid.MustParse(p.id))
	require.NoError(r.t, err)
	return gs
}

func TestGaslessPaymentOnTheDevnet(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := newReportEnv(t, backend, 0)
			ctx := context.Background()
			a := r.newPayment("USDC")
			key := r.gaslessPayer(new(big.Int).Mul(a.due, big.NewInt(3)))
			payer := crypto.PubkeyToAddress(key.PublicKey)
			eth, err := r.eth.BalanceAt(ctx, payer, nil)
			require.NoError(t, err)
			require.Zero(t, eth.Sign(), "the payer holds no ETH")

			// The checkout offers the quote without gas, in the token's own domain; the merchant
			// bears the gas by default, so the value is the quote's amount.
			offer := r.gaslessOffer(a)
			require.NotNil(t, offer, "the devnet USDC quote is offered without gas")
			assert.Equal(t, "USD Coin (devnet)", offer["domainName"])
			assert.Equal(t, "2", offer["domainVersion"])
			assert.Equal(t, a.due.String(), offer["valueAsset"])
			assert.Equal(t, "0", offer["feeAsset"])
			assert.Equal(t, "merchant", offer["feePaidBy"])

			// An expired authorization: refused, nothing stored or sent.
			expired := signedTransfer(t, key, a, offer, func(x *tokensig.Authorization) { x.ValidBefore = big.NewInt(time.Now().Unix() - 1) })
			requireRefused(t, r.submitGasless(a, expired), http.StatusBadRequest, "authorization_expired")
			assert.Empty(t, r.gaslessRows(a))

			// The good one: accepted, relayed by the hot wallet, settled by the watcher.
			good := signedTransfer(t, key, a, offer, nil)
			res := r.submitGasless(a, good)
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			assert.Equal(t, "accepted", res.JSON(t)["status"])
			// Posted twice: the same nonce is refused (it was posted already).
			requireRefused(t, r.submitGasless(a, good), http.StatusConflict, "authorization_used")
			// Signed again (a reload, a double click) while the first is in flight: refused, one
			// at a time, or the customer would pay twice; the checkout offers none meanwhile.
			requireRefused(t, r.submitGasless(a, signedTransfer(t, key, a, offer, nil)), http.StatusConflict, "gasless_in_progress")
			assert.Nil(t, r.gaslessOffer(a), "not offered while one is in flight")
			assert.Len(t, r.gaslessRows(a), 1)
			r.until("payment completed", func() bool { return r.status(a) == "completed" })

			p := r.payment(a)
			receipt := p["receipt"].(map[string]any)
			assert.Equal(t, true, receipt["txIsSponsored"], "the hot wallet paid the gas")
			hot := strings.ToLower(devnet.AccountAddress(devnet.HotWalletAccount).Hex())
			assert.Equal(t, hot, receipt["txSenderAddress"])
			rc, err := r.eth.TransactionReceipt(ctx, common.HexToHash(receipt["txHash"].(string)))
			require.NoError(t, err)
			assert.EqualValues(t, rc.GasUsed, receipt["txGasUsed"], "the real gas, from the chain")
			cost := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
			assert.Equal(t, cost.String(), receipt["txTotalCost"])
			eth, err = r.eth.BalanceAt(ctx, payer, nil)
			require.NoError(t, err)
			assert.Zero(t, eth.Sign(), "the payer still holds no ETH")
			assert.Equal(t, a.due.String(), r.usdc(a.deposit).String(), "the deposit address holds exactly the quote")

			// The merchant bears the relay's gas: the receipt's cost in cents, rounded up, with
			// the merchant fee (1% of the amount) — exact integers.
			stored, err := r.app.Store.Read(ctx).PaymentByID(uuid.MustParse(a.id), r.app.Catalog)
			require.NoError(t, err)
			var ethRate decimal.Decimal
			for _, q := range stored.Quotes {
				if q.Token.Chain.ID == devnet.ChainID && q.Token.AssetType == domain.Native {
					ethRate = q.RateUSDAsset
				}
			}
			relayCents, err := money.GasCostCents(decimal.NewFromBigInt(cost, 0), 18, ethRate)
			require.NoError(t, err)
			require.Positive(t, relayCents)
			assert.EqualValues(t, money.FeeCents(1_000, 100)+relayCents, p["merchantFeeCents"])
			assert.EqualValues(t, 1_000-money.FeeCents(1_000, 100)-relayCents, p["amountMerchantNetCents"])
			assert.EqualValues(t, 0, p["convenienceFeeCents"])
			rows := r.gaslessRows(a)
			require.Len(t, rows, 1)
			assert.Equal(t, store.GaslessRelayed, rows[0].Status)

			// Replayed: the same authorization, or its nonce under new terms for another payment,
			// is refused (the token has the nonce used) and changes nothing.
			b := r.newPayment("USDC")
			requireRefused(t, r.submitGasless(b, good), http.StatusNotFound, "resource_not_found") // a's quote
			moved := map[string]any{}
			for k, v := range good {
				moved[k] = v
			}
			moved["quoteId"] = b.quoteID
			requireRefused(t, r.submitGasless(b, moved), http.StatusBadRequest, "authorization_invalid") // to: a's address
			var used common.Hash
			copy(used[:], common.FromHex(good["nonce"].(string)))
			replay := signedTransfer(t, key, b, r.gaslessOffer(b), func(x *tokensig.Authorization) { x.Nonce = used })
			requireRefused(t, r.submitGasless(b, replay), http.StatusConflict, "authorization_used")
			for range 3 {
				r.advance()
			}
			assert.Equal(t, "pending", r.status(b))
			assert.Empty(t, r.gaslessRows(b))
			assert.Zero(t, r.usdc(b.deposit).Sign())
			requireRefused(t, r.submitGasless(a, good), http.StatusConflict, "payment_not_open")

			// The merchant passes the gas on: the buyer signs the chain's relay fee (1 cent on the
			// devnet: 10000 units of USDC) on top, and it counts in the convenience fee.
			require.NoError(t, r.app.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.UpdateMerchantProfile(stored.Merchant.ID, store.MerchantProfile{GaslessFeePaidBy: domain.GaslessFeeBuyer})
			}))
			offer = r.gaslessOffer(b)
			assert.Equal(t, "buyer", offer["feePaidBy"])
			assert.Equal(t, "10000", offer["feeAsset"])
			assert.EqualValues(t, 1, offer["feeCents"])
			want := new(big.Int).Add(b.due, big.NewInt(10_000))
			assert.Equal(t, want.String(), offer["valueAsset"])
			short := signedTransfer(t, key, b, offer, func(x *tokensig.Authorization) { x.Value = b.due })
			requireRefused(t, r.submitGasless(b, short), http.StatusBadRequest, "authorization_invalid")
			res = r.submitGasless(b, signedTransfer(t, key, b, offer, nil))
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			r.until("payment completed", func() bool { return r.status(b) == "completed" })
			pb := r.payment(b)
			assert.EqualValues(t, 1, pb["convenienceFeeCents"])
			assert.EqualValues(t, 1_001, pb["amountDueCents"])
			assert.EqualValues(t, money.FeeCents(1_000, 100), pb["merchantFeeCents"], "the merchant bears nothing of the relay")
			assert.EqualValues(t, 1_000-money.FeeCents(1_000, 100), pb["amountMerchantNetCents"])
			assert.Equal(t, want.String(), r.usdc(b.deposit).String())
			assert.Equal(t, true, pb["receipt"].(map[string]any)["txIsSponsored"])
		})
	}
}

// The buyer's relay fee when the payment also has a cheaper quote of the token (review of issue
// 24, defect 4): a token's transfers were judged against its cheapest quote (an older one the
// checkout refreshed, say), so a relay signed for another quote lost its fee — taken for an
// overpayment and credited to the merchant. The payment now settles on the quote the relayed
// authorization was signed for. Fails before: settled on the older quote, convenienceFeeCents 0,
// amountDueCents 1000, the merchant's net 991 (the fee's cent credited to it).
func TestGaslessBuyerFeeWithACheaperQuote(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := newReportEnv(t, backend, 0)
			ctx := context.Background()
			a := r.newPayment("USDC")
			stored, err := r.app.Store.Read(ctx).PaymentByID(uuid.MustParse(a.id), r.app.Catalog)
			require.NoError(t, err)
			require.NoError(t, r.app.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.UpdateMerchantProfile(stored.Merchant.ID, store.MerchantProfile{GaslessFeePaidBy: domain.GaslessFeeBuyer})
			}))
			// An older USDC quote asking 0.005 USDC less, expired (still payable, and the cheapest).
			var signedFor domain.Quote
			for _, q := range stored.Quotes {
				if q.ID.String() == a.quoteID {
					signedFor = q
				}
			}
			older := signedFor
			older.ID, older.Status = uuid.Must(uuid.NewV7()), domain.QuoteExpired
			older.ExpectedAmountAsset = signedFor.ExpectedAmountAsset.Sub(decimal.NewFromInt(5_000))
			older.CreatedAt, older.ExpiresAt = signedFor.CreatedAt.Add(-time.Minute), time.Now().Add(-time.Second)
			require.NoError(t, r.app.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertQuotes(stored.ID, []domain.Quote{older}) }))

			offer := r.gaslessOffer(a)
			require.Equal(t, "10000", offer["feeAsset"])
			key := r.gaslessPayer(new(big.Int).Mul(a.due, big.NewInt(2)))
			res := r.submitGasless(a, signedTransfer(t, key, a, offer, nil))
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			r.until("payment completed", func() bool { return r.status(a) == "completed" })

			p := r.payment(a)
			assert.EqualValues(t, 1, p["convenienceFeeCents"], "the relay fee")
			assert.EqualValues(t, 1_001, p["amountDueCents"])
			assert.EqualValues(t, 1_000, p["amountInCents"], "no overpayment: the fee is not credited to the merchant")
			assert.EqualValues(t, 1_000-money.FeeCents(1_000, 100), p["amountMerchantNetCents"])
			settled, err := r.app.Store.Read(ctx).PaymentByID(stored.ID, r.app.Catalog)
			require.NoError(t, err)
			require.NotNil(t, settled.Received)
			assert.Equal(t, signedFor.ID, settled.Received.QuoteID, "settled on the quote signed for")
		})
	}
}
