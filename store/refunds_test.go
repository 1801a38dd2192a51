package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// refundFixture writes refunds straight through the store (the lifecycle core's writes), to
// check what the store itself keeps and refuses.
type refundFixture struct {
	t   *testing.T
	st  *store.Store
	cat domain.Catalog
	m   domain.Merchant
	p   domain.Payment
}

func newRefundFixture(t *testing.T, st *store.Store) refundFixture {
	cat := loadCatalog(t, st)
	m := createMerchant(t, st, "Refunds", "refunds")
	p := settle(t, st, insertPayment(t, st, cat, m, paymentSpec{Amount: 10_000}), "0xab", "0x5aeda56215b167893e80b4fe645ba6d5bab767de")
	return refundFixture{t: t, st: st, cat: cat, m: m, p: p}
}

func (f refundFixture) insert(status domain.RefundStatus, cents int64, edit func(r *domain.Refund)) domain.Refund {
	f.t.Helper()
	tok := f.p.Receipt.Token
	r := domain.Refund{ID: uuid.Must(uuid.NewV7()), MerchantID: f.m.ID, PaymentID: f.p.ID, Mode: domain.ModeLive, Chain: tok.Chain, Token: tok,
		AmountInCents: cents, AmountAsset: decimal.NewFromInt(cents).Shift(4), Status: status, CreatedAt: t0, UpdatedAt: t0, Version: 1}
	if status != domain.RefundAwaitingAddress && status != domain.RefundCancelled {
		to, src := "0x5aeda56215b167893e80b4fe645ba6d5bab767de", domain.RecipientFromMerchant
		r.RecipientAddress, r.RecipientSource = &to, &src
	}
	if edit != nil {
		edit(&r)
	}
	require.NoError(f.t, f.st.InTx(context.Background(), func(tx *store.Tx) error { return tx.InsertRefund(r) }))
	return r
}

func TestRefundRowsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newRefundFixture(t, st)
		approver, email, at := uuid.New(), "ben@example.com", t0.Add(time.Minute)
		fee := dec(t, bigAmount)
		want := f.insert(domain.RefundPending, 123, func(r *domain.Refund) {
			r.AmountAsset = dec(t, bigAmount) // beyond int64: kept exactly
			r.SubtractNetworkFee, r.NetworkFeeAsset, r.Reason, r.Overpayment = true, &fee, ptr("broken"), true
			r.Approval = domain.Approval{Required: true, ApprovedBy: &approver, ApprovedByEmail: &email, ApprovedAt: &at, CreatedBy: &approver}
		})
		got, err := st.Read(ctx).GetRefund(f.m.ID, domain.ModeLive, want.ID, f.cat)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		_, err = st.Read(ctx).GetRefund(f.m.ID, domain.ModeTest, want.ID, f.cat)
		assert.ErrorIs(t, err, store.ErrNotFound, "another mode's")
		_, err = st.Read(ctx).GetRefund(uuid.New(), domain.ModeLive, want.ID, f.cat)
		assert.ErrorIs(t, err, store.ErrNotFound, "another merchant's")
		mid, err := st.Read(ctx).RefundMerchant(want.ID)
		require.NoError(t, err)
		assert.Equal(t, f.m.ID, mid)

		// A refund awaits its address exactly when it has none (the table's CHECK).
		err = st.InTx(ctx, func(tx *store.Tx) error {
			r := want
			r.ID, r.Overpayment, r.RecipientAddress, r.RecipientSource = uuid.New(), false, nil, nil
			return tx.InsertRefund(r)
		})
		assert.Error(t, err, "pending without a recipient")

		// The ledger books one debit and one reversal per refund.
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			return tx.AppendRefundLedger(f.m.ID, domain.ModeLive, store.LedgerRefundDebit, -123, want.ID, t0)
		}))
		err = st.InTx(ctx, func(tx *store.Tx) error {
			return tx.AppendRefundLedger(f.m.ID, domain.ModeLive, store.LedgerRefundDebit, -123, want.ID, t0)
		})
		assert.ErrorIs(t, err, store.ErrConflict)
		before, err := st.Read(ctx).AvailableBalance(f.m.ID, domain.ModeLive)
		require.NoError(t, err)
		require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
			return tx.AppendRefundLedger(f.m.ID, domain.ModeLive, store.LedgerRefundReversal, 123, want.ID, t0)
		}))
		after, err := st.Read(ctx).AvailableBalance(f.m.ID, domain.ModeLive)
		require.NoError(t, err)
		assert.Equal(t, before+123, after)
	})
}

