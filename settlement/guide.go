package settlement

import (
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/money"
)

// The guide shape's types (gen/guide-openapi.yaml). Each differs from its typed-schema
// counterpart only where the spec lists a conflict; everything else is carried over as is.

// GuideChainT is a chain with a numeric id and no isTestnet.
type GuideChainT struct {
	ChainID        int64  `json:"chainId"`
	Name           string `json:"name"`
	NativeSymbol   string `json:"nativeSymbol"`
	NativeDecimals int32  `json:"nativeDecimals"`
	IsEnabled      bool   `json:"isEnabled"`
}

// GuideTokenT is a token whose chain is in guide form.
type GuideTokenT struct {
	ID              string        `json:"id"`
	MarketAPIID     string        `json:"marketApiId"`
	Chain           GuideChainT   `json:"chain"`
	Symbol          string        `json:"symbol"`
	ContractAddress string        `json:"contractAddress"`
	Decimals        int32         `json:"decimals"`
	Type            string        `json:"type"`
	AssetType       string        `json:"assetType"`
	Status          string        `json:"status"`
	TokenPriceUSD   *money.Number `json:"tokenPriceUsd"`
}

// GuideQuoteT has a numeric chainId, a decimal-string rate and no deposit address.
type GuideQuoteT struct {
	ID                  uuid.UUID   `json:"id"`
	PaymentID           uuid.UUID   `json:"paymentId"`
	Token               GuideTokenT `json:"token"`
	ChainID             int64       `json:"chainId"`
	ExpectedAmountAsset string      `json:"expectedAmountAsset"`
	RateUSDAsset        string      `json:"rateUsdAsset"`
	AmountDueCents      *int64      `json:"amountDueCents"`
	ExpiresAt           time.Time   `json:"expiresAt"`
	Status              string      `json:"status"`
	CreatedAt           time.Time   `json:"createdAt"`
}

// GuideReceiptT is the guide's short payment receipt.
type GuideReceiptT struct {
	TransactionHash       string    `json:"transactionHash"`
	BlockNumber           *int64    `json:"blockNumber"`
	Confirmations         int32     `json:"confirmations"`
	RequiredConfirmations int32     `json:"requiredConfirmations"`
	CompletedAt           time.Time `json:"completedAt"`
}

// GuidePaymentT carries the deposit address at payment level and the receipt only when completed.
type GuidePaymentT struct {
	ID                     uuid.UUID            `json:"id"`
	MerchantID             uuid.UUID            `json:"merchantId"`
	Livemode               bool                 `json:"livemode"`
	MerchantShortName      string               `json:"merchantShortName"`
	MerchantLogoURL        *string              `json:"merchantLogoUrl"`
	Type                   string               `json:"type"`
	AmountInCents          int64                `json:"amountInCents"`
	AmountDueCents         int64                `json:"amountDueCents"`
	ConvenienceFeeCents    *int64               `json:"convenienceFeeCents"`
	MerchantFeeCents       *int64               `json:"merchantFeeCents"`
	SwapFeeCents           *int64               `json:"swapFeeCents"`
	AmountMerchantNetCents int64                `json:"amountMerchantNetCents"`
	AmountRefundedCents    int64                `json:"amountRefundedCents"`
	Currency               string               `json:"currency"`
	Status                 string               `json:"status"`
	DepositAddress         gen.DepositAddress   `json:"depositAddress"`
	Quotes                 []GuideQuoteT        `json:"quotes"`
	Receipt                *GuideReceiptT       `json:"receipt,omitempty"`
	Received               *gen.PaymentReceived `json:"received,omitempty"`
	OrderID                *string              `json:"orderId"`
	RedirectURL            *string              `json:"redirectUrl"`
	CreatedAt              time.Time            `json:"createdAt"`
}

