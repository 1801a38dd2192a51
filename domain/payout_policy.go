package domain

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Money leaving a merchant's balance — a withdrawal or a refund — passes the merchant's payout
// policy (package policy) when it is created, in the transaction that debits it: the address
// book and its cooling-off, the rolling daily limit, the sanctions list, and whether a second
// person must approve it. This file is the vocabulary the services share (issue 23).

// OutflowKind says what kind of money is leaving.
type OutflowKind string

// The two kinds of outflow.
const (
	OutflowWithdrawal OutflowKind = "withdrawal"
	OutflowRefund     OutflowKind = "refund"
)

// Outflow is one withdrawal or refund as the payout policy sees it when it is created (or, for a
// refund, when its recipient becomes known).
type Outflow struct {
	Kind      OutflowKind
	Mode      Mode
	Cents     int64  // debited from the balance
	ChainID   int64  // the chain it is paid on
	Recipient string // lowercase 0x address; "" for a refund still awaiting its address
	// CountsToday is false when the cents were already counted against the daily limit (a refund
	// whose address arrives later was counted at creation).
	CountsToday bool
	// TypedAddress: a refund address typed on the claim page, not proven by the payer's
	// signature — always needs a person's approval.
	TypedAddress bool
	// FromCustomer: a refund address the customer gave on the claim page (signed or typed), which
	// the merchant's address book cannot list. Any address the merchant's side names — a
	// withdrawal's, or a refund's recipientAddress — is held to the address book.
	FromCustomer bool
}

// PolicyDecision is what the policy says about an allowed outflow.
type PolicyDecision struct {
	ApprovalRequired bool
}

// Approval records whether a second person must approve a withdrawal or refund before it is
// sent, and who did. CreatedBy is the person who created it (nil: a secret key, a service token
// or the customer's claim), who may never approve it.
type Approval struct {
	Required        bool
	ApprovedBy      *uuid.UUID // user id
	ApprovedByEmail *string
	ApprovedAt      *time.Time
	CreatedBy       *uuid.UUID
}

// Waiting reports whether an approval is required and not yet given: the payout manager never
// sends such a withdrawal or refund.
func (a Approval) Waiting() bool { return a.Required && a.ApprovedAt == nil }

// CheckApprover refuses an approval (or rejection, with allowCreator) by anyone but a person
// other than the creator: approvals are a second pair of eyes.
func (a Approval) CheckApprover(approver *uuid.UUID, allowCreator bool) error {
	if approver == nil {
		return ErrApprovalNeedsPerson
	}
	if !allowCreator && a.CreatedBy != nil && *a.CreatedBy == *approver {
		return ErrApprovalByCreator
	}
	if !a.Waiting() {
		return ErrNotAwaitingApproval
	}
	return nil
}

// PayoutSettings is a merchant's payout policy (one row per merchant; defaults without one).
type PayoutSettings struct {
	MerchantID             uuid.UUID
	Mode                   Mode   // each mode has its own: test access changes only test money's rules
	ApprovalThresholdCents *int64 // nil: approvals off
	AllowlistOnly          bool
	AddressCoolingOffHours int32
	DailyLimitCents        *int64 // nil: no daily limit
	RefundClaimDays        int32
	OfferOverpaymentRefund bool
	UpdatedAt              *time.Time
	// Stricter is the strictest policy in force before a loosening change, which keeps applying
	// until StricterUntil (nil: none pending): see Effective.
	Stricter      *PolicyRules
	StricterUntil *time.Time
}

// PolicyRules are the settings that guard money leaving (what a loosening change must wait out).
type PolicyRules struct {
	ApprovalThresholdCents *int64 `json:"approvalThresholdCents"`
	AllowlistOnly          bool   `json:"allowlistOnly"`
	AddressCoolingOffHours int32  `json:"addressCoolingOffHours"`
	DailyLimitCents        *int64 `json:"dailyLimitCents"`
}

// Rules are s's guarding settings.
func (s PayoutSettings) Rules() PolicyRules {
	return PolicyRules{ApprovalThresholdCents: s.ApprovalThresholdCents, AllowlistOnly: s.AllowlistOnly,
		AddressCoolingOffHours: s.AddressCoolingOffHours, DailyLimitCents: s.DailyLimitCents}
}

// Strictest is, field by field, the stricter of r and o: a threshold or limit off (nil) is the
// loosest, a lower one stricter; the allowlist on; the longer cooling-off.
func (r PolicyRules) Strictest(o PolicyRules) PolicyRules {
	lower := func(a, b *int64) *int64 {
		switch {
		case a == nil:
			return b
		case b == nil || *a <= *b:
			return a
		}
		return b
	}
	return PolicyRules{ApprovalThresholdCents: lower(r.ApprovalThresholdCents, o.ApprovalThresholdCents),
		AllowlistOnly: r.AllowlistOnly || o.AllowlistOnly, AddressCoolingOffHours: max(r.AddressCoolingOffHours, o.AddressCoolingOffHours),
		DailyLimitCents: lower(r.DailyLimitCents, o.DailyLimitCents)}
}

