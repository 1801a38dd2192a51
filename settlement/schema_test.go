package settlement

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

func TestPagination(t *testing.T) {
	tests := []struct {
		name                  string
		limit, offset         int32
		total                 int64
		returned              int
		wantHasMore           bool
		wantTotalPages, wantP int64
	}{
		{"empty result", 100, 0, 0, 0, false, 0, 1},
		{"first of three pages", 100, 0, 250, 100, true, 3, 1},
		{"second of three pages", 100, 100, 250, 100, true, 3, 2},
		{"last, partial page", 100, 200, 250, 50, false, 3, 3},
		{"exact multiple: last page is full", 100, 100, 200, 100, false, 2, 2},
		{"single partial page", 100, 0, 7, 7, false, 1, 1},
		{"offset not a multiple of limit, more left", 100, 50, 250, 100, true, 3, 1},
		{"offset not a multiple of limit, reaches the end", 100, 150, 250, 100, false, 3, 2},
		{"offset one short of the end", 100, 249, 250, 1, false, 3, 3},
		{"offset past the end", 100, 300, 250, 0, false, 3, 4},
		{"limit 1", 1, 4, 5, 1, false, 5, 5},
		{"limit 0 is treated as 1 (no division by zero)", 0, 2, 5, 0, true, 5, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Pagination(domain.Page{Limit: tc.limit, Offset: tc.offset, Total: tc.total}, tc.returned)
			assert.Equal(t, tc.total, p.Total)
			assert.Equal(t, tc.limit, p.Limit)
			assert.Equal(t, tc.offset, p.Offset)
			assert.Equal(t, tc.wantHasMore, p.HasMore, "hasMore")
			assert.Equal(t, tc.wantTotalPages, p.TotalPages, "totalPages")
			assert.Equal(t, tc.wantP, p.CurrentPage, "currentPage")
		})
	}
}

func TestPaginationJSON(t *testing.T) {
	b, err := json.Marshal(Pagination(domain.Page{Limit: 100, Offset: 0, Total: 0}, 0))
	require.NoError(t, err)
	assert.JSONEq(t, `{"total":0,"limit":100,"offset":0,"hasMore":false,"totalPages":0,"currentPage":1}`, string(b))
}

var (
	t0       = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	baseNet  = domain.Chain{ID: 8453, Name: "Base", NativeSymbol: "ETH", NativeDecimals: 18, Enabled: true, ConvenienceFeeCents: 5}
	bnbChain = domain.Chain{ID: 56, Name: "BNB Smart Chain", NativeSymbol: "BNB", NativeDecimals: 18, Enabled: true, ConvenienceFeeCents: 10}
	ethBase  = domain.Token{ID: "eip155:8453/slip44:60", Chain: baseNet, Symbol: "ETH", MarketAPIID: "ethereum",
		ContractAddress: "0x0000000000000000000000000000000000000000", Decimals: 18, Type: "volatile", AssetType: "native", Status: "active"}
	usdtBNB = domain.Token{ID: "eip155:56/erc20:0x55d398326f99059ff775485246999027b3197955", Chain: bnbChain, Symbol: "USDT",
		MarketAPIID: "tether", ContractAddress: "0x55d398326f99059ff775485246999027b3197955", Decimals: 18, Type: "stablecoin",
		AssetType: "erc20", Status: "active"}
)

func ptr[T any](v T) *T { return &v }

func samplePayment() domain.Payment {
	pid := uuid.MustParse("01970000-0000-7000-8000-000000000001")
	rate := decimal.RequireFromString("3456.789012345678")
	one := decimal.RequireFromString("1")
	addr := domain.DepositAddress{ID: uuid.MustParse("01970000-0000-7000-8000-0000000000aa"), PaymentID: &pid,
		Address: "0x9858effd232b4033e47d90003d41ec34ecaeda94", CreatedAt: t0}
	return domain.Payment{
		ID:       pid,
		Merchant: domain.Merchant{ID: uuid.MustParse("01970000-0000-7000-8000-0000000000bb"), ShortName: "Acme"},
		Type:     "payment", AmountInCents: 1000, AmountDueCents: 1005, AmountMerchantNetCents: 1000, Currency: "USD",
		Status: "pending", OrderID: ptr("order-1"), DepositAddress: addr, CreatedAt: t0,
		Quotes: []domain.Quote{
			{ID: uuid.MustParse("01970000-0000-7000-8000-0000000000a1"), PaymentID: pid, Token: ethBase,
				ExpectedAmountAsset: decimal.RequireFromString("290732729405729000"), RateUSDAsset: rate, TokenPriceUSD: &rate,
				AmountDueCents: ptr[int64](1005), ConvenienceFeeCents: 5, ExpiresAt: t0.Add(15 * time.Minute), Status: "active", CreatedAt: t0},
			{ID: uuid.MustParse("01970000-0000-7000-8000-000000000002"), PaymentID: pid, Token: usdtBNB,
				ExpectedAmountAsset: decimal.RequireFromString("10100000000000000000"), RateUSDAsset: one, TokenPriceUSD: &one,
				AmountDueCents: ptr[int64](1010), ConvenienceFeeCents: 10, ExpiresAt: t0.Add(15 * time.Minute), Status: "expired", CreatedAt: t0},
		},
	}
}

