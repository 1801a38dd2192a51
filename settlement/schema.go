// Package settlement owns the wire shapes of responses: it turns domain results into the
// typed-schema form of openapi.yaml (and, behind the response-shape flag, the guide form).
// It never touches the database.
package settlement

import (
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/money"
)

// Chain renders a chain.
func Chain(c domain.Chain) gen.Chain {
	return gen.Chain{ChainId: chains.CAIP2(c.ID), Name: c.Name, NativeSymbol: c.NativeSymbol,
		NativeDecimals: c.NativeDecimals, IsEnabled: c.Enabled, IsTestnet: c.IsTestnet}
}

// Token renders a token with its chain.
func Token(t domain.Token, price *money.Number) gen.Token {
	return gen.Token{Id: t.ID, MarketApiId: t.MarketAPIID, Chain: Chain(t.Chain), Symbol: t.Symbol,
		ContractAddress: t.ContractAddress, Decimals: t.Decimals, Type: gen.TokenType(t.Type),
		AssetType: gen.TokenAssetType(t.AssetType), Status: gen.TokenStatus(t.Status), TokenPriceUsd: price}
}

// DepositAddress renders a deposit address.
func DepositAddress(a domain.DepositAddress) gen.DepositAddress {
	var pid *string
	if a.PaymentID != nil {
		s := a.PaymentID.String()
		pid = &s
	}
	return gen.DepositAddress{Id: a.ID, PaymentId: pid, Type: gen.DepositAddressType("EVM"), Address: a.Address, CreatedAt: a.CreatedAt}
}

// Quote renders a quote; the deposit address is the payment's (one EVM address serves every chain).
func Quote(q domain.Quote, addr domain.DepositAddress) gen.Quote {
	var price *money.Number
	if q.TokenPriceUSD != nil {
		n := money.NewNumber(*q.TokenPriceUSD)
		price = &n
	}
	return gen.Quote{Id: q.ID, PaymentId: q.PaymentID, Token: Token(q.Token, price), ChainId: chains.CAIP2(q.Token.Chain.ID),
		DepositAddress: DepositAddress(addr), ExpectedAmountAsset: q.ExpectedAmountAsset.String(),
		RateUsdAsset: money.NewNumber(q.RateUSDAsset), AmountDueCents: q.AmountDueCents, ExpiresAt: q.ExpiresAt,
		Status: gen.QuoteStatus(q.Status), CreatedAt: q.CreatedAt}
}

// Payment renders a payment in the typed-schema shape.
func Payment(p domain.Payment) gen.Payment {
	quotes := make([]gen.Quote, len(p.Quotes))
	for i, q := range p.Quotes {
		quotes[i] = Quote(q, p.DepositAddress)
	}
	addr := DepositAddress(p.DepositAddress)
	out := gen.Payment{Id: p.ID, MerchantId: p.Merchant.ID, Livemode: p.Mode.Live(), MerchantShortName: p.Merchant.ShortName,
		MerchantLogoUrl: p.Merchant.LogoURL, Type: gen.PaymentType(p.Type), AmountInCents: p.AmountInCents,
		AmountDueCents: p.AmountDueCents, ConvenienceFeeCents: p.ConvenienceFeeCents, MerchantFeeCents: p.MerchantFeeCents,
		SwapFeeCents: p.SwapFeeCents, AmountMerchantNetCents: p.AmountMerchantNetCents, Currency: gen.Currency(p.Currency),
		Status: gen.PaymentStatus(p.Status), Quotes: quotes, OrderId: p.OrderID, RedirectUrl: p.RedirectURL,
		CreatedAt: p.CreatedAt, DepositAddress: &addr, AmountRefundedCents: &p.AmountRefundedCents}
	if p.Receipt != nil {
		r := paymentReceipt(*p.Receipt, p)
		out.Receipt = &r
	}
	out.Received = received(p)
	return out
}

