// Package policy owns a merchant's payout policy (issue 23): the rules money leaving the balance
// — a withdrawal or a refund — must pass when it is created (the sanctions list, the address
// book and its cooling-off, the rolling daily limit) and whether a second person must approve it
// before it is sent; the settings that hold those rules; the address book; and the approval or
// rejection of a withdrawal waiting for one. Withdrawals and refunds call Check through an
// interface of their own, in the transaction that debits the balance.
package policy

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// Service applies and manages the payout policy.
type Service struct {
	Store   *store.Store
	Core    *lifecycle.Core // rejections cancel through it; approvals are its changes too
	Catalog domain.Catalog
	// Withdrawals checks a saved address as a withdrawal's recipient is checked (never one of
	// this service's own addresses, a token contract or a reserved address).
	Withdrawals *withdrawals.Service
	Sanctions   *risk.SanctionsList // PAYMENTS_RISK_SANCTIONS_FILE; nil: nobody is listed
	Now         func() time.Time
	Log         *slog.Logger // nil: slog.Default()
}

// dailyWindow is the rolling window of the daily limit.
const dailyWindow = 24 * time.Hour

// Check decides whether the outflow o of merchant m may be created, in tx (the creating
// transaction, under the balance lock of o's mode, so concurrent outflows are counted one after
// the other). A refusal is a *domain.PolicyRefusal; a recipient on the sanctions list is also
// audited in a transaction of its own once tx is over (tx rolls back with the refusal).
func (s *Service) Check(ctx context.Context, tx *store.Tx, m domain.Merchant, o domain.Outflow) (domain.PolicyDecision, error) {
	if o.Recipient != "" && s.Sanctions.Contains(o.Recipient) {
		tx.OnEnd(func() { s.auditSanctioned(ctx, m.ID, string(o.Kind), o.ChainID, o.Recipient, o.Cents) })
		return domain.PolicyDecision{}, domain.Refuse(domain.CodeRecipientSanctioned, "recipientAddress",
			"%s is on this service's sanctions list: nothing is paid to it (the attempt is in the audit log)", o.Recipient)
	}
	now := s.Now()
	set, err := s.Settings(tx, m.ID, m.Mode)
	if err != nil {
		return domain.PolicyDecision{}, err
	}
	set = set.Effective(now) // a loosening waits out the cooling-off in force
	if set.AllowlistOnly && o.Recipient != "" && !o.FromCustomer {
		// Every address the merchant's side names: a refund's recipientAddress is a team member's
		// (or a secret key's) choice like a withdrawal's, and would otherwise take the balance,
		// payment by payment, where a withdrawal may not go. A customer's claim is not listed.
		if err := checkSaved(tx, m.ID, o, now); err != nil {
			return domain.PolicyDecision{}, err
		}
	}
	if set.DailyLimitCents != nil && o.CountsToday {
		left, err := tx.OutflowSince(m.ID, o.Mode.Norm(), now.Add(-dailyWindow))
		if err != nil {
			return domain.PolicyDecision{}, err
		}
		if total := left + o.Cents; total > *set.DailyLimitCents {
			return domain.PolicyDecision{}, domain.Refuse(domain.CodeDailyLimitExceeded, "amountInCents",
				"money leaving in the last 24 h would be %d cents (%d already), over the daily limit of %d", total, left, *set.DailyLimitCents)
		}
	}
	return domain.PolicyDecision{ApprovalRequired: o.TypedAddress ||
		(set.ApprovalThresholdCents != nil && o.Cents > *set.ApprovalThresholdCents)}, nil
}

// checkSaved refuses a recipient not in the address book for the chain, or still in its
// cooling-off period.
func checkSaved(tx *store.Tx, merchantID uuid.UUID, o domain.Outflow, now time.Time) error {
	e, err := tx.AddressBookEntryFor(merchantID, o.ChainID, o.Recipient)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Refuse(domain.CodeRecipientNotInAddressBook, "recipientAddress",
			"payouts the merchant addresses go only to saved addresses (allowlistOnly): %s is not in the address book for %s", o.Recipient, chains.CAIP2(o.ChainID))
	}
	if err != nil {
		return err
	}
	if now.Before(e.UsableAt) {
		return domain.Refuse(domain.CodeRecipientCoolingOff, "recipientAddress",
			"%s was saved at %s and becomes usable at %s (the cooling-off period)", o.Recipient,
			e.CreatedAt.UTC().Format(time.RFC3339), e.UsableAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// Settings reads a merchant's payout settings of a mode: the defaults when they never changed.
func (s *Service) Settings(tx *store.Tx, merchantID uuid.UUID, mode domain.Mode) (domain.PayoutSettings, error) {
	set, err := tx.PayoutSettings(merchantID, mode.Norm())
	if errors.Is(err, store.ErrNotFound) {
		return domain.DefaultPayoutSettings(merchantID, mode), nil
	}
	return set, err
}

// auditSanctioned records a payout (or saved address) refused for a listed recipient, in a
// transaction of its own: the refusal rolled the caller's back. It runs after the request's
// transaction, so a client that went away does not cancel it.
func (s *Service) auditSanctioned(ctx context.Context, merchantID uuid.UUID, kind string, chainID int64, recipient string, cents int64) {
	ctx = context.WithoutCancel(ctx)
	details := map[string]any{"refused": kind, "chainId": chains.CAIP2(chainID), "recipientAddress": recipient}
	if cents > 0 {
		details["amountInCents"] = cents
	}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		// The target is the address refused: nothing was created to name.
		return audit.Append(ctx, tx, audit.Event{MerchantID: merchantID, Action: audit.RecipientSanctioned, TargetType: kind,
			TargetID: recipient, Details: details})
	})
	if err != nil {
		s.log().ErrorContext(ctx, "audit a sanctioned recipient", "merchant", merchantID, "recipient", recipient, "err", err)
	}
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}
