package payments

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// After the checkout refreshed an expired quote, a token has two quotes. A transfer of the
// amount the expired quote asked for still completes the payment: every quote the customer was
// given stays payable, and the token's transfers are judged against the one asking the least.
func TestTransferUnderAnExpiredQuoteCompletesAfterARefresh(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	usdc := domain.Token{ID: "eip155:1337/erc20:usdc", Chain: domain.Chain{ID: 1337}, Symbol: "USDC", Decimals: 6, AssetType: domain.ERC20}
	old := domain.Quote{ID: uuid.Must(uuid.NewV7()), Token: usdc, ExpectedAmountAsset: decimal.NewFromInt(18_500_000),
		RateUSDAsset: decimal.NewFromInt(1), Status: domain.QuoteExpired, ExpiresAt: now.Add(-time.Minute)}
	fresh := domain.Quote{ID: uuid.Must(uuid.NewV7()), Token: usdc, ExpectedAmountAsset: decimal.NewFromInt(18_600_000),
		RateUSDAsset: decimal.RequireFromString("0.995"), Status: domain.QuoteActive, ExpiresAt: now.Add(10 * time.Minute)}
	p := domain.Payment{ID: uuid.Must(uuid.NewV7()), Type: domain.TypePayment, Status: domain.PaymentPending, AmountInCents: 1850,
		Quotes: []domain.Quote{old, fresh}, ExpiresAt: now.Add(time.Hour)}
	tr := store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: 1337, TokenID: usdc.ID, Amount: decimal.NewFromInt(18_500_000),
		Status: store.TransferConfirmed, BlockTime: now}
	v := evaluate(p, []store.Transfer{tr}, func(int64) bool { return false }, nil)
	if v.status != domain.PaymentCompleted || v.quote == nil || v.quote.ID != old.ID {
		t.Fatalf("want completed on the expired quote, got %s on %v", v.status, v.quote)
	}
}

// A relayed authorization (a payment without gas) was signed for one quote: the token's
// transfers are judged against it, not against a cheaper quote of the token, so the buyer's
// relay fee in its value is not taken for an overpayment (review of issue 24, defect 4).
func TestSignedTransferSettlesOnItsQuote(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	usdc := domain.Token{ID: "eip155:1337/erc20:usdc", Chain: domain.Chain{ID: 1337}, Symbol: "USDC", Decimals: 6, AssetType: domain.ERC20}
	old := domain.Quote{ID: uuid.Must(uuid.NewV7()), Token: usdc, ExpectedAmountAsset: decimal.NewFromInt(18_500_000),
		RateUSDAsset: decimal.NewFromInt(1), Status: domain.QuoteExpired, ExpiresAt: now.Add(-time.Minute)}
	fresh := domain.Quote{ID: uuid.Must(uuid.NewV7()), Token: usdc, ExpectedAmountAsset: decimal.NewFromInt(18_600_000),
		RateUSDAsset: decimal.RequireFromString("0.995"), Status: domain.QuoteActive, ExpiresAt: now.Add(10 * time.Minute)}
	p := domain.Payment{ID: uuid.Must(uuid.NewV7()), Type: domain.TypePayment, Status: domain.PaymentPending, AmountInCents: 1850,
		Quotes: []domain.Quote{old, fresh}, ExpiresAt: now.Add(time.Hour)}
	tr := store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: 1337, TokenID: usdc.ID, Amount: decimal.NewFromInt(18_610_000),
		Status: store.TransferConfirmed, BlockTime: now}
	past := func(int64) bool { return false }
	if v := evaluate(p, []store.Transfer{tr}, past, nil); v.quote == nil || v.quote.ID != old.ID {
		t.Fatalf("unsigned: want the cheapest quote %s, got %v", old.ID, v.quote)
	}
	v := evaluate(p, []store.Transfer{tr}, past, map[string]uuid.UUID{usdc.ID: fresh.ID})
	if v.status != domain.PaymentCompleted || v.quote == nil || v.quote.ID != fresh.ID {
		t.Fatalf("want completed on the quote signed for (%s), got %s on %v", fresh.ID, v.status, v.quote)
	}
	failed := fresh
	failed.Status = domain.QuoteFailed
	p.Quotes[1] = failed
	if v := evaluate(p, []store.Transfer{tr}, past, map[string]uuid.UUID{usdc.ID: fresh.ID}); v.quote == nil || v.quote.ID != old.ID {
		t.Fatalf("a failed quote is never settled on, signed or not: got %v", v.quote)
	}
}
