package domain

import (
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// A refund gives money back to a payment's customer in the payment's settled token on its chain
// (issue 23). It debits the merchant's balance when it is created and is paid by the hot wallet
// through the transaction manager, like a withdrawal; its address comes from the merchant or,
// when the merchant does not know it, from the customer's claim.

// RefundStatus is a refund's state.
type RefundStatus string

// Refund states.
const (
	RefundAwaitingAddress RefundStatus = "awaiting_address" // debited; waiting for the customer's claim
	RefundPending         RefundStatus = "pending"          // has its recipient; waiting to be signed (or approved)
	RefundProcessing      RefundStatus = "processing"       // a signed transaction is stored, then broadcast
	RefundCompleted       RefundStatus = "completed"        // confirmed; receipt attached
	RefundFailed          RefundStatus = "failed"           // nothing reached the customer; errorMessage set, balance restored
	RefundCancelled       RefundStatus = "cancelled"        // cancelled before signing (merchant, rejection, expired claim); balance restored
)

var refundTransitions = map[RefundStatus][]RefundStatus{
	RefundAwaitingAddress: {RefundPending, RefundCancelled},
	// pending → failed: at signing, a network fee the amount cannot cover (subtractNetworkFee).
	RefundPending:    {RefundProcessing, RefundCancelled, RefundFailed},
	RefundProcessing: {RefundCompleted, RefundFailed},
	RefundCompleted:  nil,
	RefundFailed:     nil,
	RefundCancelled:  nil,
}

// RefundStatuses lists every refund state in the table's order.
func RefundStatuses() []RefundStatus {
	return []RefundStatus{RefundAwaitingAddress, RefundPending, RefundProcessing, RefundCompleted, RefundFailed, RefundCancelled}
}

// Valid reports whether s is a known state.
func (s RefundStatus) Valid() bool { _, ok := refundTransitions[s]; return ok }

// Terminal reports whether s never changes again.
func (s RefundStatus) Terminal() bool { return s.Valid() && len(refundTransitions[s]) == 0 }

// CanTransitionTo reports whether the table allows s → to.
func (s RefundStatus) CanTransitionTo(to RefundStatus) bool {
	return slices.Contains(refundTransitions[s], to)
}

// Debited reports whether the refund's amount is (still) out of the merchant's balance.
func (s RefundStatus) Debited() bool { return s != RefundFailed && s != RefundCancelled }

// RecipientSource says where a refund's address came from.
type RecipientSource string

// Recipient sources.
const (
	RecipientFromMerchant RecipientSource = "merchant"        // the create request named it
	RecipientFromPayer    RecipientSource = "payer_signature" // claimed with a signature of an address that paid
	RecipientTyped        RecipientSource = "typed_address"   // typed on the claim page: needs an approval
)

// RefundReceipt records a completed refund's transaction.
type RefundReceipt struct {
	RefundID                uuid.UUID
	Token                   Token
	SettledAmountAsset      decimal.Decimal // what the customer received (after a subtracted fee)
	TxHash                  string
	TxBlockNumber           int64
	TxTimestamp             time.Time
	TxSenderAddress         string
	TxGasUsed               int64
	TxTotalCost             decimal.Decimal
	TxTotalCostUSDFractions int64
	CreatedAt               time.Time
}

// Refund is money given back to a payment's customer.
type Refund struct {
	ID                 uuid.UUID
	MerchantID         uuid.UUID
	PaymentID          uuid.UUID
	Mode               Mode // the payment's, and its chain's
	Chain              Chain
	Token              Token
	AmountInCents      int64           // debited from the balance
	AmountAsset        decimal.Decimal // the token amount, smallest unit
	SubtractNetworkFee bool
	NetworkFeeAsset    *decimal.Decimal // the fee taken from the amount sent, once signed
	RecipientAddress   *string          // lowercase; nil while awaiting the claim
	RecipientSource    *RecipientSource
	Reason             *string
	Overpayment        bool // the excess asked for from the checkout page
	ClaimExpiresAt     *time.Time
	Status             RefundStatus
	Approval           Approval
	ErrorMessage       *string
	Receipt            *RefundReceipt
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Version            int64 // bumped by every committed change; its events are numbered by it
}

// TransitionTo moves the refund to a new state, or refuses with a *TransitionError.
func (r *Refund) TransitionTo(to RefundStatus) error {
	if !r.Status.CanTransitionTo(to) {
		return &TransitionError{Entity: "refund", ID: r.ID.String(), From: string(r.Status), To: string(to)}
	}
	r.Status = to
	return nil
}

// Sendable reports whether the payout manager may sign the refund now: pending with its
// recipient, and no approval waiting.
func (r Refund) Sendable() bool {
	return r.Status == RefundPending && r.RecipientAddress != nil && !r.Approval.Waiting()
}

// ErrClaimExpired refuses a claim after the refund's claim expired (the expiry loop cancels it).
var ErrClaimExpired = errors.New("the refund's claim expired: ask the merchant for a new refund")

// Refund events. A status change is announced as the new status; refund.pending and
// refund.processing (and refund.updated: an approval given) stay in the outbox.
const (
	EventRefundCreated   EventType = "refund.created"
	EventRefundUpdated   EventType = "refund.updated"
	EventRefundCompleted EventType = "refund.completed"
	EventRefundFailed    EventType = "refund.failed"
	EventRefundCancelled EventType = "refund.cancelled"
)

// RefundStatusEvent is the event announcing a refund's move to status.
func RefundStatusEvent(s RefundStatus) EventType { return EventType("refund." + string(s)) }

// EntityRefund is the event entity of refunds.
const EntityRefund EntityKind = "refund"

// OverpaymentOffer is what the checkout page shows of a completed payment's excess when the
// merchant offers it back.
type OverpaymentOffer struct {
	ExcessAsset decimal.Decimal
	Token       Token
	RefundID    *uuid.UUID // the refund already asked for, if any
}
