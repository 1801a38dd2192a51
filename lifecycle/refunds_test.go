package lifecycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// completedPayment is a payment settled through the core (credited its net).
func (f fixture) completedPayment(t *testing.T) domain.Payment {
	t.Helper()
	p := f.newPayment(t)
	for _, s := range pathTo[domain.PaymentCompleted] {
		var err error
		p, err = f.core.UpdatePayment(context.Background(), p.ID, movePayment(s))
		require.NoError(t, err)
	}
	return p
}

// newRefund creates a refund of cents of p through the core: pending to a recipient, or
// awaiting its address when recipient is "".
func (f fixture) newRefund(t *testing.T, p domain.Payment, cents int64, recipient string) domain.Refund {
	t.Helper()
	now := *f.clock
	r := domain.Refund{ID: uuid.Must(uuid.NewV7()), MerchantID: p.Merchant.ID, PaymentID: p.ID, Mode: domain.ModeLive, Chain: p.Receipt.Token.Chain,
		Token: p.Receipt.Token, AmountInCents: cents, AmountAsset: decimal.NewFromInt(cents * 10_000), Status: domain.RefundAwaitingAddress,
		ClaimExpiresAt: &now, CreatedAt: now, UpdatedAt: now}
	if recipient != "" {
		src := domain.RecipientFromMerchant
		r.Status, r.RecipientAddress, r.RecipientSource, r.ClaimExpiresAt = domain.RefundPending, &recipient, &src, nil
	}
	require.NoError(t, f.st.InTx(context.Background(), func(tx *store.Tx) error {
		locked, err := tx.LockPayment(p.ID, f.cat)
		if err != nil {
			return err
		}
		return f.core.CreateRefund(tx, locked, &r)
	}))
	return r
}

const refundTo = "0x5aeda56215b167893e80b4fe645ba6d5bab767de"

// The transitions a refund may make, written out here independently of domain/refunds.go.
var wantRefund = map[domain.RefundStatus][]domain.RefundStatus{
	domain.RefundAwaitingAddress: {domain.RefundPending, domain.RefundCancelled},
	domain.RefundPending:         {domain.RefundProcessing, domain.RefundCancelled, domain.RefundFailed},
	domain.RefundProcessing:      {domain.RefundCompleted, domain.RefundFailed},
}

func TestRefundTransitionTable(t *testing.T) {
	for _, from := range domain.RefundStatuses() {
		for _, to := range domain.RefundStatuses() {
			want := false
			for _, ok := range wantRefund[from] {
				want = want || ok == to
			}
			assert.Equal(t, want, from.CanTransitionTo(to), "%s → %s", from, to)
		}
	}
	for _, s := range []domain.RefundStatus{domain.RefundCompleted, domain.RefundFailed, domain.RefundCancelled} {
		assert.True(t, s.Terminal(), s)
		assert.Equal(t, s == domain.RefundCompleted, s.Debited(), s)
	}
}

// A refund's debit commits with its creation and its event; a cancel reverses it once, with its
// event; each moves the payment's version, announcing its new refunded total.
func TestRefundBooksDebitAndReversal(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.completedPayment(t)
		credited := f.balance(t)
		r := f.newRefund(t, p, 400, refundTo)
		assert.Equal(t, credited-400, f.balance(t))
		after, err := f.st.Read(ctx).PaymentByID(p.ID, f.cat)
		require.NoError(t, err)
		assert.Equal(t, int64(400), after.AmountRefundedCents)
		assert.Equal(t, p.Version+1, after.Version, "the payment's version moves with its refunded total")
		pe := f.events(t, p.ID)
		last := pe[len(pe)-1]
		assert.Equal(t, domain.EventPaymentUpdated, last.Type)
		var snap map[string]any
		require.NoError(t, json.Unmarshal(last.Payload, &snap))
		assert.EqualValues(t, 400, snap["amountRefundedCents"])

		for range 2 { // the second cancel is refused: terminal
			_, err = f.core.UpdateRefund(ctx, r.ID, func(r *domain.Refund) error { return r.TransitionTo(domain.RefundCancelled) })
		}
		var te *domain.TransitionError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, credited, f.balance(t), "reversed once")
		after, err = f.st.Read(ctx).PaymentByID(p.ID, f.cat)
		require.NoError(t, err)
		assert.Equal(t, int64(0), after.AmountRefundedCents)
		assert.Equal(t, p.Version+2, after.Version)
		var types []domain.EventType
		for _, e := range f.events(t, r.ID) {
			types = append(types, e.Type)
			assert.Equal(t, domain.EntityRefund, e.Entity)
		}
		assert.Equal(t, []domain.EventType{domain.EventRefundCreated, domain.EventRefundCancelled}, types)

		// A refund that fails on chain is reversed too; a completed one is not.
		failed := f.newRefund(t, p, 100, refundTo)
		done := f.newRefund(t, p, 200, refundTo)
		for _, x := range []domain.Refund{failed, done} {
			_, err := f.core.UpdateRefund(ctx, x.ID, func(r *domain.Refund) error { return r.TransitionTo(domain.RefundProcessing) })
			require.NoError(t, err)
		}
		_, err = f.core.UpdateRefund(ctx, failed.ID, func(r *domain.Refund) error {
			msg := "reverted"
			r.ErrorMessage = &msg
			return r.TransitionTo(domain.RefundFailed)
		})
		require.NoError(t, err)
		_, err = f.core.UpdateRefund(ctx, done.ID, func(r *domain.Refund) error {
			r.Receipt = &domain.RefundReceipt{RefundID: r.ID, Token: r.Token, SettledAmountAsset: r.AmountAsset, TxHash: "0xabc",
				TxBlockNumber: 7, TxTimestamp: t0, TxSenderAddress: refundTo, TxTotalCost: decimal.NewFromInt(21_000), CreatedAt: t0}
			return r.TransitionTo(domain.RefundCompleted)
		})
		require.NoError(t, err)
		assert.Equal(t, credited-200, f.balance(t))
		got, err := f.st.Read(ctx).RefundByID(done.ID, f.cat)
		require.NoError(t, err)
		require.NotNil(t, got.Receipt)
		assert.Equal(t, "0xabc", got.Receipt.TxHash)
		assert.Equal(t, got.AmountAsset.String(), got.Receipt.SettledAmountAsset.String())
	})
}

