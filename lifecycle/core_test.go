package lifecycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/store"
)

// t0 is the fixtures' clock: UTC, microsecond precision (what both backends store exactly).
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

type fixture struct {
	st       *store.Store
	core     *lifecycle.Core
	merchant domain.Merchant
	cat      domain.Catalog
	clock    *time.Time
}

func eachBackend(t *testing.T, fn func(t *testing.T, f fixture)) {
	t.Helper()
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			fn(t, newFixture(t, backend))
		})
	}
}

func newFixture(t *testing.T, backend string) fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	cat, err := chains.Load(st.Read(ctx), chains.All)
	require.NoError(t, err)
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Acme", ShortName: "Acme", WithdrawalsEnabled: true, CreatedAt: t0}
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	clock := t0
	core := &lifecycle.Core{Store: st, Catalog: cat, Now: func() time.Time { return clock }}
	return fixture{st: st, core: core, merchant: m, cat: cat, clock: &clock}
}

// newPayment creates a pending payment with two active quotes through the core.
func (f fixture) newPayment(t *testing.T) domain.Payment {
	t.Helper()
	return f.newPaymentOn(t, 8453)
}

// newPaymentOn is newPayment quoted in USDC and ETH on each of chains.
func (f fixture) newPaymentOn(t *testing.T, chains ...int64) domain.Payment {
	t.Helper()
	var tokens []domain.Token
	for _, c := range chains {
		for _, sym := range []string{"USDC", "ETH"} {
			tk, ok := f.cat.AcceptedToken(c, sym)
			require.True(t, ok, "%s on %d", sym, c)
			tokens = append(tokens, tk)
		}
	}
	now := *f.clock
	id := uuid.Must(uuid.NewV7())
	due := int64(1005)
	order := "order-" + id.String()
	p := domain.Payment{ID: id, Merchant: f.merchant, Mode: domain.ModeLive, Type: domain.TypePayment, AmountInCents: 1000, AmountDueCents: due,
		AmountMerchantNetCents: 1000, Currency: "USD", Status: domain.PaymentPending, OrderID: &order, SecretHash: id[:],
		ExpiresAt: now.Add(24 * time.Hour), CreatedAt: now, UpdatedAt: now}
	for _, tk := range tokens {
		p.Quotes = append(p.Quotes, domain.Quote{ID: uuid.Must(uuid.NewV7()), PaymentID: id, Token: tk,
			ExpectedAmountAsset: decimal.NewFromInt(10_050_000), RateUSDAsset: decimal.NewFromInt(1), AmountDueCents: &due,
			ConvenienceFeeCents: 5, ExpiresAt: now.Add(15 * time.Minute), Status: domain.QuoteActive, CreatedAt: now})
	}
	require.NoError(t, f.st.InTx(context.Background(), func(tx *store.Tx) error {
		idx, err := tx.AllocateDerivationIndex()
		if err != nil {
			return err
		}
		p.DepositAddress = domain.DepositAddress{ID: uuid.Must(uuid.NewV7()), MerchantID: f.merchant.ID, PaymentID: &id,
			DerivationIndex: idx, Address: fmt.Sprintf("0x%040x", idx+1), CreatedAt: now}
		if err := tx.InsertDepositAddress(p.DepositAddress); err != nil {
			return err
		}
		return f.core.CreatePayment(tx, &p)
	}))
	return p
}

func (f fixture) newWithdrawal(t *testing.T, cents int64) domain.Withdrawal {
	t.Helper()
	usdc, ok := f.cat.AcceptedToken(8453, "USDC")
	require.True(t, ok)
	now := *f.clock
	w := domain.Withdrawal{ID: uuid.Must(uuid.NewV7()), MerchantID: f.merchant.ID, Mode: domain.ModeLive, AmountInCents: cents, Chain: usdc.Chain,
		Token: usdc, RecipientAddress: "0x9858effd232b4033e47d90003d41ec34ecaeda94", Status: domain.WithdrawalPending,
		Currency: "USD", CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.st.InTx(context.Background(), func(tx *store.Tx) error { return f.core.CreateWithdrawal(tx, &w) }))
	return w
}

