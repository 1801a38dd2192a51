// Package payments owns payments and deposits: creation with quotes and a derived deposit
// address, listing and reading scoped to the merchant, and the operator's manual settlement.
// Every state change goes through the lifecycle core.
package payments

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// Payment types.
const (
	TypePayment = domain.TypePayment
	TypeDeposit = domain.TypeDeposit
)

// AddressDeriver derives the deposit address of a BIP-32 child index (wallet.Deriver).
type AddressDeriver interface {
	Address(index uint32) (string, error)
}

// Sealer runs inside the create or settle transaction: Begin before the effect, End with its
// result (an idempotency.Step). Nil seals nothing.
type Sealer[T any] interface {
	Begin(tx *store.Tx) error
	End(tx *store.Tx, result T) error
}

// Service creates, lists, reads and settles payments.
type Service struct {
	Store          *store.Store
	Core           *lifecycle.Core
	Catalog        domain.Catalog
	Prices         pricing.Source
	Addresses      AddressDeriver
	Limits         domain.PaymentLimits
	QuoteTTL       time.Duration
	PaymentTTL     time.Duration
	MerchantFeeBps int64 // merchant fee in basis points of the payment amount, finalised at settlement
	PublicBaseURL  string
	Log            *slog.Logger
	Now            func() time.Time
	// ChainServing, when set, says whether a chain answers now: one down or on another chain id
	// gets no new quotes (its open payments stay watched). nil: every enabled chain is quoted.
	ChainServing func(chainID int64) bool
}

// CreateInput is a validated create-payment request.
type CreateInput struct {
	Type           domain.PaymentType
	Amount         *int64
	Currency       string
	OrderID        string
	CustomerRefID  *string
	RedirectURL    *string
	CustomMetadata *string
}

// Created is a new payment with its secret (returned once, stored only as a hash) and URL.
type Created struct {
	Payment    domain.Payment
	Secret     string
	PaymentURL string
}

// Create makes a payment or deposit with its quotes and deposit address in one transaction,
// sealed with seal (the Idempotency-Key) when it is not nil.
func (s *Service) Create(ctx context.Context, m domain.Merchant, in CreateInput, seal Sealer[Created]) (Created, error) {
	if in.Type == "" {
		in.Type = TypePayment
	}
	if in.Type == TypeDeposit && !m.DepositsEnabled {
		return Created{}, domain.ErrDepositsDisabled
	}
	if in.Currency != "USD" {
		return Created{}, domain.Invalid(domain.CodeParameterInvalid, "currency", "currency must be USD")
	}
	if err := in.checkStrings(); err != nil {
		return Created{}, err
	}
	var amount int64 // a deposit's amount is ignored: the customer chooses it
	if in.Type == TypePayment {
		if in.Amount == nil {
			return Created{}, domain.Invalid(domain.CodeParameterMissing, "amount", "amount is required for a payment")
		}
		amount = *in.Amount
		if amount < s.Limits.MinAmountCents || amount > s.Limits.MaxAmountCents {
			return Created{}, domain.Invalid(domain.CodeInvalidAmount, "amount", "amount must be between %d and %d cents",
				s.Limits.MinAmountCents, s.Limits.MaxAmountCents)
		}
	}
	if in.Type == TypePayment {
		in.CustomerRefID = nil // the spec ignores customerRefId for payments
	}
	secret, err := newPaymentSecret()
	if err != nil {
		return Created{}, err
	}
	now := s.Now()
	p := domain.Payment{ID: uuid.Must(uuid.NewV7()), Merchant: m, Mode: m.Mode.Norm(), Type: in.Type, AmountInCents: amount,
		AmountMerchantNetCents: amount, Currency: "USD", Status: domain.PaymentPending, OrderID: &in.OrderID,
		CustomerRefID: in.CustomerRefID, RedirectURL: in.RedirectURL, CustomMetadata: in.CustomMetadata,
		SecretHash: hashSecret(secret), ExpiresAt: now.Add(s.PaymentTTL), CreatedAt: now, UpdatedAt: now}
	// The merchant's accepted assets and the prices (a market-data API) are read before the
	// transaction, so a slow provider never holds a database connection or the SQLite writer.
	accepted, err := s.Store.Read(ctx).AcceptedAssets(m.ID)
	if err != nil {
		return Created{}, err
	}
	if err := s.buildQuotes(ctx, &p, accepted, now); err != nil {
		return Created{}, err
	}
	var out Created
	create := func(tx *store.Tx) error {
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		row := p
		var err error
		if row.DepositAddress, err = s.depositAddress(tx, m, row, now); err != nil {
			return err
		}
		if err := s.Core.CreatePayment(tx, &row); err != nil {
			return err
		}
		out = Created{Payment: s.present(row), Secret: secret, PaymentURL: s.PublicBaseURL + "/pay/" + p.ID.String() + "#secret=" + secret}
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	}
	err = s.Store.InTx(ctx, create)
	if errors.Is(err, store.ErrConflict) && p.CustomerRefID != nil {
		// Another request created this customer's first deposit address at the same moment:
		// run again, and this time reuse it.
		err = s.Store.InTx(ctx, create)
	}
	if err != nil {
		return Created{}, err
	}
	return out, nil
}

