package policy_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/policy"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/withdrawals"
)

const (
	backend   = "0x1111111111111111111111111111111111111111"
	payee     = "0x5aeda56215b167893e80b4fe645ba6d5bab767de"
	sanctuary = "0x7f367cc41522ce07553e823bf3be79a889debe1b" // listed in the test's sanctions file
)

// env is the policy on a real database, with a clock the test moves.
type env struct {
	ctx context.Context
	st  *store.Store
	pol *policy.Service
	wd  *withdrawals.Service
	m   domain.Merchant
	now *time.Time
}

func forEachBackend(t *testing.T, fn func(t *testing.T, e env)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, b))
		})
	}
}

func newEnv(t *testing.T, backendName string) env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(testdb.URL(t, backendName))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cat, err := chains.Load(st.Read(ctx), chains.Mainnet)
	require.NoError(t, err)
	ms := &merchants.Service{Store: st, Networks: chains.Mainnet, Catalog: cat, BackendWallet: backend, Now: clock}
	c, err := ms.Create(ctx, merchants.CreateInput{Name: "Acme", WithdrawalsEnabled: true, Mode: domain.ModeLive})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "sanctions.txt")
	require.NoError(t, os.WriteFile(file, []byte("# test list\n0x7F367CC41522CE07553E823BF3BE79A889DEBE1B\n"), 0o600))
	list, err := risk.LoadSanctionsFile(file)
	require.NoError(t, err)
	core := &lifecycle.Core{Store: st, Catalog: cat, Now: clock}
	wd := &withdrawals.Service{Store: st, Core: core, Catalog: cat, Now: clock, Controlled: []string{backend}}
	pol := &policy.Service{Store: st, Core: core, Catalog: cat, Withdrawals: wd, Sanctions: list, Now: clock}
	wd.Policy = pol
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error {
		return tx.AppendLedger(c.Merchant.ID, domain.ModeLive, store.LedgerPaymentCredit, 1_000_000, nil, nil, now.Add(-48*time.Hour))
	}))
	return env{ctx: ctx, st: st, pol: pol, wd: wd, m: c.Merchant, now: &now}
}

func (e env) set(t *testing.T, c policy.SettingsChange) {
	t.Helper()
	_, err := e.pol.UpdateSettings(e.ctx, e.m.ID, e.m.Mode, c)
	require.NoError(t, err)
}

func (e env) check(t *testing.T, o domain.Outflow) (domain.PolicyDecision, error) {
	t.Helper()
	var d domain.PolicyDecision
	err := e.st.InTx(e.ctx, func(tx *store.Tx) error {
		var err error
		d, err = e.pol.Check(e.ctx, tx, e.m, o)
		return err
	})
	return d, err
}

func (e env) withdraw(cents int64, to string) (domain.Withdrawal, error) {
	return e.wd.Create(e.ctx, e.m, withdrawals.CreateInput{AmountInCents: cents, ChainID: 8453, RecipientAddress: to}, nil)
}

func refusedWith(t *testing.T, err error, code domain.ErrorCode) {
	t.Helper()
	var r *domain.PolicyRefusal
	require.True(t, errors.As(err, &r), "want a refusal %s, got %v", code, err)
	assert.Equal(t, code, r.Code, r.Message)
}

func ptr[T any](v T) *T { return &v }

func out(kind domain.OutflowKind, cents int64, to string) domain.Outflow {
	return domain.Outflow{Kind: kind, Mode: domain.ModeLive, Cents: cents, ChainID: 8453, Recipient: to, CountsToday: true}
}

func TestApprovalThresholdIsStrictlyAbove(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		d, err := e.check(t, out(domain.OutflowWithdrawal, 100_000_000, payee))
		require.NoError(t, err)
		assert.False(t, d.ApprovalRequired, "approvals are off by default")
		e.set(t, policy.SettingsChange{ApprovalThresholdCents: ptr(int64(1_000))})
		for cents, want := range map[int64]bool{999: false, 1_000: false, 1_001: true} {
			d, err := e.check(t, out(domain.OutflowWithdrawal, cents, payee))
			require.NoError(t, err)
			assert.Equal(t, want, d.ApprovalRequired, "%d cents", cents)
		}
		typed := out(domain.OutflowRefund, 1, payee)
		typed.TypedAddress, typed.CountsToday = true, false
		d, err = e.check(t, typed)
		require.NoError(t, err)
		assert.True(t, d.ApprovalRequired, "a typed refund address always waits for a person")
		e.set(t, policy.SettingsChange{ClearApprovalThreshold: true})
		d, err = e.check(t, out(domain.OutflowWithdrawal, 1_001, payee))
		require.NoError(t, err)
		assert.True(t, d.ApprovalRequired, "turning approvals off waits out the cooling-off in force")
		*e.now = e.now.Add(24 * time.Hour)
		d, err = e.check(t, out(domain.OutflowWithdrawal, 1_001, payee))
		require.NoError(t, err)
		assert.False(t, d.ApprovalRequired, "null turns approvals off")
	})
}

func TestAllowlistAndCoolingOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(true)})
		_, err := e.check(t, out(domain.OutflowWithdrawal, 500, payee))
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook)
		_, err = e.check(t, out(domain.OutflowRefund, 500, payee))
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook) // a refund's recipientAddress is the merchant's choice
		claimed := out(domain.OutflowRefund, 500, payee)
		claimed.FromCustomer, claimed.CountsToday = true, false
		_, err = e.check(t, claimed)
		require.NoError(t, err, "a customer's claim: the address book is not asked")
		_, err = e.check(t, out(domain.OutflowRefund, 500, ""))
		require.NoError(t, err, "a refund awaiting its address")

		saved, err := e.pol.AddAddress(e.ctx, e.m, policy.NewAddress{Label: "Treasury", ChainID: 1, Address: payee})
		require.NoError(t, err)
		assert.Equal(t, e.now.Add(24*time.Hour), saved.UsableAt.UTC(), "the default cooling-off is 24 h")
		_, err = e.check(t, out(domain.OutflowWithdrawal, 500, payee))
		refusedWith(t, err, domain.CodeRecipientNotInAddressBook) // saved for Ethereum, not Base
		_, err = e.pol.AddAddress(e.ctx, e.m, policy.NewAddress{Label: "Treasury on Base", ChainID: 8453, Address: payee})
		require.NoError(t, err)
		_, err = e.check(t, out(domain.OutflowWithdrawal, 500, payee))
		refusedWith(t, err, domain.CodeRecipientCoolingOff)

		*e.now = e.now.Add(24*time.Hour - time.Microsecond)
		_, err = e.check(t, out(domain.OutflowWithdrawal, 500, payee))
		refusedWith(t, err, domain.CodeRecipientCoolingOff)
		*e.now = e.now.Add(time.Microsecond)
		_, err = e.check(t, out(domain.OutflowWithdrawal, 500, payee))
		require.NoError(t, err, "usable exactly when the cooling-off ends")

		e.set(t, policy.SettingsChange{AllowlistOnly: ptr(false)})
		*e.now = e.now.Add(24 * time.Hour) // a loosening waits out the cooling-off in force
		_, err = e.check(t, out(domain.OutflowWithdrawal, 500, "0x2222222222222222222222222222222222222222"))
		require.NoError(t, err, "without allowlistOnly any address is allowed")
	})
}

// The rolling window: a debit counts for 24 h from its creation, until its withdrawal is
// cancelled or fails; exactly the limit is allowed.
func TestDailyLimitIsARollingWindow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		e.set(t, policy.SettingsChange{DailyLimitCents: ptr(int64(1_000))})
		first, err := e.withdraw(600, payee)
		require.NoError(t, err)
		*e.now = e.now.Add(23 * time.Hour)
		_, err = e.withdraw(401, payee)
		refusedWith(t, err, domain.CodeDailyLimitExceeded)
		_, err = e.withdraw(400, payee)
		require.NoError(t, err, "exactly the limit")
		_, err = e.withdraw(100, payee)
		refusedWith(t, err, domain.CodeDailyLimitExceeded)
		later := out(domain.OutflowRefund, 5_000, payee)
		later.CountsToday = false
		_, err = e.check(t, later)
		require.NoError(t, err, "cents already counted are not counted again")

		*e.now = e.now.Add(time.Hour) // the 600 is 24 h old: out of the window
		_, err = e.withdraw(601, payee)
		refusedWith(t, err, domain.CodeDailyLimitExceeded)
		third, err := e.withdraw(600, payee)
		require.NoError(t, err)

		_, err = e.wd.Cancel(e.ctx, e.m.ID, e.m.Mode, third.ID, nil)
		require.NoError(t, err)
		_, err = e.withdraw(600, payee)
		require.NoError(t, err, "a cancelled withdrawal gives its cents back to the day")

		_, err = e.check(t, domain.Outflow{Kind: domain.OutflowWithdrawal, Mode: domain.ModeTest, Cents: 1_000, ChainID: 84532, Recipient: payee, CountsToday: true})
		require.NoError(t, err, "each mode has its own day: test money never uses up the live limit")
		_ = first
	})
}

