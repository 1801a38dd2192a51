package payments

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
)

// buildQuotes makes one quote per active token on an enabled chain of the payment's mode that
// the merchant accepts (every one by default), leaving out the chains ChainServing says are not
// answering now. A token whose price cannot be had (stale,
// provider down) gets no quote; the payment fails only when no token can quote.
func (s *Service) buildQuotes(ctx context.Context, p *domain.Payment, accepted domain.AcceptedAssets, now time.Time) error {
	mode := p.Mode.Norm()
	if !s.Catalog.ServesMode(mode) {
		return &domain.ModeNotServedError{Mode: mode}
	}
	accepted = accepted.InMode(s.Catalog, mode)
	// One price lookup per asset, however many chains carry it (ETH is native on six).
	type priced struct {
		rate decimal.Decimal
		err  error
	}
	prices := map[string]priced{}
	for _, c := range s.Catalog.Chains {
		if domain.ChainMode(c) != mode {
			continue // test money is never quoted for a live payment, nor the other way round
		}
		if s.ChainServing != nil && c.Enabled && !s.ChainServing(c.ID) {
			// A buyer sent to a chain that does not answer could pay into a block nobody reads
			// for a while: quote only where the watcher can follow.
			continue
		}
		for _, t := range s.Catalog.QuotedTokens(c.ID, accepted) {
			key := string(t.Type) + "/" + t.MarketAPIID
			pr, seen := prices[key]
			if !seen {
				pr.rate, pr.err = s.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID, Stablecoin: t.Type == domain.Stablecoin})
				prices[key] = pr
			}
			rate, err := pr.rate, pr.err
			if err != nil {
				s.Log.WarnContext(ctx, "no quote for token: price unavailable", "token", t.ID, "err", err)
				continue
			}
			q := domain.Quote{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, Token: t, RateUSDAsset: rate,
				TokenPriceUSD: &rate, ConvenienceFeeCents: c.ConvenienceFeeCents, ExpiresAt: now.Add(s.QuoteTTL),
				Status: domain.QuoteActive, CreatedAt: now, ExpectedAmountAsset: decimal.Zero}
			if p.Type == TypePayment {
				due := p.AmountInCents + c.ConvenienceFeeCents
				q.AmountDueCents = &due
				// Rounded up to a readable amount (0.006167 ETH), worth less than half a cent
				// over the due, which the settlement books as the due to the cent.
				if q.ExpectedAmountAsset, err = money.UnitsToQuote(due, rate, t.Decimals); err != nil {
					return err
				}
			}
			p.Quotes = append(p.Quotes, q)
		}
	}
	if len(p.Quotes) == 0 {
		if len(s.Catalog.MerchantTokens(accepted)) == 0 {
			// The selection names only tokens this deployment no longer serves (networks
			// narrowed, token deprecated since it was set): the operator must edit it.
			return fmt.Errorf("%w (merchant %s accepts %s)",
				domain.ErrAcceptedAssetsUnserved, p.Merchant.ID, strings.Join(accepted.TokenIDs(), ", "))
		}
		return domain.ErrNoQuotableTokens
	}
	if p.Type == TypePayment {
		p.AmountDueCents = cheapestDue(p.Quotes)
	}
	return nil
}

func cheapestDue(qs []domain.Quote) int64 {
	var best int64 = -1
	for _, q := range qs {
		if q.AmountDueCents != nil && (best < 0 || *q.AmountDueCents < best) {
			best = *q.AmountDueCents
		}
	}
	return max(best, 0)
}

// effectiveQuoteStatus reports an active quote past its expiry as expired, so reads never
// offer a rate that can no longer be paid in the seconds before the expiry sweep writes it.
func effectiveQuoteStatus(q domain.Quote, now time.Time) domain.QuoteStatus {
	if q.Status == domain.QuoteActive && !now.Before(q.ExpiresAt) {
		return domain.QuoteExpired
	}
	return q.Status
}

// FreshQuotes makes a new set of quotes for an existing payment at today's prices, for the
// merchant's accepted tokens (the checkout refreshes expired quotes with them).
func (s *Service) FreshQuotes(ctx context.Context, p domain.Payment) ([]domain.Quote, error) {
	accepted, err := s.Store.Read(ctx).AcceptedAssets(p.Merchant.ID)
	if err != nil {
		return nil, err
	}
	fresh := p
	fresh.Quotes = nil
	if err := s.buildQuotes(ctx, &fresh, accepted, s.Now()); err != nil {
		return nil, err
	}
	return fresh.Quotes, nil
}
