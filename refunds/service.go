// Package refunds owns refunds: money given back to a payment's customer in the payment's
// settled token on its chain. Creating one checks it against what the payment settled and what
// the merchant's balance holds, under the locks that make concurrent refunds safe; the
// customer's claim gives it an address (an EIP-712 signature of a paying address, or a typed
// address a team member approves); approvals, cancellations and the expiry of unclaimed refunds
// change it through the lifecycle core, which books the debit and its reversal. The payout
// manager (package payouts) pays it.
package refunds

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/store"
)

// Policy is the merchant's payout policy (package policy): nil means none — every refund is
// allowed without an approval and the settings are the defaults.
type Policy interface {
	// Check runs in tx (the creating transaction) and refuses with *domain.PolicyRefusal.
	Check(ctx context.Context, tx *store.Tx, m domain.Merchant, o domain.Outflow) (domain.PolicyDecision, error)
	Settings(tx *store.Tx, merchantID uuid.UUID, mode domain.Mode) (domain.PayoutSettings, error)
}

// Sealer runs inside the create or cancel transaction: Begin before the effect, End with its
// result (an idempotency.Step). Nil seals nothing.
type Sealer interface {
	Begin(tx *store.Tx) error
	End(tx *store.Tx, r domain.Refund) error
}

// Service creates, claims, approves, cancels and reads refunds.
type Service struct {
	Store      *store.Store
	Core       *lifecycle.Core
	Catalog    domain.Catalog
	Prices     pricing.Source
	Policy     Policy
	Recipients recipients.Checker
	Claims     *Claims
	Now        func() time.Time
}

// CreateInput is a create-refund request: exactly one of AmountInCents and AmountAsset.
type CreateInput struct {
	AmountInCents      *int64
	AmountAsset        *string // the settled token's smallest unit
	RecipientAddress   *string
	Reason             *string
	SubtractNetworkFee bool
}

// Create refunds part or all of one of the merchant's payments (in m.Mode) and debits the
// balance, under the balance lock and the payment's lock: concurrent refunds of a payment never
// add up to more than it settled, and never overdraw the balance. The effect is sealed with seal
// (the Idempotency-Key) when it is not nil.
func (s *Service) Create(ctx context.Context, m domain.Merchant, paymentID string, in CreateInput, seal Sealer) (domain.Refund, error) {
	pid, err := uuid.Parse(paymentID)
	if err != nil {
		return domain.Refund{}, domain.ErrPaymentNotFound
	}
	if err := domain.CheckOptionalLines("reason", in.Reason); err != nil {
		return domain.Refund{}, err
	}
	var recipient *string
	if in.RecipientAddress != nil {
		r, err := recipients.Normalise(*in.RecipientAddress)
		if err != nil {
			return domain.Refund{}, err
		}
		recipient = &r
	}
	p, err := s.Store.Read(ctx).GetPayment(m.ID, m.Mode.Norm(), pid, s.Catalog, m)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Refund{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Refund{}, err
	}
	// The amount is fixed before any lock: a price may come from the network.
	amt, err := s.amount(ctx, p, in)
	if err != nil {
		return domain.Refund{}, err
	}
	var out domain.Refund
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if seal != nil {
			if err := seal.Begin(tx); err != nil {
				return err
			}
		}
		r, err := s.create(ctx, tx, m, pid, amt, draft{recipient: recipient, reason: in.Reason, subtractFee: in.SubtractNetworkFee,
			createdBy: audit.CreatorOf(ctx)})
		if err != nil {
			return err
		}
		out = r
		if seal != nil {
			return seal.End(tx, out)
		}
		return nil
	})
	return out, err
}

// draft is what a refund is made of besides its amount.
type draft struct {
	recipient   *string
	reason      *string
	subtractFee bool
	overpayment bool
	createdBy   *uuid.UUID // the person answerable for it (audit.CreatorOf)
}

