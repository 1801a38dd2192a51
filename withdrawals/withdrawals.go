// Package withdrawals owns merchant withdrawals: validation against the merchant's withdrawal
// configuration, the balance check under a lock, cancellation, and reads scoped to the
// merchant. Every state change goes through the lifecycle core.
package withdrawals

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/store"
)

// Sealer runs inside the create or cancel transaction: Begin before the effect, End with its
// result (an idempotency.Step). Nil seals nothing.
type Sealer interface {
	Begin(tx *store.Tx) error
	End(tx *store.Tx, w domain.Withdrawal) error
}

// Service creates, cancels and reads withdrawals.
type Service struct {
	Store   *store.Store
	Core    *lifecycle.Core
	Catalog domain.Catalog
	Now     func() time.Time
	// Controlled lists the addresses this service itself holds (hot wallets, the backend wallet):
	// never a withdrawal's recipient. Deposit addresses are looked up in the store.
	Controlled []string
	// Policy is the merchant's payout policy (package policy), checked in the creating
	// transaction; nil: none (every withdrawal allowed, none waits for an approval).
	Policy Policy
}

// Policy decides whether money may leave (policy.Service). Check runs in the creating
// transaction, under the balance lock, and refuses with a *domain.PolicyRefusal.
type Policy interface {
	Check(ctx context.Context, tx *store.Tx, m domain.Merchant, o domain.Outflow) (domain.PolicyDecision, error)
}

// CreateInput is a create-withdrawal request with the chain already parsed to its numeric id.
type CreateInput struct {
	AmountInCents    int64
	ChainID          int64
	RecipientAddress string
	OrderID          *string
	CustomMetadata   *string
	Currency         string
}

// Create validates and records a pending withdrawal in the merchant's mode (m.Mode: its key's)
// and debits that mode's balance, under the lock of that balance so concurrent withdrawals can
// never overdraw it and money of the other mode never funds it.
// The effect is sealed with seal (the Idempotency-Key) when it is not nil.
func (s *Service) Create(ctx context.Context, m domain.Merchant, in CreateInput, seal Sealer) (domain.Withdrawal, error) {
	if !m.WithdrawalsEnabled {
		return domain.Withdrawal{}, domain.ErrWithdrawalsOff
	}
	if in.AmountInCents < domain.WithdrawalMinAmountCents || in.AmountInCents > domain.WithdrawalMaxAmountCents {
		return domain.Withdrawal{}, domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "amountInCents must be between %d and %d cents",
			domain.WithdrawalMinAmountCents, domain.WithdrawalMaxAmountCents)
	}
	if in.Currency != "" && in.Currency != "USD" {
		return domain.Withdrawal{}, domain.Invalid(domain.CodeParameterInvalid, "currency", "currency must be USD")
	}
	if err := domain.CheckOptionalText("orderId", in.OrderID); err != nil {
		return domain.Withdrawal{}, err
	}
	recipient, err := normaliseAddress(in.RecipientAddress)
	if err != nil {
		return domain.Withdrawal{}, err
	}
	var out domain.Withdrawal
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		// The key first: a concurrent duplicate waits here, not on the merchant's lock.
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		mode := m.Mode.Norm()
		if err := tx.LockBalance(m.ID, mode); err != nil {
			return err
		}
		token, cfg, err := s.payoutToken(tx, m, in.ChainID)
		if err != nil {
			return err
		}
		if err := s.checkRecipient(tx, recipient); err != nil {
			return err
		}
		if err := checkLimits(cfg, in.AmountInCents); err != nil {
			return err
		}
		var decision domain.PolicyDecision
		if s.Policy != nil {
			// Before the balance: a sanctioned recipient is refused (and audited) whatever the balance.
			if decision, err = s.Policy.Check(ctx, tx, m, domain.Outflow{Kind: domain.OutflowWithdrawal, Mode: mode, Cents: in.AmountInCents,
				ChainID: in.ChainID, Recipient: recipient, CountsToday: true}); err != nil {
				return err
			}
		}
		balance, err := tx.AvailableBalance(m.ID, mode)
		if err != nil {
			return err
		}
		if in.AmountInCents > balance {
			return &domain.InsufficientBalanceError{RequestedCents: in.AmountInCents, AvailableCents: balance}
		}
		now := s.Now()
		out = domain.Withdrawal{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, Mode: mode, AmountInCents: in.AmountInCents,
			Chain: token.Chain, Token: token, RecipientAddress: recipient, Status: domain.WithdrawalPending, Currency: "USD",
			OrderID: in.OrderID, CustomMetadata: in.CustomMetadata, CreatedAt: now, UpdatedAt: now,
			Approval: domain.Approval{Required: decision.ApprovalRequired, CreatedBy: audit.CreatorOf(ctx)}}
		if err := s.Core.CreateWithdrawal(tx, &out); err != nil {
			return err
		}
		if err := audit.Append(ctx, tx, audit.Event{MerchantID: m.ID, Action: audit.WithdrawalCreated, TargetType: audit.TargetWithdrawal,
			TargetID: out.ID.String(), Details: map[string]any{"mode": string(mode), "amountInCents": out.AmountInCents,
				"chainId": chains.CAIP2(out.Chain.ID), "tokenSymbol": out.Token.Symbol, "recipientAddress": out.RecipientAddress,
				"approvalRequired": out.Approval.Required}}); err != nil {
			return err
		}
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	})
	return out, err
}

