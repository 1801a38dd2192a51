package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

// A change may alter a payment's status, its final amounts and fees, its quotes' statuses and
// add a first receipt; a withdrawal's status, errorMessage, a first receipt and its approval
// (given once: checkApproval). Everything else
// is frozen: the core refuses a closure that touched it, because the store would not write it
// while the ledger and the event would see it.

// frozenPayment serialises what a change may not alter. It is taken before the closure runs,
// so a closure writing through a pointer it shares with the original is caught too.
func frozenPayment(p domain.Payment, receiptSet bool) []byte {
	f := p
	f.Status, f.AmountDueCents, f.AmountMerchantNetCents = "", 0, 0
	f.ConvenienceFeeCents, f.MerchantFeeCents, f.SwapFeeCents = nil, nil, nil
	f.UpdatedAt, f.Version, f.Received = time.Time{}, 0, nil
	if p.Type == domain.TypeDeposit {
		f.AmountInCents = 0 // a deposit's amount is what arrived, fixed at settlement
	}
	f.Quotes = make([]domain.Quote, len(p.Quotes))
	for i, q := range p.Quotes {
		q.Status = ""
		f.Quotes[i] = q
	}
	if !receiptSet {
		f.Receipt = nil // a first receipt may be attached
	}
	return mustJSON(f)
}

func frozenWithdrawal(w domain.Withdrawal, receiptSet bool) []byte {
	f := w
	f.Status, f.ErrorMessage, f.UpdatedAt, f.Version = "", nil, time.Time{}, 0
	f.Approval.ApprovedBy, f.Approval.ApprovedByEmail, f.Approval.ApprovedAt = nil, nil, nil
	if !receiptSet {
		f.Receipt = nil
	}
	return mustJSON(f)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("lifecycle: snapshot an entity: " + err.Error()) // plain data: cannot fail
	}
	return b
}

func checkFrozen(entity, id string, before, after []byte) error {
	if !bytes.Equal(before, after) {
		return fmt.Errorf("lifecycle: %s %s: a change may alter only its state and what settles it", entity, id)
	}
	return nil
}

