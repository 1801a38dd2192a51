package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// The payment-secret API behind the hosted checkout: authenticated by the payment's own secret
// (X-Service-Payment-Secret, paymentSecretGuard), never cached.

type checkoutPaymentKey struct{}

func checkoutPayment(ctx context.Context) domain.Payment {
	p, _ := ctx.Value(checkoutPaymentKey{}).(domain.Payment)
	return p
}

// checkoutView renders a view in the API's types.
func checkoutView(v checkout.View) gen.Checkout {
	p := v.Payment
	out := gen.Checkout{Id: p.ID, Livemode: p.Mode.Live(), Type: gen.PaymentType(p.Type), Status: gen.PaymentStatus(p.Status), MerchantName: p.Merchant.ShortName,
		MerchantDisplayName: p.Merchant.Shown(), AccentColor: p.Merchant.AccentColor,
		MerchantLogoUrl: p.Merchant.LogoURL, Currency: gen.Currency(p.Currency), ExpiresAt: p.ExpiresAt, ServerTime: v.ServerTime,
		SelectedQuoteId: v.SelectedQuote, RedirectUrl: v.RedirectURL, Quotes: []gen.CheckoutQuote{}}
	if out.MerchantName == "" {
		out.MerchantName = p.Merchant.Name
	}
	if p.Type == domain.TypePayment {
		amount := p.AmountInCents
		out.AmountInCents = &amount
	}
	for _, q := range v.Quotes {
		cq := gen.CheckoutQuote{Id: q.ID, Status: gen.QuoteStatus(q.Status), ChainId: chains.CAIP2(q.Token.Chain.ID), EvmChainId: q.Token.Chain.ID,
			ChainName: q.Token.Chain.Name, TokenSymbol: q.Token.Symbol, TokenDecimals: q.Token.Decimals,
			AssetType: gen.CheckoutQuoteAssetType(q.Token.AssetType), AmountAsset: q.ExpectedAmountAsset.String(), Amount: q.Amount,
			DepositAddress: p.DepositAddress.Address, PaymentUri: q.PaymentURI, ExpiresAt: q.ExpiresAt, Gasless: checkoutGasless(q.Gasless)}
		if q.Token.AssetType == domain.ERC20 {
			addr := q.Token.ContractAddress
			cq.ContractAddress = &addr
		}
		out.Quotes = append(out.Quotes, cq)
	}
	if r := v.Received; r != nil {
		out.Received = &struct {
			AmountAsset    string             `json:"amountAsset"`
			ConfirmedAsset string             `json:"confirmedAsset"`
			DueAsset       string             `json:"dueAsset"`
			QuoteId        openapi_types.UUID `json:"quoteId"`
		}{r.Amount.String(), r.Confirmed.String(), r.Due.String(), r.QuoteID}
	}
	if o := v.Overpayment; o != nil {
		out.OverpaymentRefund = &struct {
			ExcessAmountAsset string              `json:"excessAmountAsset"`
			RefundId          *openapi_types.UUID `json:"refundId"`
			TokenDecimals     int32               `json:"tokenDecimals"`
			TokenSymbol       string              `json:"tokenSymbol"`
		}{o.ExcessAsset.String(), o.RefundID, o.Token.Decimals, o.Token.Symbol}
	}
	if g := v.GaslessPayment; g != nil {
		out.GaslessPayment = new(gen.GaslessPayment)
		*out.GaslessPayment = gaslessPaymentOut(*g)
	}
	if len(v.Networks) > 0 {
		out.WalletNetworks = walletNetworks(v.Networks)
	}
	if c := v.Confirmations; c != nil {
		out.Confirmations = &struct {
			Required int32 `json:"required"`
			Seen     int32 `json:"seen"`
		}{c.Required, c.Seen}
	}
	return out
}

// etag changes with anything the page shows but the server's clock.
func etag(v gen.Checkout) string {
	v.ServerTime = time.Time{}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

func (h *handlers) GetCheckout(ctx context.Context, req gen.GetCheckoutRequestObject) (gen.GetCheckoutResponseObject, error) {
	v, err := h.checkout.View(ctx, checkoutPayment(ctx))
	if err != nil {
		return nil, err
	}
	body := checkoutView(v)
	tag := etag(body)
	if inm := req.Params.IfNoneMatch; inm != nil && noneMatch(*inm, tag) {
		return gen.GetCheckout304Response{}, nil
	}
	return gen.GetCheckout200JSONResponse{Body: body, Headers: gen.GetCheckout200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) SelectCheckoutQuote(ctx context.Context, req gen.SelectCheckoutQuoteRequestObject) (gen.SelectCheckoutQuoteResponseObject, error) {
	p := checkoutPayment(ctx)
	if err := h.checkout.Select(ctx, p, req.Body.QuoteId); err != nil {
		return nil, err
	}
	v, err := h.checkout.View(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.SelectCheckoutQuote200JSONResponse(checkoutView(v)), nil
}

func (h *handlers) RefreshCheckoutQuotes(ctx context.Context, _ gen.RefreshCheckoutQuotesRequestObject) (gen.RefreshCheckoutQuotesResponseObject, error) {
	p, err := h.checkout.Refresh(ctx, checkoutPayment(ctx))
	if err != nil {
		return nil, err
	}
	v, err := h.checkout.View(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.RefreshCheckoutQuotes200JSONResponse(checkoutView(v)), nil
}

func (h *handlers) GetCheckoutQuoteQR(ctx context.Context, req gen.GetCheckoutQuoteQRRequestObject) (gen.GetCheckoutQuoteQRResponseObject, error) {
	svg, err := h.checkout.QuoteQR(checkoutPayment(ctx), req.QuoteId)
	if err != nil {
		return nil, err
	}
	return gen.GetCheckoutQuoteQR200ImagesvgXmlResponse{Body: bytes.NewReader(svg), ContentLength: int64(len(svg))}, nil
}
