package payments

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
)

// receipt builds a completed payment's receipt from the transaction that completed it.
func (o *OnChain) receipt(ctx context.Context, p domain.Payment, v verdict) (*domain.PaymentReceipt, error) {
	s := o.Payments
	t := v.last
	q := *v.quote
	facts, err := o.Chains.TxFacts(ctx, t.ChainID, t.TxHash)
	if err != nil {
		return nil, fmt.Errorf("receipt of %s on %s: %w", t.TxHash, chains.CAIP2(t.ChainID), err)
	}
	screened, err := o.Risk.Screen(ctx, t.ChainID, t.From)
	if err != nil {
		return nil, fmt.Errorf("risk screening of %s: %w", t.From, err)
	}
	a, err := s.settledAmounts(p, q, v.confirmed)
	if err != nil {
		return nil, fmt.Errorf("payment %s: %w", p.ID, err)
	}
	hash, block, ts := t.TxHash, t.BlockNumber, t.BlockTime
	sender, gas, cost := strings.ToLower(facts.Sender), facts.GasUsed, facts.TotalCostWei
	// A transfer whose token holder did not sign the transaction was paid for by someone else:
	// a relayer or a paymaster.
	sponsored := sender != strings.ToLower(t.From)
	by := domain.ProcessedByCron
	if t.Reported { // first read from the chain on the checkout page's report of its hash
		by = domain.ProcessedByFrontend
	}
	score, severity, provider := screened.Score, string(screened.Severity), screened.Provider
	cursor, err := s.Store.Read(ctx).Cursor(t.ChainID)
	if err != nil {
		return nil, err
	}
	confs := int32(min(domain.Confirmations(cursor.Number, t.BlockNumber), 1<<30))
	r := &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: q.ID, Token: q.Token, SettledAmountAsset: v.confirmed,
		SettledAmountUSD: a.SettledUSD, TxHash: &hash, TxBlockNumber: &block, TxTimestamp: &ts, TxSenderAddress: &sender,
		TxGasUsed: &gas, TxTotalCost: &cost, TxIsSponsored: &sponsored, ProcessedBy: &by, TxRiskScore: &score,
		TxRiskSeverity: &severity, TxRiskProvider: &provider, Confirmations: confs,
		RequiredConfirmations: q.Token.Chain.RequiredConfirmations, CreatedAt: s.Now()}
	price, err := o.nativePrice(ctx, p, t.ChainID)
	if err == nil {
		var f int64
		if f, err = money.GasCostUSDFractions(cost, q.Token.Chain.NativeDecimals, price); err == nil {
			r.TxTotalCostUSDFractions = &f
		}
	}
	if err != nil {
		s.Log.WarnContext(ctx, "receipt without the transaction's USD cost", "chain", chains.CAIP2(t.ChainID), "err", err)
	}
	return r, nil
}

// nativePrice is the chain's native token price: the payment's own quote rate when it has one,
// the price source otherwise.
func (o *OnChain) nativePrice(ctx context.Context, p domain.Payment, chainID int64) (decimal.Decimal, error) {
	for _, q := range p.Quotes {
		if q.Token.Chain.ID == chainID && q.Token.AssetType == domain.Native {
			return q.RateUSDAsset, nil
		}
	}
	if t, ok := o.Payments.Catalog.NativeToken(chainID); ok {
		return o.Payments.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID})
	}
	return decimal.Decimal{}, fmt.Errorf("no native token for %s in the catalogue", chains.CAIP2(chainID))
}