// checkPayment refuses a change the tables do not allow. It runs on what the closure left, so
// a closure that assigned Status directly is checked as strictly as one that called TransitionTo.
func checkPayment(before, after domain.Payment) error {
	if before.Status.Terminal() && paymentChanged(before, after) {
		return &domain.TransitionError{Entity: "payment", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	if after.Status != before.Status && !before.Status.CanTransitionTo(after.Status) {
		return &domain.TransitionError{Entity: "payment", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	if len(after.Quotes) != len(before.Quotes) {
		return fmt.Errorf("lifecycle: payment %s: quotes cannot be added or removed by a change", before.ID)
	}
	for i, q := range after.Quotes {
		was := before.Quotes[i]
		if q.ID != was.ID {
			return fmt.Errorf("lifecycle: payment %s: quotes cannot be reordered by a change", before.ID)
		}
		if q.Status != was.Status && !was.Status.CanTransitionTo(q.Status) {
			return &domain.TransitionError{Entity: "quote", ID: q.ID.String(), From: string(was.Status), To: string(q.Status)}
		}
	}
	if after.Status == domain.PaymentCompleted && after.Receipt == nil {
		return fmt.Errorf("lifecycle: payment %s cannot complete without a receipt", before.ID)
	}
	if before.Receipt != nil && after.Receipt == nil {
		return fmt.Errorf("lifecycle: payment %s: a receipt is never removed", before.ID)
	}
	if after.Status.Terminal() {
		for _, q := range after.Quotes {
			if q.Status == domain.QuoteActive {
				return fmt.Errorf("lifecycle: payment %s is %s but quote %s is still active", before.ID, after.Status, q.ID)
			}
		}
	}
	return nil
}

func paymentChanged(before, after domain.Payment) bool {
	if before.Status != after.Status || before.AmountInCents != after.AmountInCents ||
		before.AmountDueCents != after.AmountDueCents || before.AmountMerchantNetCents != after.AmountMerchantNetCents ||
		!sameInt(before.ConvenienceFeeCents, after.ConvenienceFeeCents) || !sameInt(before.MerchantFeeCents, after.MerchantFeeCents) ||
		!sameInt(before.SwapFeeCents, after.SwapFeeCents) || (before.Receipt == nil) != (after.Receipt == nil) ||
		!sameReceived(before.Received, after.Received) {
		return true
	}
	for i := range after.Quotes {
		if after.Quotes[i].Status != before.Quotes[i].Status {
			return true
		}
	}
	return false
}

func checkWithdrawal(before, after domain.Withdrawal) error {
	if before.Status.Terminal() && withdrawalChanged(before, after) {
		return &domain.TransitionError{Entity: "withdrawal", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	if after.Status != before.Status && !before.Status.CanTransitionTo(after.Status) {
		return &domain.TransitionError{Entity: "withdrawal", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	if after.Status == domain.WithdrawalFailed && (after.ErrorMessage == nil || *after.ErrorMessage == "") {
		return fmt.Errorf("lifecycle: withdrawal %s cannot fail without an errorMessage", before.ID)
	}
	if after.Status != domain.WithdrawalFailed && after.ErrorMessage != nil {
		return fmt.Errorf("lifecycle: withdrawal %s: errorMessage is only set on failure", before.ID)
	}
	if after.Status == domain.WithdrawalCompleted && after.Receipt == nil {
		return fmt.Errorf("lifecycle: withdrawal %s cannot complete without a receipt", before.ID)
	}
	if after.Status == domain.WithdrawalProcessing && before.Status != after.Status && after.Approval.Waiting() {
		// The payout manager never picks such a withdrawal (store.PendingWithdrawals); this is
		// the last line: nothing is signed for one a second person has not approved.
		return &domain.TransitionError{Entity: "withdrawal", ID: before.ID.String(), From: string(before.Status), To: string(after.Status)}
	}
	return checkApproval(before, after)
}

// checkApproval lets a change give a pending withdrawal's required approval, once, by a person
// (the policy checked who), and nothing else: an approval is never changed or taken back.
func checkApproval(before, after domain.Withdrawal) error {
	b, a := before.Approval, after.Approval
	switch {
	case b.ApprovedAt != nil:
		if !sameTime(b.ApprovedAt, a.ApprovedAt) || !sameUUID(b.ApprovedBy, a.ApprovedBy) || !sameStr(b.ApprovedByEmail, a.ApprovedByEmail) {
			return fmt.Errorf("lifecycle: withdrawal %s: an approval is never changed", before.ID)
		}
	case a.ApprovedAt == nil:
		if a.ApprovedBy != nil || a.ApprovedByEmail != nil {
			return fmt.Errorf("lifecycle: withdrawal %s: an approver without an approval time", before.ID)
		}
	case !b.Required || before.Status != domain.WithdrawalPending || after.Status != domain.WithdrawalPending || a.ApprovedBy == nil:
		return fmt.Errorf("lifecycle: withdrawal %s: only a pending withdrawal awaiting approval is approved, by a person, alone", before.ID)
	}
	return nil
}

func withdrawalChanged(before, after domain.Withdrawal) bool {
	return before.Status != after.Status || !sameStr(before.ErrorMessage, after.ErrorMessage) ||
		(before.Receipt == nil) != (after.Receipt == nil) || !sameTime(before.Approval.ApprovedAt, after.Approval.ApprovedAt)
}

func sameTime(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}

func sameUUID(a, b *uuid.UUID) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func sameReceived(a, b *domain.Received) bool {
	return (a == nil && b == nil) ||
		(a != nil && b != nil && a.QuoteID == b.QuoteID && a.Amount.Equal(b.Amount) && a.Confirmed.Equal(b.Confirmed))
}

func sameInt(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

func sameStr(a, b *string) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

// clonePayment copies what a closure may change, so before stays as it was read.
func clonePayment(p domain.Payment) domain.Payment {
	out := p
	out.Quotes = append([]domain.Quote(nil), p.Quotes...)
	out.ConvenienceFeeCents, out.MerchantFeeCents, out.SwapFeeCents = copyPtr(p.ConvenienceFeeCents), copyPtr(p.MerchantFeeCents), copyPtr(p.SwapFeeCents)
	if p.Receipt != nil {
		r := *p.Receipt
		out.Receipt = &r
	}
	out.Received = copyPtr(p.Received)
	return out
}

func cloneWithdrawal(w domain.Withdrawal) domain.Withdrawal {
	out := w
	out.ErrorMessage = copyPtr(w.ErrorMessage)
	out.Approval.ApprovedBy, out.Approval.ApprovedByEmail = copyPtr(w.Approval.ApprovedBy), copyPtr(w.Approval.ApprovedByEmail)
	out.Approval.ApprovedAt, out.Approval.CreatedBy = copyPtr(w.Approval.ApprovedAt), copyPtr(w.Approval.CreatedBy)
	if w.Receipt != nil {
		r := *w.Receipt
		out.Receipt = &r
	}
	return out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// paymentEventType announces a status change as the new status; quotes expiring on a payment
// that stays open as payment.quotes_expired; anything else as payment.updated.
func paymentEventType(before, after domain.Payment) domain.EventType {
	if after.Status != before.Status {
		return domain.PaymentStatusEvent(after.Status)
	}
	if !sameReceived(before.Received, after.Received) && underpaid(after) {
		return domain.EventPaymentUnderpaid
	}
	expired := false
	for i, q := range after.Quotes {
		if q.Status == before.Quotes[i].Status {
			continue
		}
		if q.Status != domain.QuoteExpired {
			return domain.EventPaymentUpdated
		}
		expired = true
	}
	if expired {
		return domain.EventPaymentQuotesExpired
	}
	return domain.EventPaymentUpdated
}

// underpaid reports a payment whose every counted transfer is confirmed and whose total is short
// of the settling quote's amount: it waits for a top-up.
func underpaid(p domain.Payment) bool {
	r := p.Received
	if p.Type != domain.TypePayment || r == nil || !r.Confirmed.IsPositive() || !r.Confirmed.Equal(r.Amount) {
		return false
	}
	for _, q := range p.Quotes {
		if q.ID == r.QuoteID {
			return r.Confirmed.LessThan(q.ExpectedAmountAsset)
		}
	}
	return false
}