func (f fixture) events(t *testing.T, id uuid.UUID) []domain.Event {
	t.Helper()
	evs, err := f.st.Read(context.Background()).EntityEvents(id)
	require.NoError(t, err)
	return evs
}

func (f fixture) balance(t *testing.T) int64 { return f.modeBalance(t, domain.ModeLive) }

// movePayment is the closure that takes a payment to `to`, with what each state requires:
// a receipt to complete, no active quote left in a terminal state.
func movePayment(to domain.PaymentStatus) lifecycle.PaymentChange {
	return func(p *domain.Payment) error {
		if err := p.TransitionTo(to); err != nil {
			return err
		}
		if to == domain.PaymentCompleted {
			hash, by := "0x"+fmt.Sprintf("%064x", 7), domain.ProcessedByManual
			p.Receipt = &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: p.Quotes[0].ID, Token: p.Quotes[0].Token,
				SettledAmountAsset: p.Quotes[0].ExpectedAmountAsset, SettledAmountUSD: decimal.RequireFromString("10.05"),
				TxHash: &hash, ProcessedBy: &by, CreatedAt: p.CreatedAt}
			fee, mfee, sfee := int64(5), int64(10), int64(0)
			p.ConvenienceFeeCents, p.MerchantFeeCents, p.SwapFeeCents = &fee, &mfee, &sfee
			p.AmountMerchantNetCents = p.AmountInCents - mfee
		}
		if to.Terminal() {
			for i := range p.Quotes {
				next := domain.QuoteExpired
				if to == domain.PaymentCompleted && i == 0 {
					next = domain.QuoteUsed
				}
				if p.Quotes[i].Status == domain.QuoteActive {
					if err := p.Quotes[i].TransitionTo(next); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
}

// The transitions the API's lifecycle allows, written out here independently of domain/states.go.
var wantPayment = map[domain.PaymentStatus][]domain.PaymentStatus{
	domain.PaymentPending:    {domain.PaymentProcessing, domain.PaymentCompleted, domain.PaymentExpired, domain.PaymentFailed, domain.PaymentCancelled},
	domain.PaymentProcessing: {domain.PaymentPending, domain.PaymentCompleted, domain.PaymentExpired, domain.PaymentFailed},
}

// pathTo is a sequence of allowed transitions from pending to each state.
var pathTo = map[domain.PaymentStatus][]domain.PaymentStatus{
	domain.PaymentPending:    nil,
	domain.PaymentProcessing: {domain.PaymentProcessing},
	domain.PaymentCompleted:  {domain.PaymentProcessing, domain.PaymentCompleted},
	domain.PaymentFailed:     {domain.PaymentFailed},
	domain.PaymentExpired:    {domain.PaymentProcessing, domain.PaymentExpired},
	domain.PaymentCancelled:  {domain.PaymentCancelled},
}

func TestPaymentTransitionTable(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		for _, from := range domain.PaymentStatuses() {
			for _, to := range domain.PaymentStatuses() {
				allowed := contains(wantPayment[from], to)
				require.Equal(t, allowed, from.CanTransitionTo(to), "table %s → %s", from, to)
				t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
					p := f.newPayment(t)
					for _, step := range pathTo[from] {
						_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(step))
						require.NoError(t, err, "path to %s: %s", from, step)
					}
					before := f.events(t, p.ID)
					balance := f.balance(t)
					got, err := f.core.UpdatePayment(ctx, p.ID, movePayment(to))
					after := f.events(t, p.ID)
					if !allowed {
						var te *domain.TransitionError
						require.ErrorAs(t, err, &te)
						assert.Equal(t, string(from), te.From)
						assert.Len(t, after, len(before), "a refused change writes no event")
						assert.Equal(t, balance, f.balance(t), "a refused change books nothing")
						stored, err := f.st.Read(ctx).GetPayment(f.merchant.ID, domain.ModeLive, p.ID, f.cat)
						require.NoError(t, err)
						assert.Equal(t, from, stored.Status, "a refused change writes nothing")
						return
					}
					require.NoError(t, err)
					assert.Equal(t, to, got.Status)
					require.Len(t, after, len(before)+1, "one event per committed change")
					ev := after[len(after)-1]
					assert.Equal(t, domain.PaymentStatusEvent(to), ev.Type)
					assert.Equal(t, got.Version, ev.Sequence)
					var snap map[string]any
					require.NoError(t, json.Unmarshal(ev.Payload, &snap))
					assert.Equal(t, string(to), snap["status"])
					assert.Equal(t, string(from), snap["previousStatus"])
					if to == domain.PaymentCompleted {
						assert.Equal(t, balance+990, f.balance(t), "completion credits the net once")
					} else {
						assert.Equal(t, balance, f.balance(t))
					}
				})
			}
		}
	})
}