// received renders what a payment has received on chain and what is still due on its quote.
func received(p domain.Payment) *gen.PaymentReceived {
	r := p.Received
	if r == nil {
		return nil
	}
	remaining := decimal.Zero
	for _, q := range p.Quotes {
		if q.ID == r.QuoteID && p.Type == domain.TypePayment && r.Amount.LessThan(q.ExpectedAmountAsset) {
			remaining = q.ExpectedAmountAsset.Sub(r.Amount)
		}
	}
	return &gen.PaymentReceived{QuoteId: r.QuoteID, AmountAsset: r.Amount.String(), ConfirmedAmountAsset: r.Confirmed.String(),
		RemainingAmountAsset: remaining.String()}
}

func paymentReceipt(r domain.PaymentReceipt, p domain.Payment) gen.PaymentReceipt {
	var selected gen.Quote
	for _, q := range p.Quotes {
		if q.ID == r.QuoteID {
			selected = Quote(q, p.DepositAddress)
		}
	}
	var totalCost *string
	if r.TxTotalCost != nil {
		s := r.TxTotalCost.String()
		totalCost = &s
	}
	out := gen.PaymentReceipt{PaymentId: r.PaymentID, SelectedQuote: selected, SettledToken: Token(r.Token, nil),
		SettledChain: Chain(r.Token.Chain), SettledAmountAsset: r.SettledAmountAsset.String(),
		SettledAmountUsd: r.SettledAmountUSD.StringFixed(2), TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber,
		TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress, TxGasUsed: r.TxGasUsed, TxTotalCost: totalCost,
		TxTotalCostUsdFractions: r.TxTotalCostUSDFractions, TxIsSponsored: r.TxIsSponsored, TxRiskScore: r.TxRiskScore,
		TxRiskProvider: r.TxRiskProvider, CreatedAt: r.CreatedAt}
	if r.ProcessedBy != nil {
		pb := gen.ProcessedBy(*r.ProcessedBy)
		out.ProcessedBy = &pb
	}
	if r.TxRiskSeverity != nil {
		sev := gen.PaymentReceiptTxRiskSeverity(*r.TxRiskSeverity)
		out.TxRiskSeverity = &sev
	}
	return out
}

// Withdrawal renders a withdrawal.
func Withdrawal(w domain.Withdrawal) gen.Withdrawal {
	out := gen.Withdrawal{Id: w.ID, MerchantId: w.MerchantID, Livemode: w.Mode.Live(), AmountInCents: w.AmountInCents, ChainId: chains.CAIP2(w.Chain.ID),
		RecipientAddress: w.RecipientAddress, Status: gen.WithdrawalStatus(w.Status), Currency: gen.Currency(w.Currency),
		OrderId: w.OrderID, CustomMetadata: w.CustomMetadata, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Approval: withdrawalApproval(w.Approval)}
	if w.Status == domain.WithdrawalFailed {
		out.ErrorMessage = w.ErrorMessage
	}
	if r := w.Receipt; r != nil {
		out.Receipt = &gen.WithdrawalReceipt{WithdrawalId: r.WithdrawalID, SettledToken: Token(r.Token, nil),
			SettledChain: Chain(r.Token.Chain), SettledAmountAsset: r.SettledAmountAsset.String(),
			SettledAmountUsd: r.SettledAmountUSD.StringFixed(2), TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber,
			TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress, TxGasUsed: r.TxGasUsed,
			TxTotalCost: r.TxTotalCost.String(), TxTotalCostUsdFractions: r.TxTotalCostUSDFractions,
			TxIsSponsored: r.TxIsSponsored, ProcessedBy: gen.WithdrawalReceiptProcessedBy(r.ProcessedBy), CreatedAt: r.CreatedAt}
	}
	return out
}

// Pagination derives the six pagination fields from a page.
func Pagination(p domain.Page, returned int) gen.Pagination {
	limit := int64(max(p.Limit, 1))
	totalPages := (p.Total + limit - 1) / limit
	return gen.Pagination{Total: p.Total, Limit: p.Limit, Offset: p.Offset,
		HasMore: int64(p.Offset)+int64(returned) < p.Total, TotalPages: totalPages,
		CurrentPage: int64(p.Offset)/limit + 1}
}
