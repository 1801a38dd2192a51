// Package checkout is the customer's side of a payment: the payment-secret API behind the
// hosted page at paymentUrl. A payment's secret (returned once at creation, kept only as a
// hash) opens its checkout view; the customer picks a quote and, while the payment is live,
// refreshes expired ones.
package checkout

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
)

// Payment is an opened payment.
type Payment = domain.Payment

// errQuoteNotFound: the payment has no such quote, or another payment's (a 404 either way).
var errQuoteNotFound = domain.ErrQuoteNotFound

// Quoter makes fresh quotes for a payment (payments.Service).
type Quoter interface {
	FreshQuotes(ctx context.Context, p domain.Payment) ([]domain.Quote, error)
}

// Overpayments says what of a completed payment's excess the merchant offers back
// (refunds.Service).
type Overpayments interface {
	Offer(ctx context.Context, p domain.Payment) (*domain.OverpaymentOffer, error)
}

// Service serves the checkout.
type Service struct {
	Store   *store.Store
	Core    *lifecycle.Core
	Catalog domain.Catalog
	Quotes  Quoter
	// Overpayments, when set, offers an overpaid payment's excess back on the page.
	Overpayments Overpayments
	// Transactions, when set, reads the transactions the page reports (nil: each report is
	// answered unavailable, and the watcher records the transaction when it scans its block).
	Transactions TxReports
	// WalletRPC: the RPC URL a customer's wallet may be given to add a chain, by chain id (the
	// devnets this deployment serves; nil: none).
	WalletRPC map[int64]string
	// GaslessChains: the clients of the chains whose EIP-3009 quotes this process offers to pay
	// without gas (gasless.go; nil: none).
	GaslessChains map[int64]GaslessChain
	// GaslessReadTimeout bounds the chain reads that check a posted authorization (0: 10 s): a
	// node that hangs answers 503 no_chain_available, not a request left waiting.
	GaslessReadTimeout time.Duration
	Now                func() time.Time

	domains domainCache
}

// Quote is one way to pay, as the page shows it.
type Quote struct {
	domain.Quote
	Amount     string        // whole tokens, decimal, never an exponent
	PaymentURI string        // EIP-681
	Gasless    *GaslessOffer // what the customer signs to pay it without gas (nil: not offered)
}

// View is a payment as its checkout page shows it.
type View struct {
	Payment       domain.Payment
	Quotes        []Quote
	SelectedQuote *uuid.UUID
	Received      *Received
	Confirmations *Confirmations
	RedirectURL   *string
	ServerTime    time.Time
	Overpayment   *domain.OverpaymentOffer // the excess the merchant offers back (nil: none)
	Networks      []WalletNetwork          // chains a wallet may be asked to add
	// GaslessPayment is the payment's newest signed transfer posted for relaying (nil: none).
	GaslessPayment *store.GaslessAuthorization
}

// Received is what arrived for the settling quote and what is still due.
type Received struct {
	QuoteID   uuid.UUID
	Amount    decimal.Decimal
	Confirmed decimal.Decimal
	Due       decimal.Decimal
}

// Confirmations of the newest transfer being confirmed.
type Confirmations struct {
	Seen, Required int32
}

