package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// Paying without gas (issue 24): for a quote whose token takes EIP-3009 authorizations, the
// customer signs a TransferWithAuthorization to the deposit address instead of sending a
// transaction, and the chain's hot wallet relays it (package payouts). The page is offered the
// typed data's parts here (the token's own EIP-712 domain, the value, the deadline), and what it
// posts back is checked in gasless_submit.go before it is stored for the relayer.

// GaslessChain is what the checks read of a chain (chain.Client): the token's domain, nonce
// states and balances, by eth_call.
type GaslessChain interface {
	ethereum.ContractCaller
}

// GaslessMinValidity is the least time an authorization must still be valid when it is posted:
// the relayer needs a block or two to have it mined before validBefore, after which the token
// refuses it. A quote with less left is not offered; the page refreshes its quotes instead.
const GaslessMinValidity = 30 * time.Second

// domainReadTimeout bounds the first read of a token's domain in a view: the page is answered
// without the gasless offer rather than late.
const domainReadTimeout = 3 * time.Second

// GaslessOffer is what the customer signs to pay a quote without gas.
type GaslessOffer struct {
	Domain      tokensig.Domain
	FeePaidBy   domain.GaslessFeePayer
	FeeCents    int64           // the relay fee the buyer pays (0 when the merchant bears the gas)
	FeeAsset    decimal.Decimal // the same in the token's smallest unit (rounded up)
	Value       decimal.Decimal // the quote's amount plus FeeAsset: the signed value
	ValidBefore int64           // the quote's expiry, unix seconds: the latest deadline accepted
}

// GaslessFee is the relay fee a buyer pays for quote q when payer bears the gas: the chain's
// gasless fee in cents, in the quote's token at its rate rounded up (owed to us, like a quote's
// amount). Zero when the merchant bears it.
func GaslessFee(payer domain.GaslessFeePayer, q domain.Quote) (int64, decimal.Decimal, error) {
	cents := q.Token.Chain.GaslessFeeCents
	if payer.Or() != domain.GaslessFeeBuyer || cents == 0 {
		return 0, decimal.Zero, nil
	}
	units, err := money.UnitsToReceive(cents, q.RateUSDAsset, q.Token.Decimals)
	return cents, units, err
}

// gaslessChain is the client of a chain this process reaches for the gasless checks (nil: none).
func (s *Service) gaslessChain(chainID int64) GaslessChain {
	if s.GaslessChains == nil {
		return nil
	}
	return s.GaslessChains[chainID]
}

// offerable reports why a quote of p cannot be paid without gas ("" when it can, by the
// catalogue and the payment's state alone): an EIP-3009 ERC-20 on a chain this process reads,
// an open fixed-amount payment with nothing received yet, an active quote with time left.
func (s *Service) offerable(p domain.Payment, q domain.Quote, now time.Time) string {
	switch {
	case q.Token.AssetType != domain.ERC20 || !q.Token.EIP3009:
		return fmt.Sprintf("%s on %s takes no signed transfers (EIP-3009)", q.Token.Symbol, q.Token.Chain.Name)
	case s.gaslessChain(q.Token.Chain.ID) == nil:
		return fmt.Sprintf("this server does not relay payments on %s", q.Token.Chain.Name)
	case p.Type != domain.TypePayment:
		return "a deposit (any amount) is paid by its address"
	case q.Status != domain.QuoteActive || !now.Add(GaslessMinValidity).Before(q.ExpiresAt):
		return "the quote expires too soon to be relayed: refresh the quotes"
	}
	return ""
}

// Offer is what the customer signs to pay quote q of p without gas, or nil when it is not offered
// (offerable, or the token's domain cannot be read now).
func (s *Service) Offer(ctx context.Context, p domain.Payment, q domain.Quote) (*GaslessOffer, error) {
	if s.offerable(p, q, s.Now()) != "" {
		return nil, nil
	}
	rctx, cancel := context.WithTimeout(ctx, domainReadTimeout)
	defer cancel()
	d, err := s.tokenDomain(rctx, q.Token)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil // offered again once the chain answers
	}
	return s.offer(p, q, d)
}

