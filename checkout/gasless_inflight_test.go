package checkout_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// insertGaslessPayment stores a $18.50 payment of m with a USDC and an ETH quote on Ethereum.
func insertGaslessPayment(t *testing.T, st *store.Store, cat domain.Catalog, m domain.Merchant, now time.Time) domain.Payment {
	t.Helper()
	ctx := context.Background()
	p := domain.Payment{ID: uuid.Must(uuid.NewV7()), Merchant: m, Type: domain.TypePayment, AmountInCents: 1_850, AmountDueCents: 2_000,
		Currency: "USD", Status: domain.PaymentPending, ExpiresAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now, Version: 1,
		SecretHash: make([]byte, 32)}
	usdc, ok := cat.Tokens[store.ERC20TokenID(1, usdcMainnet)]
	require.True(t, ok)
	native, ok := cat.Tokens[store.NativeTokenID(1)]
	require.True(t, ok)
	p.Quotes = []domain.Quote{
		{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, Token: usdc, ExpectedAmountAsset: decimal.NewFromInt(20_000_000),
			RateUSDAsset: decimal.NewFromInt(1), ConvenienceFeeCents: 150, ExpiresAt: now.Add(15 * time.Minute), Status: domain.QuoteActive, CreatedAt: now},
		{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, Token: native, ExpectedAmountAsset: decimal.NewFromInt(6_666_666_666_666_667),
			RateUSDAsset: decimal.NewFromInt(3_000), ConvenienceFeeCents: 150, ExpiresAt: now.Add(15 * time.Minute), Status: domain.QuoteActive, CreatedAt: now},
	}
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
		idx, err := tx.AllocateDerivationIndex()
		if err != nil {
			return err
		}
		p.DepositAddress = domain.DepositAddress{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, PaymentID: &p.ID, DerivationIndex: idx,
			Address: fmt.Sprintf("0x%040x", idx+0xabc), CreatedAt: now}
		if err := tx.InsertDepositAddress(p.DepositAddress); err != nil {
			return err
		}
		return tx.InsertPayment(p)
	}))
	loaded, err := st.Read(ctx).PaymentByID(p.ID, cat)
	require.NoError(t, err)
	return loaded
}

// on is f for another payment of the same merchant and payer.
func (f gaslessFixture) on(p domain.Payment) gaslessFixture {
	f.p, f.usdc, f.eth, f.deposit = p, p.Quotes[0], p.Quotes[1], common.HexToAddress(p.DepositAddress.Address)
	return f
}

// The payer's balance must cover what it signed for other payments and is not relayed yet
// (review of issue 24, defect 2): one balance accepted for two payments had the second fail at
// the relayer, or revert on our gas. Fails without the fix (the second is accepted).
func TestGaslessBalanceCountsSignedInFlight(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			f := newGaslessFixture(t, backend)
			ctx := context.Background()
			first, err := f.svc.SubmitGasless(ctx, f.p, f.request(t, f.payer, nil)) // the payer holds exactly this
			require.NoError(t, err)
			other := f.on(insertGaslessPayment(t, f.st, f.svc.Catalog, f.p.Merchant, f.now))
			second := other.request(t, f.payer, func(a *tokensig.Authorization, _ *tokensig.Domain) { a.Nonce = crypto.Keccak256Hash([]byte("second")) })
			_, err = f.svc.SubmitGasless(ctx, other.p, second)
			code, param, conflict := refusal(err)
			assert.Equal(t, domain.CodeInsufficientBalance, code, "%v", err)
			assert.Equal(t, "from", param)
			assert.True(t, conflict)
			assert.Contains(t, err.Error(), "other signed payments waiting to be relayed need 20")
			assert.Empty(t, other.stored(t))

			// The first failed: its value is the payer's again.
			why := "expired"
			require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
				return tx.FinishGasless(first.ID, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessFailed, nil, &why, f.now)
			}))
			_, err = f.svc.SubmitGasless(ctx, other.p, second)
			require.NoError(t, err)
		})
	}
}

// A node that hangs: the checks of a posted authorization give up after GaslessReadTimeout and
// answer 503 no_chain_available (ErrGaslessUnavailable), however long the request may wait.
// Fails before: the reads waited on the request's own context.
func TestGaslessChainReadsAreBounded(t *testing.T) {
	f := newGaslessFixture(t, "sqlite")
	o, err := f.svc.Offer(context.Background(), f.p, f.usdc) // the token's domain, read and kept
	require.NoError(t, err)
	require.NotNil(t, o)
	f.chain.hang = true
	f.svc.GaslessReadTimeout = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = f.svc.SubmitGasless(ctx, f.p, f.request(t, f.payer, nil))
	require.ErrorIs(t, err, domain.ErrGaslessUnavailable)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Empty(t, f.stored(t))
}