// payoutToken is the token a withdrawal of the merchant's mode pays out on chainID: the chain in
// the catalogue, in the merchant's withdrawal configuration, and of the merchant's mode.
func (s *Service) payoutToken(tx *store.Tx, m domain.Merchant, chainID int64) (domain.Token, domain.WithdrawalConfig, error) {
	mode := m.Mode.Norm()
	cfg, err := tx.GetWithdrawalConfig(m.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return domain.Token{}, cfg, err
	}
	// The spec cannot list the catalogue (an operator's file adds chains), so an unknown chain
	// is refused here as the schema refused it before.
	if _, known := s.Catalog.Chain(chainID); !known {
		return domain.Token{}, cfg, domain.Invalid(domain.CodeParameterInvalid, "chainId", "chain %s is not in this service's catalogue (GET /v1/external/chains)", chains.CAIP2(chainID))
	}
	token, ok := configuredToken(s.Catalog, cfg, chainID)
	if !ok {
		return domain.Token{}, cfg, domain.Invalid(domain.CodeChainNotSupported, "chainId", "chain %s is not in this merchant's withdrawal configuration", chains.CAIP2(chainID))
	}
	if cm := domain.ChainMode(token.Chain); cm != mode {
		return domain.Token{}, cfg, domain.Invalid(domain.CodeChainNotSupported, "chainId", "chain %s is a %s chain and this key acts in %s mode: %s-mode money pays out only on %s chains",
			chains.CAIP2(chainID), cm, mode, mode, mode)
	}
	return token, cfg, nil
}

// checkLimits refuses an amount outside the merchant's configured bounds.
func checkLimits(cfg domain.WithdrawalConfig, cents int64) error {
	if cents < cfg.MinAmountCents || cents > cfg.MaxAmountCents {
		return domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "amountInCents must be between %d and %d cents for this merchant", cfg.MinAmountCents, cfg.MaxAmountCents)
	}
	return nil
}

// Preview checks a withdrawal of cents on chainID as Create does (withdrawals enabled, the
// service's bounds, the chain and the merchant's limits; not the recipient nor the balance) and
// returns the token it would pay out. Nothing is written.
func (s *Service) Preview(ctx context.Context, m domain.Merchant, cents, chainID int64) (domain.Token, error) {
	if !m.WithdrawalsEnabled {
		return domain.Token{}, domain.ErrWithdrawalsOff
	}
	if cents < domain.WithdrawalMinAmountCents || cents > domain.WithdrawalMaxAmountCents {
		return domain.Token{}, domain.Invalid(domain.CodeInvalidAmount, "amountInCents", "amountInCents must be between %d and %d cents",
			domain.WithdrawalMinAmountCents, domain.WithdrawalMaxAmountCents)
	}
	token, cfg, err := s.payoutToken(s.Store.Read(ctx), m, chainID)
	if err != nil {
		return domain.Token{}, err
	}
	return token, checkLimits(cfg, cents)
}

