package withdrawals

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/store"
)

const addrLower = "0x9858effd232b4033e47d90003d41ec34ecaeda94"

func requireInvalid(t *testing.T, err error, code, param string) *domain.InvalidInputError {
	t.Helper()
	var inv *domain.InvalidInputError
	require.True(t, errors.As(err, &inv), "want InvalidInputError, got %v", err)
	assert.EqualValues(t, code, inv.Code)
	assert.Equal(t, param, inv.Param)
	return inv
}

func TestNormaliseAddress(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string // substring of the message; empty: accepted
	}{
		{"lowercase", addrLower, addrLower, ""},
		{"uppercase hex digits", "0x9858EFFD232B4033E47D90003D41EC34ECAEDA94", addrLower, ""},
		{"EIP-55 mixed case", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", addrLower, ""},
		{"mixed case with a wrong checksum is accepted too", "0x9858eFFD232B4033E47d90003D41EC34EcaEda94", addrLower, ""},
		{"all-digit address", "0x1111111111111111111111111111111111111111", "0x1111111111111111111111111111111111111111", ""},
		{"zero address refused", "0x0000000000000000000000000000000000000000", "", "zero address"},
		{"no 0x prefix", "9858effd232b4033e47d90003d41ec34ecaeda94", "", "0x-prefixed"},
		{"upper-case 0X prefix", "0X9858effd232b4033e47d90003d41ec34ecaeda94", "", "0x-prefixed"},
		{"short by one digit", "0x9858effd232b4033e47d90003d41ec34ecaeda9", "", "0x-prefixed"},
		{"long by one digit", "0x9858effd232b4033e47d90003d41ec34ecaeda941", "", "0x-prefixed"},
		{"32-byte value", "0x" + strings.Repeat("ab", 32), "", "0x-prefixed"},
		{"non-hex digit", "0x9858effd232b4033e47d90003d41ec34ecaedagg", "", "0x-prefixed"},
		{"empty", "", "", "0x-prefixed"},
		{"just 0x", "0x", "", "0x-prefixed"},
		{"surrounding whitespace", " " + addrLower + " ", "", "0x-prefixed"},
		{"ENS name", "vitalik.eth", "", "0x-prefixed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normaliseAddress(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				inv := requireInvalid(t, err, "parameter_invalid", "recipientAddress")
				assert.Contains(t, inv.Message, tc.wantErr)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestConfiguredToken(t *testing.T) {
	base := domain.Chain{ID: 8453, Enabled: true}
	baseOff := domain.Chain{ID: 8453, Enabled: false}
	eth := domain.Chain{ID: 1, Enabled: true}
	usdcBase := domain.Token{ID: "eip155:8453/erc20:usdc", Chain: base, Symbol: "USDC", Status: "active"}
	usdtBase := domain.Token{ID: "eip155:8453/erc20:usdt", Chain: base, Symbol: "USDT", Status: "active"}
	nativeBase := domain.Token{ID: "eip155:8453/slip44:60", Chain: base, Symbol: "ETH", Status: "active"}
	usdcEth := domain.Token{ID: "eip155:1/erc20:usdc", Chain: eth, Symbol: "USDC", Status: "active"}
	catOf := func(ts ...domain.Token) domain.Catalog {
		c := domain.Catalog{Tokens: map[string]domain.Token{}}
		for _, tk := range ts {
			c.Tokens[tk.ID] = tk
		}
		return c
	}
	deprecated := usdcBase
	deprecated.Status = "deprecated"
	blocked := usdcBase
	blocked.Status = "blocked"
	disabled := usdcBase
	disabled.Chain = baseOff
	cfg := domain.WithdrawalConfig{ChainIDs: []int64{1, 8453}, TokenSymbol: "USDC"}

	tests := []struct {
		name    string
		cat     domain.Catalog
		cfg     domain.WithdrawalConfig
		chainID int64
		wantID  string // empty: not found
	}{
		{"configured chain and token", catOf(nativeBase, usdtBase, usdcBase, usdcEth), cfg, 8453, usdcBase.ID},
		{"token on the other configured chain", catOf(nativeBase, usdtBase, usdcBase, usdcEth), cfg, 1, usdcEth.ID},
		{"chain not in the merchant's config", catOf(usdcBase, usdcEth), domain.WithdrawalConfig{ChainIDs: []int64{1}, TokenSymbol: "USDC"}, 8453, ""},
		{"empty config", catOf(usdcBase), domain.WithdrawalConfig{}, 8453, ""},
		{"configured symbol picks USDT not USDC", catOf(usdcBase, usdtBase), domain.WithdrawalConfig{ChainIDs: []int64{8453}, TokenSymbol: "USDT"}, 8453, usdtBase.ID},
		{"symbol absent on the chain", catOf(usdcBase), domain.WithdrawalConfig{ChainIDs: []int64{8453}, TokenSymbol: "DAI"}, 8453, ""},
		{"symbol match is exact (case)", catOf(usdcBase), domain.WithdrawalConfig{ChainIDs: []int64{8453}, TokenSymbol: "usdc"}, 8453, ""},
		{"deprecated token", catOf(deprecated), cfg, 8453, ""},
		{"blocked token", catOf(blocked), cfg, 8453, ""},
		{"chain not served by this deployment", catOf(disabled), cfg, 8453, ""},
		{"configured chain without the token in the catalogue", catOf(usdcEth), cfg, 8453, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := configuredToken(tc.cat, tc.cfg, tc.chainID)
			if tc.wantID == "" {
				assert.False(t, ok)
				assert.Equal(t, domain.Token{}, got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.wantID, got.ID)
			assert.Equal(t, tc.chainID, got.Chain.ID)
		})
	}
}

// Validation that happens before any database access.
func TestCreateRejectsBeforeTouchingTheStore(t *testing.T) {
	s := &Service{Now: time.Now} // nil Store: reaching it would panic
	on := domain.Merchant{WithdrawalsEnabled: true}
	valid := CreateInput{AmountInCents: 500, ChainID: 8453, RecipientAddress: addrLower, Currency: "USD"}
	with := func(f func(*CreateInput)) CreateInput { in := valid; f(&in); return in }
	tests := []struct {
		name  string
		m     domain.Merchant
		in    CreateInput
		code  string
		param string
	}{
		{"amount below min", on, with(func(i *CreateInput) { i.AmountInCents = domain.WithdrawalMinAmountCents - 1 }), "invalid_amount", "amountInCents"},
		{"amount zero", on, with(func(i *CreateInput) { i.AmountInCents = 0 }), "invalid_amount", "amountInCents"},
		{"amount above max", on, with(func(i *CreateInput) { i.AmountInCents = domain.WithdrawalMaxAmountCents + 1 }), "invalid_amount", "amountInCents"},
		{"currency not USD", on, with(func(i *CreateInput) { i.Currency = "EUR" }), "parameter_invalid", "currency"},
		{"bad address", on, with(func(i *CreateInput) { i.RecipientAddress = "0x123" }), "parameter_invalid", "recipientAddress"},
		{"zero address", on, with(func(i *CreateInput) { i.RecipientAddress = "0x0000000000000000000000000000000000000000" }), "parameter_invalid", "recipientAddress"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(context.Background(), tc.m, tc.in, nil)
			requireInvalid(t, err, tc.code, tc.param)
		})
	}
	t.Run("withdrawals disabled", func(t *testing.T) {
		_, err := s.Create(context.Background(), domain.Merchant{}, valid, nil)
		assert.ErrorIs(t, err, domain.ErrWithdrawalsOff)
	})
}

type env struct {
	svc *Service
	st  *store.Store
	m   domain.Merchant
	now time.Time
}

func newEnv(t *testing.T, n chains.Networks) env {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "w.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cat, err := chains.Load(st.Read(ctx), n)
	require.NoError(t, err)
	ms := &merchants.Service{Store: st, Networks: n, Catalog: cat, BackendWallet: addrLower, Now: clock}
	c, err := ms.Create(ctx, merchants.CreateInput{Name: "Acme", WithdrawalsEnabled: true, Mode: domain.ModeLive})
	require.NoError(t, err)
	core := &lifecycle.Core{Store: st, Catalog: cat, Now: clock}
	return env{svc: &Service{Store: st, Core: core, Catalog: cat, Now: clock}, st: st, m: c.Merchant, now: now}
}

func (e env) credit(t *testing.T, cents int64) {
	t.Helper()
	require.NoError(t, e.st.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.AppendLedger(e.m.ID, domain.ModeLive, store.LedgerPaymentCredit, cents, nil, nil, e.now)
	}))
}

