// Package pricing provides USD prices for the assets the gateway accepts, so
// that USD cent amounts can be converted into token amounts.
//
// All prices are decimal.Decimal; floating point is never used for money. A
// Source must never return a stale price: when a fresh enough price cannot be
// obtained it returns an error wrapping ErrPriceUnavailable, and callers must
// refuse to build a quote.
package pricing

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// Asset identifies what is priced.
type Asset struct {
	Symbol      string // e.g. "ETH", "USDC"
	MarketAPIID string // CoinGecko-style id, e.g. "ethereum", "usd-coin"
	Stablecoin  bool
}

// Source provides USD prices.
type Source interface {
	// PriceUSD returns the USD price of one whole unit of the asset.
	PriceUSD(ctx context.Context, a Asset) (decimal.Decimal, error)
}

// ErrPriceUnavailable is returned (wrapped, with a reason such as unknown
// asset, stale price or upstream error) whenever no trustworthy price can be
// given. Test for it with errors.Is.
var ErrPriceUnavailable = errors.New("pricing: price unavailable")

// unavailablef returns an error wrapping ErrPriceUnavailable with a reason.
func unavailablef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrPriceUnavailable}, args...)...)
}

// assetName is used in error messages.
func assetName(a Asset) string {
	switch {
	case a.Symbol != "" && a.MarketAPIID != "":
		return fmt.Sprintf("%s (%s)", a.Symbol, a.MarketAPIID)
	case a.MarketAPIID != "":
		return a.MarketAPIID
	default:
		return a.Symbol
	}
}

// checkPositive rejects zero and negative prices.
func checkPositive(a Asset, p decimal.Decimal) (decimal.Decimal, error) {
	if !p.IsPositive() {
		return decimal.Decimal{}, unavailablef("%s: non-positive price %s", assetName(a), p.String())
	}
	return p, nil
}

// defaultPeg is the peg used for stablecoins when Pegged.Peg is zero.
var defaultPeg = decimal.RequireFromString("1.00")

// Pegged prices stablecoins at a configured peg and delegates everything
// else to Volatile.
//
// For an asset with Stablecoin set, the price is Overrides[a.Symbol] when
// present (exact, case-sensitive symbol match), otherwise Peg, or 1.00 when
// Peg is zero. Non-stablecoins are priced by Volatile; a nil Volatile yields
// ErrPriceUnavailable.
type Pegged struct {
	Peg       decimal.Decimal
	Overrides map[string]decimal.Decimal
	Volatile  Source
}

var _ Source = Pegged{}

// PriceUSD implements Source.
func (p Pegged) PriceUSD(ctx context.Context, a Asset) (decimal.Decimal, error) {
	if err := ctx.Err(); err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: %s: %w", ErrPriceUnavailable, assetName(a), err)
	}
	if a.Stablecoin {
		if o, ok := p.Overrides[a.Symbol]; ok {
			return checkPositive(a, o)
		}
		if p.Peg.IsZero() {
			return defaultPeg, nil
		}
		return checkPositive(a, p.Peg)
	}
	if p.Volatile == nil {
		return decimal.Decimal{}, unavailablef("%s: no price source for non-stablecoin", assetName(a))
	}
	return p.Volatile.PriceUSD(ctx, a)
}

// Static is a fixed price table keyed by Asset.MarketAPIID. It is meant for
// the zero-setup embedded default and for tests, never for production quotes.
type Static map[string]decimal.Decimal

var _ Source = Static{}

// PriceUSD implements Source.
func (s Static) PriceUSD(ctx context.Context, a Asset) (decimal.Decimal, error) {
	if err := ctx.Err(); err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: %s: %w", ErrPriceUnavailable, assetName(a), err)
	}
	p, ok := s[a.MarketAPIID]
	if !ok {
		return decimal.Decimal{}, unavailablef("%s: unknown asset", assetName(a))
	}
	return checkPositive(a, p)
}

// DefaultStatic returns a new Static table with plausible DEVELOPMENT
// PLACEHOLDER prices for ethereum, polygon-ecosystem-token, binancecoin,
// avalanche-2, usd-coin and tether. These numbers are not market data and
// must not be used to quote real payments. They are keyed by market id, not by
// chain or token: a chain added to the catalogue whose tokens name one of these
// ids (an L2's ETH, a USDC) is priced without code; a new market id is priced
// by the market source only.
func DefaultStatic() Static {
	return Static{
		"ethereum":                decimal.RequireFromString("3000.00"),
		"polygon-ecosystem-token": decimal.RequireFromString("0.50"),
		"binancecoin":             decimal.RequireFromString("600.00"),
		"avalanche-2":             decimal.RequireFromString("30.00"),
		"usd-coin":                decimal.RequireFromString("1.00"),
		"tether":                  decimal.RequireFromString("1.00"),
	}
}