// Open reads a payment whose secret is given. An unknown payment and a wrong secret are the
// same ErrPaymentNotFound (nothing tells one from the other); the secret is compared in constant
// time against its stored hash.
func (s *Service) Open(ctx context.Context, paymentID, secret string) (domain.Payment, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" || strings.HasPrefix(secret, "sk_") {
		return domain.Payment{}, domain.ErrInvalidPaymentSecret
	}
	id, err := uuid.Parse(paymentID)
	if err != nil {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	// The secret first, by its hash alone: a known id with a wrong secret costs the same one
	// small read as an unknown id (no timing tells them apart), and only a correct secret loads
	// the payment.
	stored, err := s.Store.Read(ctx).PaymentSecretHash(id)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Payment{}, err
	}
	sum := sha256.Sum256([]byte(secret))
	if len(stored) != len(sum) || subtle.ConstantTimeCompare(sum[:], stored) != 1 {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	p, err := s.Store.Read(ctx).PaymentByID(id, s.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	return p, err
}

// View builds the checkout view of an opened payment.
func (s *Service) View(ctx context.Context, p domain.Payment) (View, error) {
	now := s.Now()
	p = payments.Present(p, now)
	if !now.Before(p.ExpiresAt) {
		for i, q := range p.Quotes { // nothing is payable once the payment itself expired
			if q.Status == domain.QuoteActive {
				p.Quotes[i].Status = domain.QuoteExpired
			}
		}
	}
	v := View{Payment: p, ServerTime: now}
	for _, q := range p.Quotes {
		v.Quotes = append(v.Quotes, Quote{Quote: q, Amount: money.WholeTokens(q.ExpectedAmountAsset, q.Token.Decimals),
			PaymentURI: PaymentURI(q.Token, p.DepositAddress.Address, q.ExpectedAmountAsset)})
	}
	v.Networks = s.walletNetworks(v)
	if err := s.gaslessView(ctx, &v); err != nil {
		return View{}, err
	}
	sel, err := s.Store.Read(ctx).SelectedQuote(p.ID)
	if err != nil {
		return View{}, err
	}
	v.SelectedQuote = sel
	if r := p.Received; r != nil {
		due := decimal.Zero
		for _, q := range p.Quotes {
			if q.ID == r.QuoteID && p.Type == domain.TypePayment && q.ExpectedAmountAsset.GreaterThan(r.Amount) {
				due = q.ExpectedAmountAsset.Sub(r.Amount)
			}
		}
		v.Received = &Received{QuoteID: r.QuoteID, Amount: r.Amount, Confirmed: r.Confirmed, Due: due}
	}
	if v.Confirmations, err = s.confirmations(ctx, p); err != nil {
		return View{}, err
	}
	if p.Status == domain.PaymentCompleted && p.RedirectURL != nil && *p.RedirectURL != "" {
		u := RedirectURL(*p.RedirectURL, p.CustomMetadata)
		v.RedirectURL = &u
	}
	if s.Overpayments != nil && p.Status == domain.PaymentCompleted {
		if v.Overpayment, err = s.Overpayments.Offer(ctx, p); err != nil {
			return View{}, err
		}
	}
	return v, nil
}

// confirmations counts the newest unconfirmed (or just confirmed) transfer of the payment against
// its chain's depth, by the watcher's own head.
func (s *Service) confirmations(ctx context.Context, p domain.Payment) (*Confirmations, error) {
	all, err := s.Store.Read(ctx).PaymentTransfers(p.ID)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	// The settling quote's token only (block numbers of different chains do not compare).
	var token string
	if p.Received != nil {
		for _, q := range p.Quotes {
			if q.ID == p.Received.QuoteID {
				token = q.Token.ID
			}
		}
	}
	var last *store.Transfer
	for i, t := range all {
		if t.Status == store.TransferOrphaned || (token != "" && t.TokenID != token) {
			continue
		}
		if last == nil || t.BlockNumber >= last.BlockNumber {
			last = &all[i]
		}
	}
	if last == nil {
		return nil, nil
	}
	c, _ := s.Catalog.Chain(last.ChainID) // an unknown chain needs one confirmation (Depth)
	required := int32(c.Depth())
	cur, err := s.Store.Read(ctx).Cursor(last.ChainID) // the newest block the watcher processed
	if errors.Is(err, store.ErrNotFound) {
		return &Confirmations{Seen: 0, Required: required}, nil
	}
	if err != nil {
		return nil, err
	}
	seen := int32(c.SeenConfirmations(cur.Number, last.BlockNumber))
	if last.Status == store.TransferConfirmed {
		seen = required
	}
	return &Confirmations{Seen: seen, Required: required}, nil
}

// Select records the customer's choice of quote: the payment must be open and the quote one of
// its own (well-formed but unknown is a 404, as a resource that does not exist) and active.
func (s *Service) Select(ctx context.Context, p domain.Payment, quoteID uuid.UUID) error {
	if p.Status.Terminal() {
		return fmt.Errorf("%w: the payment is %s; its quotes cannot change", domain.ErrPaymentNotOpen, p.Status)
	}
	now := s.Now()
	for _, q := range payments.Present(p, now).Quotes {
		if q.ID != quoteID {
			continue
		}
		if q.Status != domain.QuoteActive {
			return fmt.Errorf("%w: the quote is %s (refresh the quotes for a new one)", domain.ErrQuoteNotActive, q.Status)
		}
		return s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SelectQuote(p.ID, quoteID) })
	}
	return errQuoteNotFound
}

