package refunds

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/audit"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/store"
)

// ClaimExpiryLease is the lease of the loop that cancels unclaimed refunds.
const ClaimExpiryLease = "refund-claim-expiry"

// ExpiryLoop cancels, every interval, the refunds still awaiting their address past the claim's
// expiry: the balance is restored (the lifecycle core's reversal) and refund.cancelled sent. Like
// the payment expiry it reads what is due from the rows each round, so nothing is lost across
// restarts; the lease saves work, and each cancellation is checked under the refund's lock.
func (s *Service) ExpiryLoop(interval time.Duration, log *slog.Logger) worker.Loop {
	return worker.Loop{Name: "refund-claim-expiry", Lease: ClaimExpiryLease, Interval: interval,
		Round: func(ctx context.Context) (bool, error) {
			n, err := s.ExpireClaims(ctx)
			if n > 0 {
				log.Info("unclaimed refunds cancelled", "refunds", n)
			}
			return false, err
		}}
}

// ExpireClaims cancels every refund whose claim expired by now and says how many.
func (s *Service) ExpireClaims(ctx context.Context) (int, error) {
	ctx = audit.WithActor(ctx, audit.System)
	done := 0
	for ctx.Err() == nil {
		now := s.Now()
		ids, err := s.Store.Read(ctx).DueRefundClaims(now, 100)
		if err != nil || len(ids) == 0 {
			return done, err
		}
		for _, id := range ids {
			err := s.Store.InTx(ctx, func(tx *store.Tx) error {
				r, err := s.Core.UpdateRefundTx(tx, id, func(r *domain.Refund) error {
					if r.Status != domain.RefundAwaitingAddress || r.ClaimExpiresAt == nil || now.Before(*r.ClaimExpiresAt) {
						return errNotDue // claimed or cancelled since it was listed
					}
					return r.TransitionTo(domain.RefundCancelled)
				})
				if err != nil {
					return err
				}
				return audit.Append(ctx, tx, audit.Event{MerchantID: r.MerchantID, Action: audit.RefundCancelled, TargetType: audit.TargetRefund,
					TargetID: r.ID.String(), Details: map[string]any{"mode": string(r.Mode), "amountInCents": r.AmountInCents, "reason": "claim expired"}})
			})
			switch {
			case errors.Is(err, errNotDue):
			case err != nil:
				return done, err
			default:
				done++
			}
		}
		if len(ids) < 100 {
			return done, nil
		}
	}
	return done, ctx.Err()
}

var errNotDue = errors.New("refunds: not due")
