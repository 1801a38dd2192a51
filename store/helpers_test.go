package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
)

// Well-known seeded tokens the fixtures quote in.
const (
	usdcEthereum = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
	bigAmount    = "123456789012345678901234567890" // beyond int64 and float64 precision
	bigRate      = "3456.123456789012345678"
)

// t0 is the fixtures' clock: UTC and microsecond precision, what both backends store exactly.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// eachBackend runs fn as one subtest per backend on a fresh, migrated database.
func eachBackend(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			fn(t, openMigrated(t, testdb.URL(t, backend)))
		})
	}
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func openMigrated(t *testing.T, url string) *store.Store {
	t.Helper()
	st := openStore(t, url)
	require.NoError(t, st.Migrate(context.Background(), discardLog()))
	return st
}

func loadCatalog(t *testing.T, st *store.Store) domain.Catalog {
	t.Helper()
	cat, err := st.Read(context.Background()).LoadCatalog()
	require.NoError(t, err)
	return cat
}

func token(t *testing.T, cat domain.Catalog, id string) domain.Token {
	t.Helper()
	tk, ok := cat.Tokens[id]
	require.True(t, ok, "token %s is not in the catalogue", id)
	return tk
}

func ptr[T any](v T) *T { return &v }

func dec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	require.NoError(t, err)
	return d
}

func createMerchant(t *testing.T, st *store.Store, name, shortName string) domain.Merchant {
	t.Helper()
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: name, ShortName: shortName,
		LogoURL: ptr("https://example.test/" + shortName + ".png"), DepositsEnabled: true, CreatedAt: t0}
	require.NoError(t, st.InTx(context.Background(), func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	return m
}

// paymentSpec describes one fixture payment; zero fields get defaults.
type paymentSpec struct {
	Type      domain.PaymentType
	Status    domain.PaymentStatus
	Amount    int64
	CreatedAt time.Time
	Address   string // lowercase 0x+40 hex; derived from the derivation index when empty
	NoQuotes  bool
}

// insertPayment stores a payment the way the payments service does: a fresh derivation index,
// a deposit address owned by the payment, then the payment with a USDC and a native-ETH quote.
func insertPayment(t *testing.T, st *store.Store, cat domain.Catalog, m domain.Merchant, s paymentSpec) domain.Payment {
	t.Helper()
	if s.Type == "" {
		s.Type = "payment"
	}
	if s.Status == "" {
		s.Status = "pending"
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = t0
	}
	p := domain.Payment{ID: uuid.Must(uuid.NewV7()), Merchant: m, Type: s.Type, AmountInCents: s.Amount,
		AmountDueCents: s.Amount, AmountMerchantNetCents: s.Amount * 99 / 100, Currency: "USD", Status: s.Status,
		OrderID: ptr("order-" + s.CreatedAt.Format("150405.000000")), CustomerRefID: ptr("customer-1"),
		RedirectURL: ptr("https://shop.example.test/done"), CustomMetadata: ptr(`{"cart":42}`),
		ExpiresAt: s.CreatedAt.Add(24 * time.Hour), CreatedAt: s.CreatedAt, UpdatedAt: s.CreatedAt, Version: 1}
	sum := sha256.Sum256(p.ID[:])
	p.SecretHash = sum[:]
	if !s.NoQuotes {
		p.Quotes = []domain.Quote{
			{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, Token: token(t, cat, store.ERC20TokenID(1, usdcEthereum)),
				ExpectedAmountAsset: decimal.NewFromInt(s.Amount * 10_000), RateUSDAsset: decimal.NewFromInt(1),
				AmountDueCents: ptr(s.Amount + 150), ConvenienceFeeCents: 150, ExpiresAt: s.CreatedAt.Add(15 * time.Minute),
				Status: "active", CreatedAt: s.CreatedAt},
			{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, Token: token(t, cat, store.NativeTokenID(8453)),
				ExpectedAmountAsset: dec(t, bigAmount), RateUSDAsset: dec(t, bigRate), ConvenienceFeeCents: 5,
				ExpiresAt: s.CreatedAt.Add(15 * time.Minute), Status: "active", CreatedAt: s.CreatedAt.Add(time.Second)},
		}
	}
	err := st.InTx(context.Background(), func(tx *store.Tx) error {
		idx, err := tx.AllocateDerivationIndex()
		if err != nil {
			return err
		}
		addr := s.Address
		if addr == "" {
			addr = fmt.Sprintf("0x%040x", idx+1)
		}
		p.DepositAddress = domain.DepositAddress{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, PaymentID: ptr(p.ID),
			DerivationIndex: idx, Address: addr, CreatedAt: s.CreatedAt}
		if err := tx.InsertDepositAddress(p.DepositAddress); err != nil {
			return err
		}
		return tx.InsertPayment(p)
	})
	require.NoError(t, err)
	return p
}

// settle completes p on its first quote with a receipt carrying the given hash and sender.
func settle(t *testing.T, st *store.Store, p domain.Payment, txHash, sender string) domain.Payment {
	t.Helper()
	require.NotEmpty(t, p.Quotes)
	q := p.Quotes[0]
	before := p
	p.Quotes = append([]domain.Quote(nil), p.Quotes...)
	for i := range p.Quotes {
		p.Quotes[i].Status = domain.QuoteExpired
	}
	p.Quotes[0].Status = domain.QuoteUsed
	p.Status = domain.PaymentCompleted
	p.Version = before.Version + 1
	p.ConvenienceFeeCents, p.MerchantFeeCents, p.SwapFeeCents = ptr(int64(150)), ptr(p.AmountInCents/100), ptr(int64(0))
	at := p.CreatedAt.Add(5 * time.Minute)
	p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: q.ID, Token: q.Token,
		SettledAmountAsset: q.ExpectedAmountAsset, SettledAmountUSD: dec(t, "12.34"), TxHash: ptr(txHash),
		TxBlockNumber: ptr(int64(19_000_000)), TxTimestamp: ptr(at), TxSenderAddress: ptr(sender),
		TxTotalCost: ptr(dec(t, bigAmount)), ProcessedBy: ptr(domain.ProcessedByManual), Confirmations: 12, RequiredConfirmations: 12,
		CreatedAt: at}
	p.UpdatedAt = at
	require.NoError(t, st.InTx(context.Background(), func(tx *store.Tx) error { return tx.SavePaymentChange(before, p) }))
	return p
}

func paymentIDs(ps []domain.Payment) []uuid.UUID {
	out := make([]uuid.UUID, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func idLess(a, b uuid.UUID) bool { return bytes.Compare(a[:], b[:]) < 0 }

// storeAt opens a database of backend migrated up to version — the older schema a migration
// test fills by hand before migrating the rest — and answers it with its raw connection.
func storeAt(t *testing.T, backend string, version int64) (*store.Store, *gorm.DB) {
	t.Helper()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.MigrateUpTo(context.Background(), version))
	return st, st.GormDB()
}

// rawMerchant inserts a merchant row by hand (a migration test's older schema) and answers its id.
func rawMerchant(t *testing.T, db *gorm.DB) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	require.NoError(t, db.Exec(`INSERT INTO merchants (id, name, short_name, deposits_enabled, withdrawals_enabled, created_at)
		VALUES (?, 'M', 'm', TRUE, TRUE, ?)`, id, t0).Error)
	return id
}