// A sanctioned recipient is refused, and the audit entry outlives the refusal's rollback.
func TestSanctionedRecipientIsAuditedAfterTheRollback(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		ctx := audit.WithActor(e.ctx, audit.Actor{Kind: audit.KindService, ID: "key-1", Label: "sk_live_ab12"})
		_, err := e.wd.Create(ctx, e.m, withdrawals.CreateInput{AmountInCents: 500, ChainID: 8453,
			RecipientAddress: "0x7F367cc41522ce07553e823bf3be79a889debe1b"}, nil)
		refusedWith(t, err, domain.CodeRecipientSanctioned)
		list, _, err := e.wd.List(e.ctx, e.m, "", false, 10, 0)
		require.NoError(t, err)
		assert.Empty(t, list, "nothing created")
		bal, err := e.st.Read(e.ctx).AvailableBalance(e.m.ID, domain.ModeLive)
		require.NoError(t, err)
		assert.Equal(t, int64(1_000_000), bal, "nothing debited")

		_, err = e.pol.AddAddress(ctx, e.m, policy.NewAddress{Label: "x", ChainID: 8453, Address: sanctuary})
		refusedWith(t, err, domain.CodeRecipientSanctioned)

		entries, _, err := e.st.Read(e.ctx).AuditLog(store.AuditFilter{MerchantID: e.m.ID, Action: string(audit.RecipientSanctioned)})
		require.NoError(t, err)
		require.Len(t, entries, 2)
		assert.Equal(t, "address_book_entry", entries[0].TargetType)
		assert.Equal(t, "withdrawal", entries[1].TargetType)
		assert.Equal(t, sanctuary, entries[1].TargetID)
		assert.Equal(t, "sk_live_ab12", entries[1].ActorLabel, "the actor who tried")
		assert.EqualValues(t, 500, entries[1].Details["amountInCents"])
	})
}

// An approval is a change of the lifecycle core: given once, never changed, and nothing waiting
// for one is ever moved to processing.
func TestApprovalsThroughTheCore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		creator, approver := uuid.New(), uuid.New()
		asCreator := audit.WithActor(e.ctx, audit.Actor{Kind: audit.KindPerson, ID: creator.String(), Label: "ann@shop.example"})
		asApprover := audit.WithActor(e.ctx, audit.Actor{Kind: audit.KindPerson, ID: approver.String(), Label: "bob@shop.example"})
		asKey := audit.WithActor(e.ctx, audit.Actor{Kind: audit.KindService, ID: "k", Label: "sk_live_x"})
		e.set(t, policy.SettingsChange{ApprovalThresholdCents: ptr(int64(1_000))})
		w, err := e.wd.Create(asCreator, e.m, withdrawals.CreateInput{AmountInCents: 1_001, ChainID: 8453, RecipientAddress: payee}, nil)
		require.NoError(t, err)
		require.True(t, w.Approval.Waiting())
		assert.Equal(t, &creator, w.Approval.CreatedBy)

		pending := func() []uuid.UUID {
			ids, err := e.st.Read(e.ctx).PendingWithdrawals(8453, 10)
			require.NoError(t, err)
			return ids
		}
		assert.NotContains(t, pending(), w.ID, "the payout manager never sees one awaiting approval")
		_, err = e.pol.Core.UpdateWithdrawal(e.ctx, w.ID, func(w *domain.Withdrawal) error { return w.TransitionTo(domain.WithdrawalProcessing) })
		var te *domain.TransitionError
		require.ErrorAs(t, err, &te, "the core refuses to move it to processing")

		_, err = e.pol.ApproveWithdrawal(asCreator, e.m, w.ID.String())
		assert.ErrorIs(t, err, domain.ErrApprovalByCreator)
		_, err = e.pol.ApproveWithdrawal(asKey, e.m, w.ID.String())
		assert.ErrorIs(t, err, domain.ErrApprovalNeedsPerson)
		_, err = e.pol.ApproveWithdrawal(asApprover, domain.Merchant{ID: uuid.New(), Mode: domain.ModeLive}, w.ID.String())
		assert.ErrorIs(t, err, domain.ErrWithdrawalNotFound, "another merchant's")
		got, err := e.pol.ApproveWithdrawal(asApprover, e.m, w.ID.String())
		require.NoError(t, err)
		assert.False(t, got.Approval.Waiting())
		assert.Equal(t, "bob@shop.example", *got.Approval.ApprovedByEmail)
		assert.Contains(t, pending(), w.ID, "approved: the payout manager sends it")
		_, err = e.pol.ApproveWithdrawal(asApprover, e.m, w.ID.String())
		assert.ErrorIs(t, err, domain.ErrNotAwaitingApproval)

		_, err = e.pol.Core.UpdateWithdrawal(e.ctx, w.ID, func(w *domain.Withdrawal) error {
			w.Approval.ApprovedByEmail = ptr("mallory@shop.example")
			return nil
		})
		require.Error(t, err, "an approval is never changed")
		events, err := e.st.Read(e.ctx).EntityEvents(w.ID)
		require.NoError(t, err)
		require.Len(t, events, 2)
		assert.Equal(t, domain.EventWithdrawalUpdated, events[1].Type, "the approval is announced with the change")

		// A rejection cancels through the core: the balance comes back; its creator may reject.
		r, err := e.wd.Create(asCreator, e.m, withdrawals.CreateInput{AmountInCents: 5_000, ChainID: 8453, RecipientAddress: payee}, nil)
		require.NoError(t, err)
		_, err = e.pol.RejectWithdrawal(asKey, e.m, r.ID.String())
		assert.ErrorIs(t, err, domain.ErrApprovalNeedsPerson)
		rejected, err := e.pol.RejectWithdrawal(asCreator, e.m, r.ID.String())
		require.NoError(t, err)
		assert.Equal(t, domain.WithdrawalCancelled, rejected.Status)
		bal, err := e.st.Read(e.ctx).AvailableBalance(e.m.ID, domain.ModeLive)
		require.NoError(t, err)
		assert.Equal(t, int64(1_000_000-1_001), bal)
		_, err = e.pol.ApproveWithdrawal(asApprover, e.m, r.ID.String())
		assert.ErrorIs(t, err, domain.ErrNotAwaitingApproval, "a rejected one is never approved")
	})
}

func TestSettingsValidationChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e env) {
		s, err := e.pol.SettingsOf(e.ctx, e.m.ID, e.m.Mode)
		require.NoError(t, err)
		assert.Equal(t, domain.DefaultPayoutSettings(e.m.ID, e.m.Mode), s)
		for _, c := range []policy.SettingsChange{
			{ApprovalThresholdCents: ptr(int64(-1))}, {DailyLimitCents: ptr(int64(0))}, {AddressCoolingOffHours: ptr(int32(721))},
			{AddressCoolingOffHours: ptr(int32(-1))}, {RefundClaimDays: ptr(int32(0))}, {RefundClaimDays: ptr(int32(366))},
			{DailyLimitCents: ptr(int64(100_000_000_001)), AllowlistOnly: ptr(true)},
		} {
			_, err := e.pol.UpdateSettings(e.ctx, e.m.ID, e.m.Mode, c)
			var inv *domain.InvalidInputError
			require.ErrorAs(t, err, &inv)
		}
		s, err = e.pol.SettingsOf(e.ctx, e.m.ID, e.m.Mode)
		require.NoError(t, err)
		assert.Equal(t, domain.DefaultPayoutSettings(e.m.ID, e.m.Mode), s, "nothing changed")
		entries, _, err := e.st.Read(e.ctx).AuditLog(store.AuditFilter{MerchantID: e.m.ID, Action: string(audit.PayoutSettingsUpdated)})
		require.NoError(t, err)
		assert.Empty(t, entries)

		e.set(t, policy.SettingsChange{AddressCoolingOffHours: ptr(int32(0)), DailyLimitCents: ptr(int64(5_000))})
		entries, _, err = e.st.Read(e.ctx).AuditLog(store.AuditFilter{MerchantID: e.m.ID, Action: string(audit.PayoutSettingsUpdated)})
		require.NoError(t, err)
		require.Len(t, entries, 1)
		assert.EqualValues(t, 24, entries[0].Details["before"].(map[string]any)["addressCoolingOffHours"])
		assert.EqualValues(t, 0, entries[0].Details["after"].(map[string]any)["addressCoolingOffHours"])
		assert.EqualValues(t, 5_000, entries[0].Details["after"].(map[string]any)["dailyLimitCents"])
		*e.now = e.now.Add(24 * time.Hour) // the shorter cooling-off waits out the 24 h in force
		saved, err := e.pol.AddAddress(e.ctx, e.m, policy.NewAddress{Label: "Now", ChainID: 8453, Address: payee})
		require.NoError(t, err)
		assert.Equal(t, saved.CreatedAt, saved.UsableAt, "0 h: usable at once")
	})
}
