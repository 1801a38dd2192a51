package watcher_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// The same overpayment settled twice — once by the watcher from a real transfer on the devnet,
// once by the operator (`payments settle`, the same amount) — books the same money: the two
// payments are compared field by field, with their receipts and quotes, their API bodies and
// every ledger entry; only identities, times and the chain's own facts about the transaction
// (which the operator does not give) are set aside. The amounts are chosen where the two paths
// used to part: an excess of 500.5 cents (the old manual path credited none of it and rounded the
// USD half up to 15.01) and an excess of a millionth over $5.
func TestManualAndOnChainSettlementAgree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		f := newFixture(t, backend, fixtureOpts{})
		for i, tc := range []struct {
			symbol, excess string
			net            int64
		}{
			{"ETH", "1668333333333333", 1485}, // 18 decimals at $3000: 500.5 cents over
			{"USDC", "5000001", 1485},         // 6 decimals: $5.000001 over
		} {
			t.Run(tc.symbol, func(t *testing.T) {
				onChain, manual := f.create(1000), f.create(1000)
				qOn, qMan := f.quote(onChain, tc.symbol), f.quote(manual, tc.symbol)
				require.True(t, qOn.ExpectedAmountAsset.Equal(qMan.ExpectedAmountAsset) && qOn.RateUSDAsset.Equal(qMan.RateUSDAsset),
					"both payments are quoted alike")
				amount := qOn.ExpectedAmountAsset.Add(units(tc.excess))
				before := f.balance()

				f.pay(3, onChain, qOn, amount)
				f.mine(2)
				f.sync()
				hash := fmt.Sprintf("0x%064x", i+0xabc)
				_, err := f.a.Payments.Settle(f.ctx, payments.SettleInput{PaymentID: manual.ID, QuoteID: &qMan.ID, TxHash: hash,
					AmountAsset: &amount}, nil)
				require.NoError(t, err)

				on, man := f.payment(onChain.ID), f.payment(manual.ID)
				require.Equal(t, domain.PaymentCompleted, on.Status)
				assert.Equal(t, domain.ProcessedByCron, *on.Receipt.ProcessedBy)
				assert.Equal(t, domain.ProcessedByManual, *man.Receipt.ProcessedBy)
				assert.Equal(t, settledView(on), settledView(man), "the payment, its quotes and its receipt")
				assert.Equal(t, tc.net, on.AmountMerchantNetCents)
				// The transaction's USD cost: gas × price in wei at the devnet's 18 native
				// decimals and ETH's $3000, in millionths, rounded down.
				require.NotNil(t, on.Receipt.TxTotalCostUSDFractions)
				wantCost := new(big.Int).Quo(new(big.Int).Mul(on.Receipt.TxTotalCost.BigInt(), big.NewInt(3000)), big.NewInt(1e12))
				assert.Equal(t, wantCost.Int64(), *on.Receipt.TxTotalCostUSDFractions)
				assert.Positive(t, *on.Receipt.TxTotalCostUSDFractions)

				ledgerOn, ledgerMan := f.ledger(onChain.ID), f.ledger(manual.ID)
				require.Len(t, ledgerOn, 1, "one credit for the payment, none for its transfer on its own")
				assert.Equal(t, ledgerOn, ledgerMan, "the ledger entries")
				assert.Equal(t, before+2*tc.net, f.balance())

				apiOn, apiMan := f.get(paymentPath(onChain.ID)), f.get(paymentPath(manual.ID))
				for _, field := range []string{"type", "status", "currency", "amountInCents", "amountDueCents", "convenienceFeeCents",
					"merchantFeeCents", "swapFeeCents", "amountMerchantNetCents"} {
					assert.JSONEq(t, string(apiOn[field]), string(apiMan[field]), field)
				}
				assert.Equal(t, receiptMoney(t, apiOn), receiptMoney(t, apiMan), "the receipt's amounts in the API")

				// Both announce the completion and then the overpayment (the watcher saw the
				// transfer already confirmed: no processing step).
				assert.Equal(t, []string{"payment.created", "payment.completed", "payment.overpaid"}, f.events(onChain.ID))
				assert.Equal(t, f.events(onChain.ID), f.events(manual.ID))
			})
		}
	})
}