func toMap(t *testing.T, v any) (map[string]any, string) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m, string(b)
}

func TestPaymentWithoutReceipt(t *testing.T) {
	p := samplePayment()
	m, raw := toMap(t, Payment(p))

	assert.Contains(t, raw, `"receipt":null`, "receipt is always present, null until settled")
	assert.Equal(t, p.ID.String(), m["id"])
	assert.Equal(t, "Acme", m["merchantShortName"])
	assert.Nil(t, m["merchantLogoUrl"])
	assert.Contains(t, raw, `"merchantLogoUrl":null`)
	assert.Contains(t, raw, `"convenienceFeeCents":null`)
	assert.Contains(t, raw, `"merchantFeeCents":null`)
	assert.Contains(t, raw, `"swapFeeCents":null`)
	assert.Contains(t, raw, `"redirectUrl":null`)
	assert.Equal(t, "order-1", m["orderId"])
	assert.EqualValues(t, 1005, m["amountDueCents"])

	da, ok := m["depositAddress"].(map[string]any)
	require.True(t, ok, "payment-level depositAddress present: %s", raw)
	assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", da["address"])
	assert.Equal(t, "EVM", da["type"])
	assert.Equal(t, p.ID.String(), da["paymentId"])

	quotes, ok := m["quotes"].([]any)
	require.True(t, ok)
	require.Len(t, quotes, 2)
	for i, qa := range quotes {
		q := qa.(map[string]any)
		qda, ok := q["depositAddress"].(map[string]any)
		require.True(t, ok, "quote %d has a depositAddress", i)
		assert.Equal(t, da, qda, "every quote carries the payment's address")
	}
	q0 := quotes[0].(map[string]any)
	assert.Equal(t, "eip155:8453", q0["chainId"])
	assert.Equal(t, "290732729405729000", q0["expectedAmountAsset"], "expected amount is a string")
	assert.EqualValues(t, "active", q0["status"])
	tok := q0["token"].(map[string]any)
	assert.Equal(t, "eip155:8453", tok["chain"].(map[string]any)["chainId"])
	q1 := quotes[1].(map[string]any)
	assert.Equal(t, "eip155:56", q1["chainId"])
	assert.Equal(t, "10100000000000000000", q1["expectedAmountAsset"])
	assert.EqualValues(t, "expired", q1["status"])

	// Exact digits: a bare JSON number, not a string and not a float64 rendering.
	assert.Contains(t, raw, `"rateUsdAsset":3456.789012345678`)
	assert.Contains(t, raw, `"tokenPriceUsd":3456.789012345678`)
	assert.Contains(t, raw, `"rateUsdAsset":1`)
	assert.NotContains(t, raw, `"rateUsdAsset":"`)
}

func TestPaymentDepositAddressWithoutPaymentID(t *testing.T) {
	p := samplePayment()
	p.DepositAddress.PaymentID = nil
	p.DepositAddress.CustomerRefID = ptr("cust-1")
	m, raw := toMap(t, Payment(p))
	da := m["depositAddress"].(map[string]any)
	v, present := da["paymentId"]
	assert.True(t, present)
	assert.Nil(t, v)
	assert.Contains(t, raw, `"paymentId":null`)
}

func TestPaymentWithReceipt(t *testing.T) {
	p := samplePayment()
	p.Status = "completed"
	manual := domain.ProcessedByManual
	p.MerchantFeeCents, p.ConvenienceFeeCents, p.SwapFeeCents = ptr[int64](10), ptr[int64](10), ptr[int64](0)
	p.AmountMerchantNetCents = 990
	sel := p.Quotes[1]
	p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: sel.ID, Token: sel.Token,
		SettledAmountAsset: decimal.RequireFromString("10100000000000000000"), SettledAmountUSD: decimal.RequireFromString("10.1"),
		TxHash: ptr("0x" + strings.Repeat("ab", 32)), ProcessedBy: &manual, CreatedAt: t0}
	m, raw := toMap(t, Payment(p))
	r, ok := m["receipt"].(map[string]any)
	require.True(t, ok, raw)
	assert.EqualValues(t, "manual", r["processedBy"])
	assert.Equal(t, "10100000000000000000", r["settledAmountAsset"])
	assert.Equal(t, "10.10", r["settledAmountUsd"], "USD to two places")
	assert.Equal(t, "eip155:56", r["settledChain"].(map[string]any)["chainId"])
	sq := r["selectedQuote"].(map[string]any)
	assert.Equal(t, sel.ID.String(), sq["id"], "the receipt names the quote it settled")
	assert.Equal(t, "eip155:56", sq["chainId"])
	assert.Nil(t, r["settledToken"].(map[string]any)["tokenPriceUsd"], "settled token carries no price")
	assert.Nil(t, r["txTotalCost"])
	assert.Nil(t, r["txRiskSeverity"])
	assert.EqualValues(t, 10, m["merchantFeeCents"])
	assert.EqualValues(t, 990, m["amountMerchantNetCents"])
}

