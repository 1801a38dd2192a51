package settlement

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

func TestParseShape(t *testing.T) {
	for in, want := range map[string]Shape{"schema": Schema, "guide": Guide, " GUIDE ": Guide} {
		got, err := ParseShape(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseShape("typed")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema, guide", "the error names the allowed values")
	assert.EqualValues(t, 400, Schema.PaymentLimits().MinAmountCents)
	assert.EqualValues(t, 250, Guide.PaymentLimits().MinAmountCents)
}

func TestGuideChainHasNumericIDAndNoTestnetFlag(t *testing.T) {
	big := domain.Chain{ID: 9007199254740993, Name: "Big", NativeSymbol: "B", NativeDecimals: 18, IsTestnet: true, Enabled: true}
	m, raw := toMap(t, GuideChain(big))
	assert.NotContains(t, m, "isTestnet")
	assert.Contains(t, raw, `"chainId":9007199254740993`, "a chain id beyond 2^53 keeps every digit")
	s, _ := toMap(t, Chain(big))
	assert.Equal(t, "eip155:9007199254740993", s["chainId"])
	assert.Equal(t, true, s["isTestnet"])
}

func TestGuideQuoteRateIsAnExactString(t *testing.T) {
	p := samplePayment()
	p.Quotes[0].RateUSDAsset = decimal.RequireFromString("3456.789012345678901234567891")
	g, raw := toMap(t, GuidePayment(p))
	q := g["quotes"].([]any)[0].(map[string]any)
	assert.Equal(t, "3456.789012345678901234567891", q["rateUsdAsset"])
	assert.EqualValues(t, 8453, q["chainId"])
	assert.NotContains(t, q, "depositAddress")
	assert.Equal(t, "0x9858effd232b4033e47d90003d41ec34ecaeda94", g["depositAddress"].(map[string]any)["address"])
	assert.NotContains(t, g, "receipt", "no receipt key before completion")
	assert.NotContains(t, raw, "isTestnet")
	// The schema form of the same quote keeps the digits as a bare JSON number.
	_, sraw := toMap(t, Payment(p))
	assert.Contains(t, sraw, `"rateUsdAsset":3456.789012345678901234567891`)
}

func TestGuideShortReceiptOnlyWhenCompleted(t *testing.T) {
	p := samplePayment()
	hash := "0x" + strings.Repeat("ab", 32)
	block := int64(19_000_000)
	p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: p.Quotes[0].ID, Token: p.Quotes[0].Token, TxHash: &hash,
		TxBlockNumber: &block, Confirmations: 12, RequiredConfirmations: 10, CreatedAt: t0}
	p.Status = "processing"
	g, _ := toMap(t, GuidePayment(p))
	assert.NotContains(t, g, "receipt", "a receipt on a non-completed payment is not shown in the guide")
	p.Status = "completed"
	g, _ = toMap(t, GuidePayment(p))
	assert.Equal(t, map[string]any{"transactionHash": hash, "blockNumber": 19000000.0, "confirmations": 12.0,
		"requiredConfirmations": 10.0, "completedAt": t0.Format("2006-01-02T15:04:05Z07:00")}, g["receipt"])
}

func TestGuideWithdrawalCompactReceiptInLists(t *testing.T) {
	w := sampleWithdrawal("completed")
	w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: ethBase, SettledAmountAsset: decimal.NewFromInt(1),
		SettledAmountUSD: decimal.RequireFromString("2"), TxHash: "0x1", TxTimestamp: t0, TxTotalCost: decimal.NewFromInt(5), CreatedAt: t0}
	full, _ := toMap(t, GuideWithdrawal(w, false))
	compact, _ := toMap(t, GuideWithdrawal(w, true))
	assert.EqualValues(t, 8453, full["chainId"])
	assert.Contains(t, full["receipt"].(map[string]any)["settledToken"], "marketApiId")
	ct := compact["receipt"].(map[string]any)["settledToken"].(map[string]any)
	assert.ElementsMatch(t, []string{"id", "symbol", "decimals", "contractAddress", "type", "assetType", "status"}, keys(ct))
	assert.Equal(t, map[string]any{"chainId": 8453.0, "name": "Base"}, compact["receipt"].(map[string]any)["settledChain"])
	assert.Equal(t, "2.00", compact["receipt"].(map[string]any)["settledAmountUsd"])
	pending, _ := toMap(t, GuideWithdrawal(sampleWithdrawal("pending"), true))
	assert.Contains(t, pending, "receipt")
	assert.Nil(t, pending["receipt"])
	assert.Nil(t, pending["errorMessage"])
}

func TestSchemaRequestConvertsGuideChainID(t *testing.T) {
	out, err := Guide.SchemaRequest("createWithdrawal", []byte(`{"amountInCents":100,"chainId":11155111,"recipientAddress":"0xab"}`))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	assert.Equal(t, "eip155:11155111", m["chainId"])
	assert.EqualValues(t, 100, m["amountInCents"])
	same := []byte(`{"chainId":"eip155:1"}`)
	out, _ = Schema.SchemaRequest("createWithdrawal", same)
	assert.Equal(t, same, out, "the schema shape passes bodies through")
	out, _ = Guide.SchemaRequest("createPayment", same)
	assert.Equal(t, same, out, "only the withdrawal body differs")
}

func TestResponseWritesEveryOperation(t *testing.T) {
	r := Renderer{Shape: Guide}.ChainList([]domain.Chain{baseNet}, domain.Page{Limit: 10, Total: 1})
	visits := []func(*httptest.ResponseRecorder) error{
		func(w *httptest.ResponseRecorder) error { return r.VisitListChainsResponse(w) },
		func(w *httptest.ResponseRecorder) error { return r.VisitListPaymentsResponse(w) },
		func(w *httptest.ResponseRecorder) error { return r.VisitGetWithdrawalResponse(w) },
	}
	for _, visit := range visits {
		w := httptest.NewRecorder()
		require.NoError(t, visit(w))
		assert.Equal(t, 200, w.Code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		assert.True(t, bytes.Contains(w.Body.Bytes(), []byte(`"chainId":8453`)), w.Body.String())
	}
	created := Renderer{Shape: Schema}.CreatedPayment(samplePayment(), "ps_x", "https://pay/x#secret=ps_x")
	assert.Equal(t, 201, created.Status)
	m, _ := toMap(t, created.Body)
	assert.Equal(t, samplePayment().ID.String(), m["paymentId"])
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
