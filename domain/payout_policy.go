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
	ApprovalThresholdCents *int64 // nil: approvals off
	AllowlistOnly          bool
	AddressCoolingOffHours int32
	DailyLimitCents        *int64 // nil: no daily limit
	RefundClaimDays        int32
	OfferOverpaymentRefund bool
	UpdatedAt              *time.Time
}

// DefaultPayoutSettings is the policy of a merchant that never changed it.
func DefaultPayoutSettings(merchantID uuid.UUID) PayoutSettings {
	return PayoutSettings{MerchantID: merchantID, AddressCoolingOffHours: 24, RefundClaimDays: 30}
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