// What a change may not do: give a recipient other than with the claim, change one once given,
// alter the amounts, drop a required approval, approve what is not pending, sign what waits for
// its approval, fail without a reason or complete without a receipt.
func TestRefundChangeRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.completedPayment(t)
		other := "0x1111111111111111111111111111111111111111"
		refused := func(r domain.Refund, what string, change func(r *domain.Refund) error) {
			t.Helper()
			before, err := f.st.Read(ctx).RefundByID(r.ID, f.cat)
			require.NoError(t, err)
			_, err = f.core.UpdateRefund(ctx, r.ID, change)
			require.Error(t, err, what)
			after, err := f.st.Read(ctx).RefundByID(r.ID, f.cat)
			require.NoError(t, err)
			assert.Equal(t, before.Version, after.Version, "%s: nothing written", what)
		}
		claimed := f.newRefund(t, p, 100, refundTo)
		waiting := f.newRefund(t, p, 100, "")
		refused(claimed, "another recipient", func(r *domain.Refund) error { r.RecipientAddress = &other; return nil })
		refused(claimed, "a new amount", func(r *domain.Refund) error { r.AmountAsset = decimal.NewFromInt(1); return nil })
		refused(waiting, "a recipient without the move to pending", func(r *domain.Refund) error {
			src := domain.RecipientTyped
			r.RecipientAddress, r.RecipientSource = &other, &src
			return nil
		})
		refused(waiting, "pending without a recipient", func(r *domain.Refund) error { return r.TransitionTo(domain.RefundPending) })
		refused(claimed, "failed without a reason", func(r *domain.Refund) error { return r.TransitionTo(domain.RefundFailed) })
		refused(waiting, "an approval before the address", func(r *domain.Refund) error {
			now, id := t0, uuid.New()
			r.Approval.Required, r.Approval.ApprovedBy, r.Approval.ApprovedAt = true, &id, &now
			return nil
		})

		// A typed claim: approval required; it cannot be signed until given, nor dropped.
		typed, err := f.core.UpdateRefund(ctx, waiting.ID, func(r *domain.Refund) error {
			src := domain.RecipientTyped
			r.RecipientAddress, r.RecipientSource, r.Approval.Required = &other, &src, true
			return r.TransitionTo(domain.RefundPending)
		})
		require.NoError(t, err)
		assert.False(t, typed.Sendable())
		refused(typed, "signed while its approval waits", func(r *domain.Refund) error { return r.TransitionTo(domain.RefundProcessing) })
		refused(typed, "a required approval dropped", func(r *domain.Refund) error { r.Approval.Required = false; return nil })
		refused(typed, "an approval by nobody", func(r *domain.Refund) error { now := t0; r.Approval.ApprovedAt = &now; return nil })
		approver, email := uuid.New(), "ben@example.com"
		approved, err := f.core.UpdateRefund(ctx, typed.ID, func(r *domain.Refund) error {
			now := t0
			r.Approval.ApprovedBy, r.Approval.ApprovedByEmail, r.Approval.ApprovedAt = &approver, &email, &now
			return nil
		})
		require.NoError(t, err)
		assert.True(t, approved.Sendable())
		evs := f.events(t, typed.ID)
		assert.Equal(t, domain.EventRefundUpdated, evs[len(evs)-1].Type, "an approval is announced as an update")
		refused(approved, "an approval changed", func(r *domain.Refund) error { id := uuid.New(); r.Approval.ApprovedBy = &id; return nil })
		refused(approved, "completed without a receipt", func(r *domain.Refund) error {
			if err := r.TransitionTo(domain.RefundProcessing); err != nil {
				return err
			}
			return r.TransitionTo(domain.RefundCompleted)
		})
		_, err = f.core.UpdateRefund(ctx, approved.ID, func(r *domain.Refund) error { return r.TransitionTo(domain.RefundProcessing) })
		require.NoError(t, err)
		_, err = f.core.UpdateRefund(ctx, uuid.New(), func(*domain.Refund) error { return nil })
		assert.True(t, errors.Is(err, domain.ErrRefundNotFound))
	})
}
