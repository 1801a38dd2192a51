package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"
	"golang.org/x/time/rate"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// The payment-secret API behind the hosted checkout: authenticated by the payment's own secret
// (X-Service-Payment-Secret), rate-limited per payment and per client address, never cached.

const (
	paymentSecretPrefix = "/v1/external/payment-secret-auth/payments/"
	paymentSecretHeader = "X-Service-Payment-Secret"
)

type checkoutPaymentKey struct{}

// limiters hands out one token bucket per key, the least recently used forgotten first.
type limiters struct {
	mu    sync.Mutex
	cache *lru.Cache[string, *rate.Limiter]
	every rate.Limit
	burst int
}

func newLimiters(perSecond float64, burst int) *limiters {
	c, _ := lru.New[string, *rate.Limiter](20_000)
	return &limiters{cache: c, every: rate.Limit(perSecond), burst: burst}
}

// allow takes a token for key, or says how long until one is free.
func (l *limiters) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	lim, ok := l.cache.Get(key)
	if !ok {
		lim = rate.NewLimiter(l.every, l.burst)
		l.cache.Add(key, lim)
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// exhausted reports whether key has no token left now (without taking one).
func (l *limiters) exhausted(key string, now time.Time) bool {
	l.mu.Lock()
	lim, ok := l.cache.Get(key)
	l.mu.Unlock()
	return ok && lim.TokensAt(now) < 1
}

// clientKey is the client's address as the server saw it (Echo's IP extractor: the direct peer
// unless trusted proxies are configured), parsed: never a header's raw text.
func clientKey(c echo.Context) string {
	if ip, err := netip.ParseAddr(c.RealIP()); err == nil {
		return ip.Unmap().String()
	}
	return "unparsed"
}

// rateLimitedError is a 429 with the wait.
type rateLimitedError struct{ wait time.Duration }

func (e *rateLimitedError) Error() string {
	return fmt.Sprintf("Too many requests; retry in %d s.", retrySeconds(e.wait))
}

func retrySeconds(d time.Duration) int64 { return max(int64((d+time.Second-1)/time.Second), 1) }

// paymentSecretGuard rate-limits and authenticates the payment-secret API (the operations whose
// security scheme is PaymentSecret): the payment opened by its secret goes into the request's
// context.
//
// Two budgets: a client address's failed secrets (guessing is pointless against 256 bits, but
// each guess costs a lookup), and an opened payment's requests (a page polling too fast). Only an
// authenticated request spends its payment's budget, so nobody can lock a customer out of their
// own checkout by knowing its id. Keys are parsed (a UUID, an IP address): no client string
// becomes a key.
type paymentSecretGuard struct {
	svc                  *checkout.Service
	perPayment, failures *limiters
}

func newPaymentSecretGuard(svc *checkout.Service) *paymentSecretGuard {
	if svc == nil {
		return nil
	}
	return &paymentSecretGuard{svc: svc, perPayment: newLimiters(5, 20), failures: newLimiters(1, 20)}
}

// open authenticates a payment-secret request and returns its payment. Every answer is
// `Cache-Control: no-store` and `Referrer-Policy: no-referrer`.
func (g *paymentSecretGuard) open(c echo.Context) (domain.Payment, error) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	secret := strings.TrimSpace(c.Request().Header.Get(paymentSecretHeader))
	if secret == "" || strings.HasPrefix(secret, "sk_") {
		return domain.Payment{}, domain.ErrInvalidPaymentSecret
	}
	raw, _, _ := strings.Cut(strings.TrimPrefix(c.Request().URL.Path, paymentSecretPrefix), "/")
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	limited := func(l *limiters, key string) error {
		if ok, wait := l.allow(key, time.Now()); !ok {
			h.Set("Retry-After", fmt.Sprint(retrySeconds(wait)))
			return &rateLimitedError{wait}
		}
		return nil
	}
	client := clientKey(c)
	if g.failures.exhausted(client, time.Now()) {
		return domain.Payment{}, limited(g.failures, client)
	}
	p, err := g.svc.Open(c.Request().Context(), id.String(), secret)
	if errors.Is(err, domain.ErrPaymentNotFound) {
		_ = limited(g.failures, client) // spends one of this address's failures
		return domain.Payment{}, err
	}
	if err != nil {
		return domain.Payment{}, err
	}
	if err := limited(g.perPayment, p.ID.String()); err != nil {
		return domain.Payment{}, err
	}
	return p, nil
}

func checkoutPayment(ctx context.Context) domain.Payment {
	p, _ := ctx.Value(checkoutPaymentKey{}).(domain.Payment)
	return p
}

// checkoutView renders a view in the API's types.
func checkoutView(v checkout.View) gen.Checkout {
	p := v.Payment
	out := gen.Checkout{Id: p.ID, Type: gen.PaymentType(p.Type), Status: gen.PaymentStatus(p.Status), MerchantName: p.Merchant.ShortName,
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
			DepositAddress: p.DepositAddress.Address, PaymentUri: q.PaymentURI, ExpiresAt: q.ExpiresAt}
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
	if inm := req.Params.IfNoneMatch; inm != nil && strings.Contains(*inm, tag) {
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