// LooserThan reports whether any of r's rules is looser than o's (o is stricter somewhere).
func (r PolicyRules) LooserThan(o PolicyRules) bool { return r.Strictest(o).differs(r) }

func (r PolicyRules) differs(o PolicyRules) bool {
	eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return !eq(r.ApprovalThresholdCents, o.ApprovalThresholdCents) || r.AllowlistOnly != o.AllowlistOnly ||
		r.AddressCoolingOffHours != o.AddressCoolingOffHours || !eq(r.DailyLimitCents, o.DailyLimitCents)
}

// Effective is the policy that applies at now: the settings, made stricter by a pending
// loosening's earlier rules until it takes effect. A loosening change (the allowlist off, a
// shorter cooling-off, a higher or no threshold or daily limit) waits out the cooling-off period
// that was in force, so one person with a stolen session cannot turn the guards off and move
// money at once; a tightening change applies at once.
func (s PayoutSettings) Effective(now time.Time) PayoutSettings {
	if s.Stricter == nil || s.StricterUntil == nil || !now.Before(*s.StricterUntil) {
		return s
	}
	r := s.Rules().Strictest(*s.Stricter)
	s.ApprovalThresholdCents, s.AllowlistOnly, s.AddressCoolingOffHours, s.DailyLimitCents =
		r.ApprovalThresholdCents, r.AllowlistOnly, r.AddressCoolingOffHours, r.DailyLimitCents
	return s
}

// DefaultPayoutSettings is the policy of a merchant's mode that never changed it.
func DefaultPayoutSettings(merchantID uuid.UUID, mode Mode) PayoutSettings {
	return PayoutSettings{MerchantID: merchantID, Mode: mode.Norm(), AddressCoolingOffHours: 24, RefundClaimDays: 30}
}

// AddressBookEntry is a saved recipient.
type AddressBookEntry struct {
	ID             uuid.UUID
	MerchantID     uuid.UUID
	Label          string
	ChainID        int64
	Address        string // lowercase
	CreatedAt      time.Time
	UsableAt       time.Time
	CreatedBy      *uuid.UUID
	CreatedByEmail *string
}

// Payout-policy errors. Each maps to one code in server/errors.go.
var (
	ErrApprovalByCreator   = errors.New("a withdrawal or refund is approved by a second person: you created this one")
	ErrApprovalNeedsPerson = errors.New("an approval is a person's: sign in to the dashboard to approve (a service token cannot)")
	ErrNotAwaitingApproval = errors.New("it does not await an approval")
	ErrAddressBookNotFound = errors.New("no such address-book entry")
	ErrAddressExists       = errors.New("this address is already saved for this chain")
	ErrRefundNotFound      = errors.New("no such refund")
	// ErrInvalidRefundSecret: the claim endpoints' header is missing (a wrong secret is
	// ErrRefundNotFound, as an unknown refund).
	ErrInvalidRefundSecret = errors.New("send the refund's claim secret in X-Service-Refund-Secret")
)

// PolicyRefusal is a payout refused by the merchant's policy or the sanctions list (409 with
// its own code, param naming the field).
type PolicyRefusal struct {
	Code    ErrorCode
	Param   string
	Message string
}

func (e *PolicyRefusal) Error() string { return e.Message }

// Refuse builds a PolicyRefusal.
func Refuse(code ErrorCode, param, format string, args ...any) error {
	return &PolicyRefusal{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Payout-policy and refund error codes (answered 409 unless said otherwise).
const (
	CodeDailyLimitExceeded        ErrorCode = "daily_limit_exceeded"
	CodeRecipientNotInAddressBook ErrorCode = "recipient_not_in_address_book"
	CodeRecipientCoolingOff       ErrorCode = "recipient_cooling_off"
	CodeRecipientSanctioned       ErrorCode = "recipient_sanctioned"
	CodeAddressExists             ErrorCode = "address_exists"
	CodeApprovalByCreator         ErrorCode = "approval_by_creator" // 403
	CodeRefundExceedsPayment      ErrorCode = "refund_exceeds_payment"
	CodePaymentNotRefundable      ErrorCode = "payment_not_refundable"
	CodeRefundNotFound            ErrorCode = "refund_not_found"      // 404
	CodeInvalidRefundSecret       ErrorCode = "invalid_refund_secret" // 401
	CodeSignatureInvalid          ErrorCode = "signature_invalid"     // 400
)
