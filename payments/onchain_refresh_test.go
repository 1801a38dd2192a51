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
	v := evaluate(p, []store.Transfer{tr}, func(int64) bool { return false })
	if v.status != domain.PaymentCompleted || v.quote == nil || v.quote.ID != old.ID {
		t.Fatalf("want completed on the expired quote, got %s on %v", v.status, v.quote)
	}
}