// settledView is a payment with what legitimately differs between two settlements of the same
// money set aside: identities, times, versions (the watcher's payment went through processing),
// what the watcher saw arrive, and the transaction facts only the chain knows.
func settledView(p domain.Payment) domain.Payment {
	v := p
	v.ID, v.OrderID, v.SecretHash, v.DepositAddress, v.Received, v.Version = uuid.Nil, nil, nil, domain.DepositAddress{}, nil, 0
	v.ExpiresAt, v.CreatedAt, v.UpdatedAt = time.Time{}, time.Time{}, time.Time{}
	v.Quotes = make([]domain.Quote, len(p.Quotes))
	for i, q := range p.Quotes {
		q.ID, q.PaymentID, q.ExpiresAt, q.CreatedAt = uuid.Nil, uuid.Nil, time.Time{}, time.Time{}
		v.Quotes[i] = q
	}
	if p.Receipt != nil {
		r := *p.Receipt
		r.PaymentID, r.QuoteID, r.CreatedAt = uuid.Nil, uuid.Nil, time.Time{}
		r.TxHash, r.TxBlockNumber, r.TxTimestamp, r.TxSenderAddress, r.TxGasUsed = nil, nil, nil, nil, nil
		r.TxTotalCost, r.TxTotalCostUSDFractions, r.TxIsSponsored, r.ProcessedBy = nil, nil, nil, nil
		r.TxRiskScore, r.TxRiskSeverity, r.TxRiskProvider, r.Confirmations = nil, nil, nil, 0
		v.Receipt = &r
	}
	return v
}

// ledgerEntry is a ledger row without its identity and time.
type ledgerEntry struct {
	Merchant string
	Live     bool
	Kind     string
	Cents    int64
}

// ledger reads every ledger entry a payment caused: its credit, and the credits of its
// transfers on their own.
func (f *fixture) ledger(id uuid.UUID) []ledgerEntry {
	f.t.Helper()
	db, err := f.a.Store.SQLDB()
	require.NoError(f.t, err)
	q := `SELECT merchant_id, livemode, kind, amount_cents FROM ledger_entries
		WHERE payment_id = ? OR transfer_id IN (SELECT id FROM transfers WHERE payment_id = ?) ORDER BY kind, amount_cents`
	if f.a.Store.Dialect() == store.Postgres {
		q = strings.Replace(strings.Replace(q, "?", "$1", 1), "?", "$2", 1)
	}
	rows, err := db.QueryContext(f.ctx, q, id.String(), id.String())
	require.NoError(f.t, err)
	defer rows.Close()
	var out []ledgerEntry
	for rows.Next() {
		var e ledgerEntry
		require.NoError(f.t, rows.Scan(&e.Merchant, &e.Live, &e.Kind, &e.Cents))
		out = append(out, e)
	}
	require.NoError(f.t, rows.Err())
	return out
}

func paymentPath(id uuid.UUID) string { return "/v1/external/secretkey-auth/payments/" + id.String() }

// receiptMoney is the receipt's amounts and token as the API shows them.
func receiptMoney(t *testing.T, body map[string]json.RawMessage) map[string]any {
	t.Helper()
	var r map[string]any
	require.NoError(t, json.Unmarshal(body["receipt"], &r))
	out := map[string]any{}
	for _, k := range []string{"settledAmountAsset", "settledAmountUsd", "selectedQuote", "settledToken", "settledChain"} {
		require.Contains(t, r, k)
		out[k] = r[k]
	}
	sq := out["selectedQuote"].(map[string]any)
	for _, k := range []string{"id", "paymentId", "expiresAt", "createdAt", "depositAddress"} {
		delete(sq, k)
	}
	return out
}