func TestCreateAgainstTheStore(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, chains.Mainnet)

	_, err := e.svc.Create(ctx, e.m, CreateInput{AmountInCents: 500, ChainID: 8453, RecipientAddress: addrLower}, nil)
	var short *domain.InsufficientBalanceError
	require.ErrorAs(t, err, &short)
	assert.Equal(t, domain.InsufficientBalanceError{RequestedCents: 500, AvailableCents: 0}, *short)

	_, err = e.svc.Create(ctx, e.m, CreateInput{AmountInCents: 500, ChainID: 11155111, RecipientAddress: addrLower}, nil)
	inv := requireInvalid(t, err, "chain_not_supported", "chainId")
	assert.Contains(t, inv.Message, "eip155:11155111", "a testnet is not served on mainnet")

	e.credit(t, 1000)
	w, err := e.svc.Create(ctx, e.m, CreateInput{AmountInCents: 600, ChainID: 8453,
		RecipientAddress: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"}, nil)
	require.NoError(t, err)
	assert.Equal(t, domain.WithdrawalPending, w.Status)
	assert.Equal(t, "USD", w.Currency, "currency defaults to USD")
	assert.Equal(t, addrLower, w.RecipientAddress, "stored lowercase")
	assert.Equal(t, int64(8453), w.Chain.ID)
	assert.Equal(t, "USDC", w.Token.Symbol)

	bal, err := e.st.Read(ctx).AvailableBalance(e.m.ID, domain.ModeLive)
	require.NoError(t, err)
	assert.Equal(t, int64(400), bal, "the withdrawal is debited at once")

	_, err = e.svc.Create(ctx, e.m, CreateInput{AmountInCents: 401, ChainID: 8453, RecipientAddress: addrLower}, nil)
	require.ErrorAs(t, err, &short)
	assert.Equal(t, int64(400), short.AvailableCents, "one cent above the balance is refused")
	_, err = e.svc.Create(ctx, e.m, CreateInput{AmountInCents: 400, ChainID: 8453, RecipientAddress: addrLower}, nil)
	require.NoError(t, err, "exactly the balance is allowed")
	bal, err = e.st.Read(ctx).AvailableBalance(e.m.ID, domain.ModeLive)
	require.NoError(t, err)
	assert.Zero(t, bal)

	got, err := e.svc.Get(ctx, e.m, w.ID.String())
	require.NoError(t, err)
	assert.Equal(t, w.ID, got.ID)
	assert.Equal(t, int64(600), got.AmountInCents)

	_, err = e.svc.Get(ctx, e.m, "not-a-uuid")
	assert.ErrorIs(t, err, domain.ErrWithdrawalNotFound)
	_, err = e.svc.Get(ctx, domain.Merchant{ID: w.ID}, w.ID.String())
	assert.ErrorIs(t, err, domain.ErrWithdrawalNotFound, "another merchant's withdrawal is not found")

	list, page, err := e.svc.List(ctx, e.m, "", false, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(2), page.Total)
	require.Len(t, list, 2)
	assert.Equal(t, w.ID, list[1].ID)
	list, page, err = e.svc.List(ctx, e.m, "completed", false, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), page.Total)
	assert.Empty(t, list)
}