func (s *Service) offer(p domain.Payment, q domain.Quote, d tokensig.Domain) (*GaslessOffer, error) {
	payer := p.Merchant.GaslessFeePaidBy.Or()
	cents, units, err := GaslessFee(payer, q)
	if err != nil {
		return nil, fmt.Errorf("gasless fee of quote %s: %w", q.ID, err)
	}
	return &GaslessOffer{Domain: d, FeePaidBy: payer, FeeCents: cents, FeeAsset: units, Value: q.ExpectedAmountAsset.Add(units),
		ValidBefore: q.ExpiresAt.Unix()}, nil
}

// domainCache remembers tokens' EIP-712 domains (they never change), and for a short while that
// a read failed: a view polled every few seconds must not wait on a chain that does not answer.
type domainCache struct {
	m      sync.Map // key → tokensig.Domain
	failed sync.Map // key → time.Time of the last failed read
}

// domainRetryAfter is how long a token whose domain could not be read is not offered without gas.
const domainRetryAfter = 30 * time.Second

// errDomainUnread: the token's domain was not read (recently failed, or no client).
var errDomainUnread = errors.New("the token's EIP-712 domain could not be read recently")

// tokenDomain is tok's EIP-712 domain as its contract states it, read once per process.
func (s *Service) tokenDomain(ctx context.Context, tok domain.Token) (tokensig.Domain, error) {
	key := fmt.Sprintf("%d/%s", tok.Chain.ID, strings.ToLower(tok.ContractAddress))
	if d, ok := s.domains.m.Load(key); ok {
		return d.(tokensig.Domain), nil
	}
	if at, ok := s.domains.failed.Load(key); ok && s.Now().Sub(at.(time.Time)) < domainRetryAfter {
		return tokensig.Domain{}, errDomainUnread
	}
	c := s.gaslessChain(tok.Chain.ID)
	if c == nil {
		return tokensig.Domain{}, fmt.Errorf("%w: no client for %s", errDomainUnread, tok.Chain.Name)
	}
	d, err := chain.TokenDomain(ctx, c, tok.Chain.ID, common.HexToAddress(tok.ContractAddress))
	if err != nil {
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.domains.failed.Store(key, s.Now())
		}
		return d, err
	}
	s.domains.m.Store(key, d)
	s.domains.failed.Delete(key)
	return d, nil
}

// MaxFailedGasless is how many of a payment's signed transfers may fail before it is no longer
// offered without gas: each failure is a customer's wasted signature (and, for a relay that
// reverted, our gas); the payment stays payable by its address.
const MaxFailedGasless = 3

// gaslessRefusal says why payment's authorizations gs (newest first) forbid another one: one is
// accepted or being relayed (a second would be relayed too, and the customer would pay twice),
// or MaxFailedGasless failed. nil when another may be posted.
func gaslessRefusal(gs []store.GaslessAuthorization) error {
	failed := 0
	for _, g := range gs {
		switch g.Status {
		case store.GaslessAccepted, store.GaslessSubmitted:
			return fmt.Errorf("%w (posted at %s, now %s): wait for it, or pay by the address",
				domain.ErrGaslessInProgress, g.CreatedAt.Format(time.RFC3339), g.Status)
		case store.GaslessFailed:
			failed++
		}
	}
	if failed >= MaxFailedGasless {
		return domain.Refuse(CodeGaslessNotOffered, "quoteId", "%d signed payments for this payment failed: pay it by the QR code or address", failed)
	}
	return nil
}

// gaslessView adds to a view what its quotes are signed for without gas (while the payment waits
// for its first transfer and no authorization of it is in flight, fewer than MaxFailedGasless
// failed) and the newest authorization posted for it.
func (s *Service) gaslessView(ctx context.Context, v *View) error {
	p := v.Payment
	gs, err := s.Store.Read(ctx).PaymentGasless(p.ID)
	if err != nil {
		return err
	}
	if p.Status == domain.PaymentPending && p.Received == nil && gaslessRefusal(gs) == nil {
		for i, q := range v.Quotes {
			o, err := s.Offer(ctx, p, q.Quote)
			if err != nil {
				return err
			}
			v.Quotes[i].Gasless = o
		}
	}
	if len(gs) > 0 {
		v.GaslessPayment = &gs[0]
	}
	return nil
}