// Cancel moves a pending withdrawal to cancelled; the lifecycle core books the reversal that
// restores the balance and writes withdrawal.cancelled in the same transaction (sealed with
// seal when it is not nil). Any other status is refused with a *domain.TransitionError. A
// merchant's request (merchantID not Nil) finds only its own withdrawals of its mode; the
// operator's any.
func (s *Service) Cancel(ctx context.Context, merchantID uuid.UUID, mode domain.Mode, id uuid.UUID, seal Sealer) (domain.Withdrawal, error) {
	var out domain.Withdrawal
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		w, err := s.Core.UpdateWithdrawalTx(tx, id, func(w *domain.Withdrawal) error {
			if merchantID != uuid.Nil && (w.MerchantID != merchantID || w.Mode != mode.Norm()) {
				return domain.ErrWithdrawalNotFound
			}
			return w.TransitionTo(domain.WithdrawalCancelled)
		})
		if err != nil {
			return err
		}
		out = w
		if err := audit.Append(ctx, tx, audit.Event{MerchantID: w.MerchantID, Action: audit.WithdrawalCancelled, TargetType: audit.TargetWithdrawal,
			TargetID: w.ID.String(), Details: map[string]any{"mode": string(w.Mode), "amountInCents": w.AmountInCents}}); err != nil {
			return err
		}
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	})
	return out, err
}

// MerchantOf reads which merchant a withdrawal belongs to (operator commands scope their
// idempotency keys by it); ErrWithdrawalNotFound when there is no such withdrawal.
func (s *Service) MerchantOf(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	m, err := s.Store.Read(ctx).WithdrawalMerchant(id)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, domain.ErrWithdrawalNotFound
	}
	return m, err
}

// configuredToken finds the configured withdrawal token on a chain the merchant may withdraw
// on and this deployment serves.
func configuredToken(cat domain.Catalog, cfg domain.WithdrawalConfig, chainID int64) (domain.Token, bool) {
	if !slices.Contains(cfg.ChainIDs, chainID) {
		return domain.Token{}, false
	}
	return cat.AcceptedToken(chainID, cfg.TokenSymbol)
}

// normaliseAddress accepts a 0x-prefixed EVM address in any case and stores it lowercase
// (recipients.Normalise).
func normaliseAddress(a string) (string, error) { return recipients.Normalise(a) }

// List returns a page of the merchant's withdrawals; awaitingApproval keeps the pending ones
// waiting for a second person's approval (the approvals queue).
func (s *Service) List(ctx context.Context, m domain.Merchant, status domain.WithdrawalStatus, awaitingApproval bool, limit, offset int32) ([]domain.Withdrawal, domain.Page, error) {
	ws, total, err := s.Store.Read(ctx).ListWithdrawals(store.WithdrawalFilter{MerchantID: m.ID, Mode: m.Mode.Norm(), Status: status,
		AwaitingApproval: awaitingApproval, Limit: limit, Offset: offset}, s.Catalog)
	return ws, domain.Page{Limit: limit, Offset: offset, Total: total}, err
}

// Get reads one of the merchant's withdrawals; unknown, malformed and foreign ids are ErrWithdrawalNotFound.
func (s *Service) Get(ctx context.Context, m domain.Merchant, id string) (domain.Withdrawal, error) {
	wid, err := uuid.Parse(id)
	if err != nil {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	w, err := s.Store.Read(ctx).GetWithdrawal(m.ID, m.Mode.Norm(), wid, s.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Withdrawal{}, domain.ErrWithdrawalNotFound
	}
	return w, err
}