// Refresh gives every token whose quotes all expired a fresh quote at today's rate, while the
// payment is pending and before its own expiry; a selected quote that expired moves to its
// token's fresh one.
func (s *Service) Refresh(ctx context.Context, p domain.Payment) (domain.Payment, error) {
	now := s.Now()
	if p.Status != domain.PaymentPending || !now.Before(p.ExpiresAt) {
		status := p.Status
		if p.Status == domain.PaymentPending {
			status = domain.PaymentExpired
		}
		return domain.Payment{}, fmt.Errorf("%w: the payment is %s; its quotes cannot be refreshed", domain.ErrPaymentNotOpen, status)
	}
	live := map[string]bool{}
	for _, q := range payments.Present(p, now).Quotes {
		if q.Status == domain.QuoteActive {
			live[q.Token.ID] = true
		}
	}
	candidates, err := s.Quotes.FreshQuotes(ctx, p) // priced outside the transaction
	if err != nil {
		return domain.Payment{}, err
	}
	sel, err := s.Store.Read(ctx).SelectedQuote(p.ID)
	if err != nil {
		return domain.Payment{}, err
	}
	var out domain.Payment
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if out, err = s.Core.RefreshQuotesTx(tx, p.ID, candidates); err != nil {
			return err
		}
		if sel == nil {
			return nil
		}
		known := map[uuid.UUID]bool{}
		for _, q := range p.Quotes {
			known[q.ID] = true
		}
		var added []domain.Quote
		for _, q := range out.Quotes {
			if !known[q.ID] {
				added = append(added, q)
			}
		}
		for _, old := range p.Quotes {
			if old.ID != *sel || live[old.Token.ID] {
				continue
			}
			for _, q := range added {
				if q.Token.ID == old.Token.ID {
					return tx.SelectQuote(p.ID, q.ID)
				}
			}
		}
		return nil
	})
	return out, err
}

// PaymentURI is the EIP-681 URI of a transfer of amount (smallest unit) of a token to an address:
// ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<units> for an ERC-20,
// ethereum:<to>@<chainId>?value=<wei> for the native coin. Integers, never exponents. A zero
// amount (a deposit: the customer chooses) leaves the amount out.
func PaymentURI(t domain.Token, to string, amount decimal.Decimal) string {
	units := amount.BigInt().String()
	if t.AssetType == domain.ERC20 {
		if amount.IsZero() {
			return fmt.Sprintf("ethereum:%s@%d/transfer?address=%s", t.ContractAddress, t.Chain.ID, to)
		}
		return fmt.Sprintf("ethereum:%s@%d/transfer?address=%s&uint256=%s", t.ContractAddress, t.Chain.ID, to, units)
	}
	if amount.IsZero() {
		return fmt.Sprintf("ethereum:%s@%d", to, t.Chain.ID)
	}
	return fmt.Sprintf("ethereum:%s@%d?value=%s", to, t.Chain.ID, units)
}

// RedirectURL appends the payment's customMetadata to its redirect URL's query string
// (customMetadata=…), as the spec says, before any #fragment.
func RedirectURL(base string, metadata *string) string {
	if metadata == nil || *metadata == "" {
		return base
	}
	rest, fragment, hasFragment := strings.Cut(base, "#")
	sep := "?"
	if strings.Contains(rest, "?") {
		sep = "&"
	}
	out := rest + sep + "customMetadata=" + url.QueryEscape(*metadata)
	if hasFragment {
		out += "#" + fragment
	}
	return out
}