func contains[T comparable](xs []T, x T) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

var wantQuote = map[domain.QuoteStatus][]domain.QuoteStatus{
	domain.QuoteActive:  {domain.QuoteUsed, domain.QuoteExpired, domain.QuoteFailed},
	domain.QuoteExpired: {domain.QuoteUsed}, // a late transfer while the payment is open
}

func TestQuoteTransitionTable(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		setQuote := func(s domain.QuoteStatus) lifecycle.PaymentChange {
			return func(p *domain.Payment) error { p.Quotes[0].Status = s; return nil } // checked by the core, not here
		}
		for _, from := range domain.QuoteStatuses() {
			for _, to := range domain.QuoteStatuses() {
				allowed := contains(wantQuote[from], to)
				require.Equal(t, allowed, from.CanTransitionTo(to), "table %s → %s", from, to)
				t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
					p := f.newPayment(t)
					if from != domain.QuoteActive {
						_, err := f.core.UpdatePayment(ctx, p.ID, setQuote(from))
						require.NoError(t, err)
					}
					n := len(f.events(t, p.ID))
					_, err := f.core.UpdatePayment(ctx, p.ID, setQuote(to))
					if from == to {
						require.NoError(t, err, "no change is no transition")
						assert.Len(t, f.events(t, p.ID), n, "nothing changed: no event")
						return
					}
					if !allowed {
						var te *domain.TransitionError
						require.ErrorAs(t, err, &te)
						assert.Equal(t, "quote", te.Entity)
						assert.Len(t, f.events(t, p.ID), n)
						return
					}
					require.NoError(t, err)
					evs := f.events(t, p.ID)
					require.Len(t, evs, n+1)
					if to == domain.QuoteExpired {
						assert.Equal(t, domain.EventPaymentQuotesExpired, evs[n].Type)
					} else {
						assert.Equal(t, domain.EventPaymentUpdated, evs[n].Type)
					}
				})
			}
		}
	})
}

var wantWithdrawal = map[domain.WithdrawalStatus][]domain.WithdrawalStatus{
	domain.WithdrawalPending:    {domain.WithdrawalProcessing, domain.WithdrawalCancelled},
	domain.WithdrawalProcessing: {domain.WithdrawalCompleted, domain.WithdrawalFailed},
}

var withdrawalPath = map[domain.WithdrawalStatus][]domain.WithdrawalStatus{
	domain.WithdrawalPending:    nil,
	domain.WithdrawalProcessing: {domain.WithdrawalProcessing},
	domain.WithdrawalCompleted:  {domain.WithdrawalProcessing, domain.WithdrawalCompleted},
	domain.WithdrawalFailed:     {domain.WithdrawalProcessing, domain.WithdrawalFailed},
	domain.WithdrawalCancelled:  {domain.WithdrawalCancelled},
}

func moveWithdrawal(to domain.WithdrawalStatus) lifecycle.WithdrawalChange {
	return func(w *domain.Withdrawal) error {
		if err := w.TransitionTo(to); err != nil {
			return err
		}
		switch to {
		case domain.WithdrawalFailed:
			msg := "receipt status 0: reverted"
			w.ErrorMessage = &msg
		case domain.WithdrawalCompleted:
			w.Receipt = &domain.WithdrawalReceipt{WithdrawalID: w.ID, Token: w.Token, SettledAmountAsset: decimal.NewFromInt(5_000_000),
				SettledAmountUSD: decimal.NewFromInt(5), TxHash: "0x" + fmt.Sprintf("%064x", 9), TxBlockNumber: 1, TxTimestamp: w.CreatedAt,
				TxSenderAddress: "0x1111111111111111111111111111111111111111", TxGasUsed: 21000, TxTotalCost: decimal.NewFromInt(1),
				ProcessedBy: "cron", CreatedAt: w.CreatedAt}
		}
		return nil
	}
}