// create checks and records a refund of amt in tx: the merchant's balance lock, then the
// payment's, then the payment's refunded total, the balance, the recipient and the policy.
func (s *Service) create(ctx context.Context, tx *store.Tx, m domain.Merchant, paymentID uuid.UUID, amt amount, d draft) (domain.Refund, error) {
	mode := m.Mode.Norm()
	if err := tx.LockBalance(m.ID, mode); err != nil {
		return domain.Refund{}, err
	}
	p, err := tx.LockPayment(paymentID, s.Catalog)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Merchant.ID != m.ID || p.Mode.Norm() != mode)) {
		return domain.Refund{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Refund{}, err
	}
	if err := refundable(p); err != nil {
		return domain.Refund{}, err
	}
	if p.Receipt.Token.ID != amt.token.ID {
		return domain.Refund{}, domain.Refuse(domain.CodePaymentNotRefundable, "paymentId", "the payment's settlement changed: retry")
	}
	refunded, err := tx.RefundedAsset(p.ID)
	if err != nil {
		return domain.Refund{}, err
	}
	if left := p.Receipt.SettledAmountAsset.Sub(refunded); amt.units.GreaterThan(left) {
		return domain.Refund{}, domain.Refuse(domain.CodeRefundExceedsPayment, amt.param,
			"the payment settled %s %s (smallest unit) and its refunds already take %s: at most %s more can be refunded, not %s",
			p.Receipt.SettledAmountAsset, amt.token.Symbol, refunded, left, amt.units)
	}
	balance, err := tx.AvailableBalance(m.ID, mode)
	if err != nil {
		return domain.Refund{}, err
	}
	if amt.cents > balance {
		return domain.Refund{}, &domain.InsufficientBalanceError{RequestedCents: amt.cents, AvailableCents: balance}
	}
	if d.recipient != nil {
		if err := s.Recipients.Check(tx, *d.recipient, "a refund"); err != nil {
			return domain.Refund{}, err
		}
	}
	decision, settings, err := s.policy(ctx, tx, m, domain.Outflow{Kind: domain.OutflowRefund, Mode: mode, Cents: amt.cents,
		ChainID: amt.token.Chain.ID, Recipient: deref(d.recipient), CountsToday: true})
	if err != nil {
		return domain.Refund{}, err
	}
	now := s.Now()
	r := domain.Refund{ID: uuid.Must(uuid.NewV7()), MerchantID: m.ID, PaymentID: p.ID, Mode: mode, Chain: amt.token.Chain, Token: amt.token,
		AmountInCents: amt.cents, AmountAsset: amt.units, SubtractNetworkFee: d.subtractFee, Reason: d.reason, Overpayment: d.overpayment,
		Status: domain.RefundPending, Approval: domain.Approval{Required: decision.ApprovalRequired, CreatedBy: d.createdBy}, CreatedAt: now, UpdatedAt: now}
	if d.recipient != nil {
		src := domain.RecipientFromMerchant
		r.RecipientAddress, r.RecipientSource = d.recipient, &src
	} else {
		expires := now.Add(time.Duration(max(settings.RefundClaimDays, 1)) * 24 * time.Hour)
		r.Status, r.ClaimExpiresAt = domain.RefundAwaitingAddress, &expires
	}
	if err := s.Core.CreateRefund(tx, p, &r); err != nil {
		return domain.Refund{}, err
	}
	details := map[string]any{"mode": string(mode), "paymentId": p.ID.String(), "amountInCents": r.AmountInCents,
		"amountAsset": r.AmountAsset.String(), "tokenId": r.Token.ID, "recipientAddress": d.recipient,
		"approvalRequired": r.Approval.Required, "overpayment": r.Overpayment}
	return r, audit.Append(ctx, tx, audit.Event{MerchantID: m.ID, Action: audit.RefundCreated, TargetType: audit.TargetRefund,
		TargetID: r.ID.String(), Details: details})
}

// refundable refuses a payment that settled nothing (yet).
func refundable(p domain.Payment) error {
	if p.Status != domain.PaymentCompleted || p.Receipt == nil || p.Receipt.Token.ID == "" || !p.Receipt.SettledAmountAsset.IsPositive() {
		return domain.Refuse(domain.CodePaymentNotRefundable, "paymentId", "payment %s is %s: only a completed payment with a settled receipt can be refunded", p.ID, p.Status)
	}
	return nil
}

// policy asks the payout policy (none: allowed, defaults) and reads the merchant's settings.
func (s *Service) policy(ctx context.Context, tx *store.Tx, m domain.Merchant, o domain.Outflow) (domain.PolicyDecision, domain.PayoutSettings, error) {
	if s.Policy == nil {
		return domain.PolicyDecision{}, domain.DefaultPayoutSettings(m.ID, m.Mode), nil
	}
	d, err := s.Policy.Check(ctx, tx, m, o)
	if err != nil {
		return d, domain.PayoutSettings{}, err
	}
	settings, err := s.Policy.Settings(tx, m.ID, m.Mode)
	return d, settings, err
}

// person is the team member acting (from the request's audit actor).
type person struct {
	id    uuid.UUID
	email string
}

// actingPerson is the signed-in person a request acts as; nil for a secret key, a service token,
// the checkout page or a worker.
func actingPerson(ctx context.Context) *person {
	a := audit.ActorFrom(ctx)
	if a.Kind != audit.KindPerson {
		return nil
	}
	id, err := uuid.Parse(a.ID)
	if err != nil {
		return nil
	}
	return &person{id: id, email: a.Label}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