// GuideWithdrawalT has a numeric chainId; its receipt's token and chain may be compact.
type GuideWithdrawalT struct {
	ID               uuid.UUID                `json:"id"`
	MerchantID       uuid.UUID                `json:"merchantId"`
	Livemode         bool                     `json:"livemode"`
	AmountInCents    int64                    `json:"amountInCents"`
	ChainID          int64                    `json:"chainId"`
	RecipientAddress string                   `json:"recipientAddress"`
	Status           string                   `json:"status"`
	Currency         string                   `json:"currency"`
	OrderID          *string                  `json:"orderId,omitempty"`
	CustomMetadata   *string                  `json:"customMetadata,omitempty"`
	ErrorMessage     *string                  `json:"errorMessage"`
	Receipt          *GuideWithdrawalReceiptT `json:"receipt"`
	Approval         *gen.Approval            `json:"approval,omitempty"`
	CreatedAt        time.Time                `json:"createdAt"`
	UpdatedAt        time.Time                `json:"updatedAt"`
}

// GuideWithdrawalReceiptT is a withdrawal receipt whose token and chain are full or compact.
type GuideWithdrawalReceiptT struct {
	WithdrawalID            uuid.UUID `json:"withdrawalId"`
	SettledToken            any       `json:"settledToken"`
	SettledChain            any       `json:"settledChain"`
	SettledAmountAsset      string    `json:"settledAmountAsset"`
	SettledAmountUSD        string    `json:"settledAmountUsd"`
	TxHash                  string    `json:"txHash"`
	TxBlockNumber           int64     `json:"txBlockNumber"`
	TxTimestamp             time.Time `json:"txTimestamp"`
	TxSenderAddress         string    `json:"txSenderAddress"`
	TxGasUsed               int64     `json:"txGasUsed"`
	TxTotalCost             string    `json:"txTotalCost"`
	TxTotalCostUSDFractions int64     `json:"txTotalCostUsdFractions"`
	TxIsSponsored           bool      `json:"txIsSponsored"`
	ProcessedBy             string    `json:"processedBy"`
	CreatedAt               time.Time `json:"createdAt"`
}

// TokenCompactT and ChainCompactT are the compact forms the guide's list examples show.
type TokenCompactT struct {
	ID              string `json:"id"`
	Symbol          string `json:"symbol"`
	Decimals        int32  `json:"decimals"`
	ContractAddress string `json:"contractAddress"`
	Type            string `json:"type"`
	AssetType       string `json:"assetType"`
	Status          string `json:"status"`
}

// ChainCompactT is the compact chain form.
type ChainCompactT struct {
	ChainID int64  `json:"chainId"`
	Name    string `json:"name"`
}

// GuideChain renders a chain in the guide shape.
func GuideChain(c domain.Chain) GuideChainT {
	return GuideChainT{ChainID: c.ID, Name: c.Name, NativeSymbol: c.NativeSymbol, NativeDecimals: c.NativeDecimals, IsEnabled: c.Enabled}
}

func guideToken(t domain.Token, price *money.Number) GuideTokenT {
	return GuideTokenT{ID: t.ID, MarketAPIID: t.MarketAPIID, Chain: GuideChain(t.Chain), Symbol: t.Symbol,
		ContractAddress: t.ContractAddress, Decimals: t.Decimals, Type: string(t.Type), AssetType: string(t.AssetType), Status: string(t.Status),
		TokenPriceUSD: price}
}

// GuideQuote renders a quote in the guide shape; the rate keeps every digit as a string.
func GuideQuote(q domain.Quote) GuideQuoteT {
	var price *money.Number
	if q.TokenPriceUSD != nil {
		n := money.NewNumber(*q.TokenPriceUSD)
		price = &n
	}
	return GuideQuoteT{ID: q.ID, PaymentID: q.PaymentID, Token: guideToken(q.Token, price), ChainID: q.Token.Chain.ID,
		ExpectedAmountAsset: q.ExpectedAmountAsset.String(), RateUSDAsset: q.RateUSDAsset.String(),
		AmountDueCents: q.AmountDueCents, ExpiresAt: q.ExpiresAt, Status: string(q.Status), CreatedAt: q.CreatedAt}
}