func TestQuoteRateKeepsEveryDigit(t *testing.T) {
	rates := []string{"3456.789012345678", "0.000000123456789012345678", "123456789012345678901234.5", "0.999999"}
	for _, r := range rates {
		t.Run(r, func(t *testing.T) {
			q := samplePayment().Quotes[0]
			q.RateUSDAsset = decimal.RequireFromString(r)
			q.TokenPriceUSD = nil
			_, raw := toMap(t, Quote(q, domain.DepositAddress{}))
			assert.Contains(t, raw, `"rateUsdAsset":`+r+`,`)
			assert.Contains(t, raw, `"tokenPriceUsd":null`)
		})
	}
}

func TestChainRendering(t *testing.T) {
	c := Chain(domain.Chain{ID: 11155111, Name: "Sepolia", NativeSymbol: "ETH", NativeDecimals: 18, IsTestnet: true})
	assert.Equal(t, "eip155:11155111", c.ChainId)
	assert.True(t, c.IsTestnet)
	assert.False(t, c.IsEnabled)
	assert.Equal(t, int32(18), c.NativeDecimals)
}

func sampleWithdrawal(status domain.WithdrawalStatus) domain.Withdrawal {
	return domain.Withdrawal{ID: uuid.MustParse("01970000-0000-7000-8000-0000000000cc"),
		MerchantID: uuid.MustParse("01970000-0000-7000-8000-0000000000bb"), AmountInCents: 5000, Chain: baseNet,
		Token: ethBase, RecipientAddress: "0x9858effd232b4033e47d90003d41ec34ecaeda94", Status: status, Currency: "USD",
		CreatedAt: t0, UpdatedAt: t0}
}

func TestWithdrawalRendering(t *testing.T) {
	t.Run("pending: errorMessage and receipt are null", func(t *testing.T) {
		w := sampleWithdrawal("pending")
		w.ErrorMessage = ptr("leftover message that must not leak")
		m, raw := toMap(t, Withdrawal(w))
		assert.Contains(t, raw, `"errorMessage":null`)
		assert.Contains(t, raw, `"receipt":null`)
		assert.NotContains(t, raw, "leftover")
		assert.Equal(t, "eip155:8453", m["chainId"])
		assert.EqualValues(t, "pending", m["status"])
		assert.EqualValues(t, 5000, m["amountInCents"])
		_, hasOrder := m["orderId"]
		assert.False(t, hasOrder, "optional orderId is omitted when unset")
	})
	t.Run("failed: errorMessage shown", func(t *testing.T) {
		w := sampleWithdrawal("failed")
		w.ErrorMessage = ptr("insufficient hot-wallet funds")
		m, raw := toMap(t, Withdrawal(w))
		assert.Equal(t, "insufficient hot-wallet funds", m["errorMessage"])
		assert.Contains(t, raw, `"receipt":null`)
	})
	t.Run("failed without a message: null", func(t *testing.T) {
		_, raw := toMap(t, Withdrawal(sampleWithdrawal("failed")))
		assert.Contains(t, raw, `"errorMessage":null`)
	})
	for _, st := range []domain.WithdrawalStatus{"processing", "completed", "cancelled"} {
		t.Run(string(st)+": errorMessage hidden", func(t *testing.T) {
			w := sampleWithdrawal(st)
			w.ErrorMessage = ptr("stale")
			_, raw := toMap(t, Withdrawal(w))
			assert.Contains(t, raw, `"errorMessage":null`)
		})
	}
	t.Run("completed with receipt", func(t *testing.T) {
		w := sampleWithdrawal("completed")
		w.OrderID = ptr("wd-1")
		w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: ethBase,
			SettledAmountAsset: decimal.RequireFromString("1446429036352191"), SettledAmountUSD: decimal.RequireFromString("5"),
			TxHash: "0x" + strings.Repeat("cd", 32), TxBlockNumber: 123, TxTimestamp: t0, TxSenderAddress: "0x1111111111111111111111111111111111111111",
			TxGasUsed: 21000, TxTotalCost: decimal.RequireFromString("0.000021"), TxTotalCostUSDFractions: 7, TxIsSponsored: false,
			ProcessedBy: "cron", CreatedAt: t0}
		m, _ := toMap(t, Withdrawal(w))
		r, ok := m["receipt"].(map[string]any)
		require.True(t, ok)
		assert.Equal(t, w.ID.String(), r["withdrawalId"])
		assert.Equal(t, "5.00", r["settledAmountUsd"])
		assert.Equal(t, "1446429036352191", r["settledAmountAsset"])
		assert.Equal(t, "0.000021", r["txTotalCost"])
		assert.EqualValues(t, "cron", r["processedBy"])
		assert.Equal(t, "eip155:8453", r["settledChain"].(map[string]any)["chainId"])
		assert.Equal(t, "wd-1", m["orderId"])
		assert.Nil(t, m["errorMessage"])
	})
}
