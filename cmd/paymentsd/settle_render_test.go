package main

import (
	"context"
	"encoding/json"
	"github.com/paymentsd/paymentsd/domain"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/settlement"
)

// TestSettledPaymentInBothShapes settles through `paymentsd payments settle` and renders the
// completed payment in each shape: the full typed receipt, and the guide's short one.
func TestSettledPaymentInBothShapes(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db)["merchantId"].(string)
	p := createPayment(t, db, mid, 2500, payments.TypePayment)
	hash := "0x" + strings.Repeat("cd", 32)
	cliJSON(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", hash, "--json")

	a := openApp(t, db)
	m, err := a.Store.Read(context.Background()).GetMerchant(uuid.MustParse(mid))
	require.NoError(t, err)
	m.Mode = domain.ModeLive
	done, err := a.Payments.Get(context.Background(), m, p.ID.String())
	require.NoError(t, err)

	var schema, guide map[string]any
	for shape, dst := range map[settlement.Shape]*map[string]any{settlement.Schema: &schema, settlement.Guide: &guide} {
		raw, err := json.Marshal(settlement.Renderer{Shape: shape}.Payment(done).Body)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, dst))
	}
	sr := schema["receipt"].(map[string]any)
	assert.Equal(t, hash, sr["txHash"])
	assert.EqualValues(t, "manual", sr["processedBy"])
	assert.Equal(t, "25.05", sr["settledAmountUsd"], "the cheapest live quote: Base, 5 cents of convenience fee (never a testnet quote for a live payment)")
	assert.Nil(t, sr["txBlockNumber"])
	assert.EqualValues(t, "used", sr["selectedQuote"].(map[string]any)["status"])

	gr := guide["receipt"].(map[string]any)
	assert.Equal(t, map[string]any{"transactionHash": hash, "blockNumber": nil, "confirmations": gr["confirmations"],
		"requiredConfirmations": gr["requiredConfirmations"], "completedAt": sr["createdAt"]}, gr)
	assert.Equal(t, gr["confirmations"], gr["requiredConfirmations"], "a manual settlement counts as fully confirmed")
	assert.IsType(t, 0.0, guide["quotes"].([]any)[0].(map[string]any)["chainId"])
}