func TestRefundQueries(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newRefundFixture(t, st)
		now := t0.Add(time.Hour)
		sendable := f.insert(domain.RefundPending, 100, nil)
		waiting := f.insert(domain.RefundPending, 200, func(r *domain.Refund) { r.Approval.Required = true })
		claim := f.insert(domain.RefundAwaitingAddress, 300, func(r *domain.Refund) { r.ClaimExpiresAt = ptr(now.Add(-time.Second)) })
		later := f.insert(domain.RefundAwaitingAddress, 400, func(r *domain.Refund) { r.ClaimExpiresAt = ptr(now.Add(time.Second)) })
		cancelled := f.insert(domain.RefundCancelled, 500, nil)
		approved := f.insert(domain.RefundPending, 600, func(r *domain.Refund) {
			id := uuid.New()
			r.Approval = domain.Approval{Required: true, ApprovedBy: &id, ApprovedAt: ptr(t0)}
		})

		rd := st.Read(ctx)
		ids, err := rd.PendingRefunds(f.p.Receipt.Token.Chain.ID, 10)
		require.NoError(t, err)
		assert.Equal(t, []uuid.UUID{sendable.ID, approved.ID}, ids, "never one waiting for its approval or its address")
		ids, err = rd.PendingRefunds(8453, 10)
		require.NoError(t, err)
		assert.Empty(t, ids, "another chain's")
		due, err := rd.DueRefundClaims(now, 10)
		require.NoError(t, err)
		assert.Equal(t, []uuid.UUID{claim.ID}, due)

		sum, err := rd.RefundedAsset(f.p.ID)
		require.NoError(t, err)
		assert.Equal(t, decimal.NewFromInt(100+200+300+400+600).Shift(4).String(), sum.String(), "cancelled ones excluded")
		p, err := rd.PaymentByID(f.p.ID, f.cat)
		require.NoError(t, err)
		assert.Equal(t, int64(100+200+300+400+600), p.AmountRefundedCents)

		list, total, err := rd.ListRefunds(store.RefundFilter{MerchantID: f.m.ID, Mode: domain.ModeLive, Limit: 2}, f.cat)
		require.NoError(t, err)
		assert.EqualValues(t, 6, total)
		assert.Equal(t, []uuid.UUID{approved.ID, cancelled.ID}, []uuid.UUID{list[0].ID, list[1].ID}, "newest first")
		yes, no := true, false
		list, total, err = rd.ListRefunds(store.RefundFilter{MerchantID: f.m.ID, Mode: domain.ModeLive, AwaitingApproval: &yes, Limit: 10}, f.cat)
		require.NoError(t, err)
		require.EqualValues(t, 1, total)
		assert.Equal(t, waiting.ID, list[0].ID)
		_, total, err = rd.ListRefunds(store.RefundFilter{MerchantID: f.m.ID, Mode: domain.ModeLive, AwaitingApproval: &no, Limit: 10}, f.cat)
		require.NoError(t, err)
		assert.EqualValues(t, 5, total)
		list, total, err = rd.ListRefunds(store.RefundFilter{MerchantID: f.m.ID, Mode: domain.ModeLive, Status: domain.RefundAwaitingAddress,
			PaymentID: &f.p.ID, Limit: 10}, f.cat)
		require.NoError(t, err)
		assert.EqualValues(t, 2, total)
		assert.Equal(t, later.ID, list[0].ID)
		_, total, err = rd.ListRefunds(store.RefundFilter{MerchantID: f.m.ID, Mode: domain.ModeTest, Limit: 10}, f.cat)
		require.NoError(t, err)
		assert.EqualValues(t, 0, total, "another mode's")

		// One overpayment refund alive per payment.
		_, err = rd.LiveOverpaymentRefund(f.p.ID, decimal.NewFromInt(-1))
		assert.ErrorIs(t, err, store.ErrNotFound)
		over := f.insert(domain.RefundAwaitingAddress, 1, func(r *domain.Refund) { r.Overpayment = true })
		id, err := rd.LiveOverpaymentRefund(f.p.ID, decimal.NewFromInt(-1))
		require.NoError(t, err)
		assert.Equal(t, over.ID, id)
		err = st.InTx(ctx, func(tx *store.Tx) error {
			r := over
			r.ID = uuid.New()
			return tx.InsertRefund(r)
		})
		assert.True(t, errors.Is(err, store.ErrConflict), "%v", err)
		f.insert(domain.RefundCancelled, 1, func(r *domain.Refund) { r.Overpayment = true }) // a cancelled one does not count
	})
}
