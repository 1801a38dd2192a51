package lifecycle

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
)

// Expirer moves quotes to expired at their expiresAt and pending payments to expired at their
// expiry. It is a reconciler over the data, not a queue of timers: what is due is read from the
// rows every round, so nothing is lost across restarts, and a sweep that dies half-way is simply
// finished by the next. Several serve processes may run it: a lease lets one sweep at a time
// (saving work), and correctness never depends on the lease — each transition is checked under
// the payment's row lock by the lifecycle core, so it happens once.
type Expirer struct {
	Core     *Core
	Interval time.Duration // between sweeps
	Batch    int           // payments per query
	Log      *slog.Logger
	// Observe, when set, is told the outcome of every sweep Loop makes (metrics); a sweep cut
	// short by the end of the shutdown grace is not reported.
	Observe func(SweepResult, error)
	// Horizon, when set, gives each watched chain the block time it has been scanned to (the
	// watchers' cursors; the zero time for a chain not scanned yet). A payment expires only once
	// every chain it was quoted on is past its expiry, so a transfer mined before the expiry but
	// not yet scanned still completes it — and a chain that is down holds back only the payments
	// quoted on it, never every chain's.
	Horizon func(ctx context.Context) (map[int64]time.Time, error)
}

// ExpiryLease is the lease the expiry loop holds (the name earlier versions used, so a rolling
// upgrade still sweeps in one process at a time).
const ExpiryLease = "expiry-sweep"

// Loop is the expirer as a background loop (internal/worker, which holds its lease): a sweep
// every Interval.
func (e *Expirer) Loop() worker.Loop {
	return worker.Loop{Name: "expiry", Lease: ExpiryLease, Interval: e.Interval,
		Round: func(ctx context.Context) (bool, error) {
			res, err := e.SweepOnce(ctx)
			if e.Observe != nil && (err == nil || ctx.Err() == nil) {
				e.Observe(res, err)
			}
			return false, err
		},
		Skipped: func() {
			if e.Observe != nil {
				e.Observe(SweepResult{Skipped: true}, nil)
			}
		}}
}

// SweepResult counts what one sweep changed.
type SweepResult struct {
	PaymentsExpired, QuotesExpired int
	Skipped                        bool // another process holds the lease (the sweep did not run)
}

// SweepOnce expires everything due now, batch by batch. The caller holds the expiry lease (the
// loop's runtime), or is a test or an operator command: correctness never depends on it.
func (e *Expirer) SweepOnce(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := e.Core.Now()
	batch := max(e.Batch, 1)
	var horizon map[int64]time.Time
	if e.Horizon != nil {
		var err error
		if horizon, err = e.Horizon(ctx); err != nil {
			return res, err
		}
	}
	behind := map[int64]time.Time{} // chains not yet scanned up to now
	for id, h := range horizon {
		if h.Before(now) {
			behind[id] = h
		}
	}
	for ctx.Err() == nil {
		ids, err := e.Core.Store.Read(ctx).DuePayments(now, behind, batch)
		if err != nil {
			return res, err
		}
		quoteIDs, err := e.Core.Store.Read(ctx).PaymentsWithDueQuotes(now, batch)
		if err != nil {
			return res, err
		}
		if len(ids) == 0 && len(quoteIDs) == 0 {
			break
		}
		progressed := false
		for _, id := range append(ids, quoteIDs...) {
			p, q, err := e.expire(ctx, id, now, horizon)
			if err != nil {
				return res, err
			}
			res.PaymentsExpired += p
			res.QuotesExpired += q
			progressed = progressed || p+q > 0
		}
		if !progressed {
			break // what is left is not ours to expire (e.g. processing payments the watcher decides)
		}
	}
	if res.PaymentsExpired+res.QuotesExpired > 0 {
		e.Log.Info("expired", "payments", res.PaymentsExpired, "quotes", res.QuotesExpired)
	}
	return res, nil
}

// expire applies Expire to one payment through the core.
func (e *Expirer) expire(ctx context.Context, id uuid.UUID, now time.Time, horizon map[int64]time.Time) (payments, quotes int, err error) {
	err = e.Core.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := e.Core.UpdatePaymentTx(tx, id, func(p *domain.Payment) error {
			// Checked under the payment's lock: a transfer mined in time, recorded since the
			// payment was listed, leaves the payment to the watcher.
			timely, err := tx.HasTimelyTransfer(p.ID)
			if err != nil {
				return err
			}
			by := scannedBy(p, now, horizon)
			if timely {
				by = time.Time{}
			}
			payments, quotes = ExpireBy(p, now, by)
			return nil
		})
		return err
	})
	return payments, quotes, err
}

// scannedBy is the time up to which every chain a payment was quoted on has been scanned (now
// at most): the payment may expire by then. Chains without a watcher are not in horizon and
// cannot hold a payment back — nothing paid on them would ever be seen.
func scannedBy(p *domain.Payment, now time.Time, horizon map[int64]time.Time) time.Time {
	by := now
	for _, q := range p.Quotes {
		if h, ok := horizon[q.Token.Chain.ID]; ok && h.Before(by) {
			by = h
		}
	}
	return by
}

// Expire applies the expiry rules at now to a pending payment: its quotes past expiresAt become
// expired, and past the payment's own expiry the payment and every quote become expired. A
// processing payment is left to the chain watcher, which knows whether the amount seen is
// complete (it expires only without the full amount) and which quote was paid. It
// reports how many payments and quotes changed.
func Expire(p *domain.Payment, now time.Time) (payments, quotes int) { return ExpireBy(p, now, now) }

// ExpireBy is Expire with quotes due at now and the payment due only if its expiry is not
// after paymentsBy (the chains' scan horizon).
func ExpireBy(p *domain.Payment, now, paymentsBy time.Time) (payments, quotes int) {
	if p.Status != domain.PaymentPending {
		return 0, 0
	}
	paymentDue := !paymentsBy.Before(p.ExpiresAt)
	for i := range p.Quotes {
		q := &p.Quotes[i]
		if q.Status == domain.QuoteActive && (paymentDue || !now.Before(q.ExpiresAt)) && q.TransitionTo(domain.QuoteExpired) == nil {
			quotes++
		}
	}
	if paymentDue && p.TransitionTo(domain.PaymentExpired) == nil {
		payments++
	}
	return payments, quotes
}