// GuidePayment renders a payment in the guide shape.
func GuidePayment(p domain.Payment) GuidePaymentT {
	quotes := make([]GuideQuoteT, len(p.Quotes))
	for i, q := range p.Quotes {
		quotes[i] = GuideQuote(q)
	}
	out := GuidePaymentT{ID: p.ID, MerchantID: p.Merchant.ID, Livemode: p.Mode.Live(), MerchantShortName: p.Merchant.ShortName,
		MerchantLogoURL: p.Merchant.LogoURL, Type: string(p.Type), AmountInCents: p.AmountInCents, AmountDueCents: p.AmountDueCents,
		ConvenienceFeeCents: p.ConvenienceFeeCents, MerchantFeeCents: p.MerchantFeeCents, SwapFeeCents: p.SwapFeeCents,
		AmountMerchantNetCents: p.AmountMerchantNetCents, AmountRefundedCents: p.AmountRefundedCents, Currency: p.Currency,
		Status: string(p.Status), DepositAddress: DepositAddress(p.DepositAddress), Quotes: quotes, OrderID: p.OrderID, RedirectURL: p.RedirectURL,
		CreatedAt: p.CreatedAt, Received: received(p)}
	if r := p.Receipt; r != nil && p.Status == domain.PaymentCompleted {
		hash := ""
		if r.TxHash != nil {
			hash = *r.TxHash
		}
		out.Receipt = &GuideReceiptT{TransactionHash: hash, BlockNumber: r.TxBlockNumber, Confirmations: r.Confirmations,
			RequiredConfirmations: r.RequiredConfirmations, CompletedAt: r.CreatedAt}
	}
	return out
}

// GuideWithdrawal renders a withdrawal in the guide shape; compact selects the list form of
// the receipt's token and chain.
func GuideWithdrawal(w domain.Withdrawal, compact bool) GuideWithdrawalT {
	out := GuideWithdrawalT{ID: w.ID, MerchantID: w.MerchantID, Livemode: w.Mode.Live(), AmountInCents: w.AmountInCents, ChainID: w.Chain.ID,
		RecipientAddress: w.RecipientAddress, Status: string(w.Status), Currency: w.Currency, OrderID: w.OrderID,
		CustomMetadata: w.CustomMetadata, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Approval: withdrawalApproval(w.Approval)}
	if w.Status == domain.WithdrawalFailed {
		out.ErrorMessage = w.ErrorMessage
	}
	if r := w.Receipt; r != nil {
		rec := &GuideWithdrawalReceiptT{WithdrawalID: r.WithdrawalID, SettledAmountAsset: r.SettledAmountAsset.String(),
			SettledAmountUSD: r.SettledAmountUSD.StringFixed(2), TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber,
			TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress, TxGasUsed: r.TxGasUsed,
			TxTotalCost: r.TxTotalCost.String(), TxTotalCostUSDFractions: r.TxTotalCostUSDFractions,
			TxIsSponsored: r.TxIsSponsored, ProcessedBy: string(r.ProcessedBy), CreatedAt: r.CreatedAt}
		if compact {
			t := r.Token
			rec.SettledToken = TokenCompactT{ID: t.ID, Symbol: t.Symbol, Decimals: t.Decimals, ContractAddress: t.ContractAddress,
				Type: string(t.Type), AssetType: string(t.AssetType), Status: string(t.Status)}
			rec.SettledChain = ChainCompactT{ChainID: t.Chain.ID, Name: t.Chain.Name}
		} else {
			rec.SettledToken = guideToken(r.Token, nil)
			rec.SettledChain = GuideChain(r.Token.Chain)
		}
		out.Receipt = rec
	}
	return out
}
