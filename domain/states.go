package domain

import (
	"fmt"
	"slices"
)

// The states of every entity with a lifecycle, and the one table per entity that says which
// changes are allowed. The lifecycle core checks every status change it
// writes against these tables, so a transition that is not listed here cannot reach the database.

// PaymentStatus is a payment's state.
type PaymentStatus string

// Payment states.
const (
	PaymentPending    PaymentStatus = "pending"    // created, waiting for the customer's transfer
	PaymentProcessing PaymentStatus = "processing" // a transfer is seen, confirmations pending
	PaymentCompleted  PaymentStatus = "completed"  // confirmed total reached; receipt attached
	PaymentFailed     PaymentStatus = "failed"     // the settlement cannot be made
	PaymentExpired    PaymentStatus = "expired"    // expiry reached without the full amount
	PaymentCancelled  PaymentStatus = "cancelled"  // cancelled by the merchant before any transfer
)

// paymentTransitions lists, per state, the states it may move to. Terminal states have none.
var paymentTransitions = map[PaymentStatus][]PaymentStatus{
	// pending → completed directly: a transfer first seen with its confirmations already reached
	// (a watcher catching up, or an operator's manual settlement of a confirmed transaction).
	PaymentPending:    {PaymentProcessing, PaymentCompleted, PaymentExpired, PaymentFailed, PaymentCancelled},
	PaymentProcessing: {PaymentPending, PaymentCompleted, PaymentExpired, PaymentFailed}, // → pending: the counted transfer was reorged out
	PaymentCompleted:  nil,
	PaymentFailed:     nil,
	PaymentExpired:    nil,
	PaymentCancelled:  nil,
}

// PaymentStatuses lists every payment state in the table's order.
func PaymentStatuses() []PaymentStatus {
	return []PaymentStatus{PaymentPending, PaymentProcessing, PaymentCompleted, PaymentFailed, PaymentExpired, PaymentCancelled}
}

// Valid reports whether s is a known state.
func (s PaymentStatus) Valid() bool { _, ok := paymentTransitions[s]; return ok }

// Terminal reports whether s never changes again.
func (s PaymentStatus) Terminal() bool { return s.Valid() && len(paymentTransitions[s]) == 0 }

// Open reports whether the payment still waits for (more) funds.
func (s PaymentStatus) Open() bool { return s == PaymentPending || s == PaymentProcessing }

// CanTransitionTo reports whether the table allows s → to.
func (s PaymentStatus) CanTransitionTo(to PaymentStatus) bool {
	return slices.Contains(paymentTransitions[s], to)
}

// QuoteStatus is a quote's state.
type QuoteStatus string

// Quote states.
const (
	QuoteActive  QuoteStatus = "active"
	QuoteUsed    QuoteStatus = "used"    // the payment settled on this quote
	QuoteExpired QuoteStatus = "expired" // past expiresAt (a late transfer may still use it), or another quote was used
	QuoteFailed  QuoteStatus = "failed"  // its token or chain can no longer settle
)

var quoteTransitions = map[QuoteStatus][]QuoteStatus{
	QuoteActive: {QuoteUsed, QuoteExpired, QuoteFailed},
	// expired → used: the customer sent the quoted amount after the quote's expiresAt but while
	// the payment was still open. The money arrived for this quote; losing the payment over a
	// late transfer would be worse than honouring the rate (the payment's own expiry bounds it).
	QuoteExpired: {QuoteUsed},
	QuoteUsed:    nil,
	QuoteFailed:  nil,
}

// QuoteStatuses lists every quote state.
func QuoteStatuses() []QuoteStatus {
	return []QuoteStatus{QuoteActive, QuoteUsed, QuoteExpired, QuoteFailed}
}

// Valid reports whether s is a known state.
func (s QuoteStatus) Valid() bool { _, ok := quoteTransitions[s]; return ok }

// Terminal reports whether s never changes again.
func (s QuoteStatus) Terminal() bool { return s.Valid() && len(quoteTransitions[s]) == 0 }

// CanTransitionTo reports whether the table allows s → to.
func (s QuoteStatus) CanTransitionTo(to QuoteStatus) bool {
	return slices.Contains(quoteTransitions[s], to)
}

// WithdrawalStatus is a withdrawal's state.
type WithdrawalStatus string

// Withdrawal states.
const (
	WithdrawalPending    WithdrawalStatus = "pending"    // debited, waiting to be signed
	WithdrawalProcessing WithdrawalStatus = "processing" // a signed transaction is stored, then broadcast
	WithdrawalCompleted  WithdrawalStatus = "completed"  // confirmed; receipt attached
	WithdrawalFailed     WithdrawalStatus = "failed"     // nothing moved; errorMessage set, balance restored
	WithdrawalCancelled  WithdrawalStatus = "cancelled"  // cancelled before signing; balance restored
)

var withdrawalTransitions = map[WithdrawalStatus][]WithdrawalStatus{
	WithdrawalPending:    {WithdrawalProcessing, WithdrawalCancelled},
	WithdrawalProcessing: {WithdrawalCompleted, WithdrawalFailed},
	WithdrawalCompleted:  nil,
	WithdrawalFailed:     nil,
	WithdrawalCancelled:  nil,
}

// WithdrawalStatuses lists every withdrawal state.
func WithdrawalStatuses() []WithdrawalStatus {
	return []WithdrawalStatus{WithdrawalPending, WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed, WithdrawalCancelled}
}

// Valid reports whether s is a known state.
func (s WithdrawalStatus) Valid() bool { _, ok := withdrawalTransitions[s]; return ok }

// Terminal reports whether s never changes again.
func (s WithdrawalStatus) Terminal() bool { return s.Valid() && len(withdrawalTransitions[s]) == 0 }

// CanTransitionTo reports whether the table allows s → to.
func (s WithdrawalStatus) CanTransitionTo(to WithdrawalStatus) bool {
	return slices.Contains(withdrawalTransitions[s], to)
}

// Debited reports whether the withdrawal's amount is (still) out of the merchant's balance.
func (s WithdrawalStatus) Debited() bool { return s != WithdrawalFailed && s != WithdrawalCancelled }

// TransitionError refuses a status change the entity's table does not allow.
type TransitionError struct {
	Entity   string // payment | quote | withdrawal
	ID       string
	From, To string
}

func (e *TransitionError) Error() string {
	if e.From == e.To {
		return fmt.Sprintf("%s %s is already %s", e.Entity, e.ID, e.From)
	}
	return fmt.Sprintf("%s %s cannot move from %s to %s", e.Entity, e.ID, e.From, e.To)
}

// TransitionTo moves the payment to a new state, or refuses with a *TransitionError.
func (p *Payment) TransitionTo(to PaymentStatus) error {
	if !p.Status.CanTransitionTo(to) {
		return &TransitionError{Entity: "payment", ID: p.ID.String(), From: string(p.Status), To: string(to)}
	}
	p.Status = to
	return nil
}

// TransitionTo moves the quote to a new state, or refuses with a *TransitionError.
func (q *Quote) TransitionTo(to QuoteStatus) error {
	if !q.Status.CanTransitionTo(to) {
		return &TransitionError{Entity: "quote", ID: q.ID.String(), From: string(q.Status), To: string(to)}
	}
	q.Status = to
	return nil
}

// TransitionTo moves the withdrawal to a new state, or refuses with a *TransitionError.
func (w *Withdrawal) TransitionTo(to WithdrawalStatus) error {
	if !w.Status.CanTransitionTo(to) {
		return &TransitionError{Entity: "withdrawal", ID: w.ID.String(), From: string(w.Status), To: string(to)}
	}
	w.Status = to
	return nil
}