func TestWithdrawalTransitionTable(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		for _, from := range domain.WithdrawalStatuses() {
			for _, to := range domain.WithdrawalStatuses() {
				allowed := contains(wantWithdrawal[from], to)
				require.Equal(t, allowed, from.CanTransitionTo(to), "table %s → %s", from, to)
				t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
					start := f.balance(t)
					w := f.newWithdrawal(t, 500)
					assert.Equal(t, start-500, f.balance(t), "created: debited")
					for _, step := range withdrawalPath[from] {
						_, err := f.core.UpdateWithdrawal(ctx, w.ID, moveWithdrawal(step))
						require.NoError(t, err)
					}
					n, balance := len(f.events(t, w.ID)), f.balance(t)
					got, err := f.core.UpdateWithdrawal(ctx, w.ID, moveWithdrawal(to))
					if !allowed {
						var te *domain.TransitionError
						require.ErrorAs(t, err, &te)
						assert.Len(t, f.events(t, w.ID), n)
						assert.Equal(t, balance, f.balance(t))
						return
					}
					require.NoError(t, err)
					assert.Equal(t, to, got.Status)
					evs := f.events(t, w.ID)
					require.Len(t, evs, n+1)
					assert.Equal(t, domain.WithdrawalStatusEvent(to), evs[n].Type)
					assert.Equal(t, got.Version, evs[n].Sequence)
					if to == domain.WithdrawalFailed || to == domain.WithdrawalCancelled {
						assert.Equal(t, start, f.balance(t), "failure or cancellation restores the balance")
					} else {
						assert.Equal(t, start-500, f.balance(t))
					}
				})
			}
		}
	})
}

// Events are numbered per entity, in order, starting with the creation.
func TestEventsAreOrderedPerEntity(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		for _, s := range []domain.PaymentStatus{domain.PaymentProcessing, domain.PaymentPending, domain.PaymentProcessing, domain.PaymentCompleted} {
			*f.clock = f.clock.Add(time.Second)
			_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(s))
			require.NoError(t, err)
		}
		evs := f.events(t, p.ID)
		var types []domain.EventType
		for i, ev := range evs {
			types = append(types, ev.Type)
			assert.Equal(t, int64(i+1), ev.Sequence)
			assert.Equal(t, p.ID, ev.EntityID)
			assert.Equal(t, f.merchant.ID, ev.MerchantID)
			assert.Regexp(t, `^evt_[0-9a-f]{32}$`, ev.ID)
		}
		assert.Equal(t, []domain.EventType{"payment.created", "payment.processing", "payment.pending", "payment.processing", "payment.completed"}, types)
	})
}

// A change commits with its event and its ledger entry, or not at all: when the credit cannot
// be booked, the status and the event roll back with it.
func TestChangeEventAndLedgerCommitTogether(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		id := p.ID
		require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
			return tx.AppendLedger(f.merchant.ID, domain.ModeTest, store.LedgerPaymentCredit, 1, &id, nil, t0) // a credit already booked
		}))
		_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(domain.PaymentCompleted))
		require.ErrorIs(t, err, store.ErrConflict)
		stored, err := f.st.Read(ctx).GetPayment(f.merchant.ID, domain.ModeLive, p.ID, f.cat)
		require.NoError(t, err)
		assert.Equal(t, domain.PaymentPending, stored.Status)
		assert.Nil(t, stored.Receipt)
		assert.Len(t, f.events(t, p.ID), 1, "only payment.created")

		boom := errors.New("closure refused")
		_, err = f.core.UpdatePayment(ctx, p.ID, func(p *domain.Payment) error { p.Status = domain.PaymentFailed; return boom })
		require.ErrorIs(t, err, boom)
		assert.Len(t, f.events(t, p.ID), 1)
	})
}