// depositAddress reuses a deposit customer's address or derives a fresh one.
func (s *Service) depositAddress(tx *store.Tx, m domain.Merchant, p domain.Payment, now time.Time) (domain.DepositAddress, error) {
	if p.Type == TypeDeposit && p.CustomerRefID != nil {
		a, err := tx.CustomerDepositAddress(m.ID, p.Mode, *p.CustomerRefID)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return domain.DepositAddress{}, err
		}
	}
	idx, err := tx.AllocateDerivationIndex()
	if err != nil {
		return domain.DepositAddress{}, err
	}
	addr, err := s.Addresses.Address(uint32(idx))
	if err != nil {
		return domain.DepositAddress{}, err
	}
	a := domain.DepositAddress{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, DerivationIndex: idx, Address: addr, Mode: p.Mode, CreatedAt: now}
	if p.Type == TypeDeposit && p.CustomerRefID != nil {
		a.CustomerRefID = p.CustomerRefID // shared by the customer's deposits: no single payment owns it
	} else {
		id := p.ID
		a.PaymentID = &id
	}
	return a, tx.InsertDepositAddress(a)
}

// ListInput selects a page of payments.
type ListInput struct {
	Type          domain.PaymentType
	Status        domain.PaymentStatus
	Search        string
	SortBy        string // createdAt | amountInCents
	SortOrder     string // ASC | DESC
	Limit, Offset int32
}

// List returns a page of the merchant's payments.
func (s *Service) List(ctx context.Context, m domain.Merchant, in ListInput) ([]domain.Payment, domain.Page, error) {
	tx := s.Store.Read(ctx)
	f := store.PaymentFilter{MerchantID: m.ID, Mode: m.Mode.Norm(), Merchant: &m, Type: in.Type, Status: in.Status, Search: in.Search,
		Ascending: in.SortOrder == "ASC", Limit: in.Limit, Offset: in.Offset, SortBy: "created_at"}
	if in.SortBy == "amountInCents" {
		f.SortBy = "amount_in_cents"
	}
	ps, total, err := tx.ListPayments(f, s.Catalog)
	if err != nil {
		return nil, domain.Page{}, err
	}
	for i := range ps {
		ps[i] = s.present(ps[i])
	}
	return ps, domain.Page{Limit: in.Limit, Offset: in.Offset, Total: total}, nil
}

// Get reads one of the merchant's payments; an unknown id, a malformed id and another
// merchant's id all answer ErrPaymentNotFound.
func (s *Service) Get(ctx context.Context, m domain.Merchant, id string) (domain.Payment, error) {
	pid, err := uuid.Parse(id)
	if err != nil {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	p, err := s.Store.Read(ctx).GetPayment(m.ID, m.Mode.Norm(), pid, s.Catalog, m)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Payment{}, err
	}
	return s.present(p), nil
}

// Version reads the version of one of the merchant's payments (every committed change bumps
// it): what a cached answer is checked against. Unknown, malformed and foreign ids are
// ErrPaymentNotFound, as for Get.
func (s *Service) Version(ctx context.Context, m domain.Merchant, id string) (uuid.UUID, int64, error) {
	pid, err := uuid.Parse(id)
	if err != nil {
		return uuid.Nil, 0, domain.ErrPaymentNotFound
	}
	v, err := s.Store.Read(ctx).PaymentVersion(m.ID, m.Mode.Norm(), pid)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, 0, domain.ErrPaymentNotFound
	}
	return pid, v, err
}

// present applies read-time truths: quotes past expiry read as expired.
func (s *Service) present(p domain.Payment) domain.Payment { return Present(p, s.Now()) }

// Present is a payment as a read at now shows it: quotes past expiry read as expired. The
// quotes are copied, never changed in place.
func Present(p domain.Payment, now time.Time) domain.Payment {
	qs := make([]domain.Quote, len(p.Quotes))
	for i, q := range p.Quotes {
		qs[i] = q
		qs[i].Status = effectiveQuoteStatus(q, now)
	}
	p.Quotes = qs
	return p
}

func newPaymentSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "ps_" + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