// The core checks what the closure left, not how it got there: a direct assignment of a
// forbidden status is refused like TransitionTo would refuse it.
func TestCoreRefusesDirectAssignments(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		p := f.newPayment(t)
		_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(domain.PaymentCancelled))
		require.NoError(t, err)
		_, err = f.core.UpdatePayment(ctx, p.ID, func(p *domain.Payment) error { p.Status = domain.PaymentPending; return nil })
		var te *domain.TransitionError
		require.ErrorAs(t, err, &te)

		q := f.newPayment(t)
		_, err = f.core.UpdatePayment(ctx, q.ID, func(p *domain.Payment) error { p.Status = domain.PaymentCompleted; return nil })
		require.Error(t, err, "completing without a receipt")
		_, err = f.core.UpdatePayment(ctx, q.ID, func(p *domain.Payment) error { p.Status = domain.PaymentExpired; return nil })
		require.Error(t, err, "a terminal payment with an active quote")

		w := f.newWithdrawal(t, 100)
		_, err = f.core.UpdateWithdrawal(ctx, w.ID, func(w *domain.Withdrawal) error { w.Status = domain.WithdrawalCompleted; return nil })
		require.ErrorAs(t, err, &te, "pending cannot complete without being sent")
		_, err = f.core.UpdateWithdrawal(ctx, w.ID, moveWithdrawal(domain.WithdrawalProcessing))
		require.NoError(t, err)
		_, err = f.core.UpdateWithdrawal(ctx, w.ID, func(w *domain.Withdrawal) error { w.Status = domain.WithdrawalFailed; return nil })
		require.Error(t, err, "failing without an errorMessage")

		_, err = f.core.UpdatePayment(ctx, uuid.Must(uuid.NewV7()), movePayment(domain.PaymentFailed))
		assert.ErrorIs(t, err, domain.ErrPaymentNotFound)
		_, err = f.core.UpdateWithdrawal(ctx, uuid.Must(uuid.NewV7()), moveWithdrawal(domain.WithdrawalCancelled))
		assert.ErrorIs(t, err, domain.ErrWithdrawalNotFound)
	})
}

// What the store would not write, a change may not alter: the ledger and the event would
// otherwise see a value the database never holds.
func TestCoreRefusesChangesToFrozenFields(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		w := f.newWithdrawal(t, 500)
		balance := f.balance(t)
		_, err := f.core.UpdateWithdrawal(ctx, w.ID, func(w *domain.Withdrawal) error {
			w.AmountInCents = 1_000_000
			return w.TransitionTo(domain.WithdrawalCancelled)
		})
		require.Error(t, err, "a cancellation may not change the amount it restores")
		assert.Equal(t, balance, f.balance(t))

		p := f.newPayment(t)
		_, err = f.core.UpdatePayment(ctx, p.ID, func(p *domain.Payment) error {
			p.Merchant.ID = uuid.Must(uuid.NewV7())
			return movePayment(domain.PaymentCompleted)(p)
		})
		require.Error(t, err, "the credit goes to the payment's merchant, whatever the closure says")
		_, err = f.core.UpdatePayment(ctx, p.ID, func(p *domain.Payment) error { p.AmountInCents = 1; return nil })
		require.Error(t, err, "a fixed payment's amount is fixed")
		_, err = f.core.UpdatePayment(ctx, p.ID, func(p *domain.Payment) error { p.Quotes[0].ExpiresAt = p.ExpiresAt; return nil })
		require.Error(t, err, "a quote's terms are fixed")

		done, err := f.core.UpdatePayment(ctx, p.ID, movePayment(domain.PaymentProcessing))
		require.NoError(t, err)
		done, err = f.core.UpdatePayment(ctx, done.ID, movePayment(domain.PaymentCompleted))
		require.NoError(t, err)
		_, err = f.core.UpdatePayment(ctx, done.ID, func(p *domain.Payment) error { *p.Receipt.TxHash = "0xforged"; return nil })
		require.Error(t, err, "a receipt is written once, even through a shared pointer")
		assert.Len(t, f.events(t, p.ID), 3, "nothing refused was announced")
	})
}
