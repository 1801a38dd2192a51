package app

import (
	"crypto/rand"
	"time"

	"github.com/paymentsd/paymentsd/internal/worker"
	"github.com/paymentsd/paymentsd/recipients"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/settlement"
)

// wireRefunds builds the refunds service: its claim links are keyed by the secrets key (a key of
// this process's own without one, so links break at a restart: serve refuses PostgreSQL without
// PAYMENTS_SECRETS_KEY), events render refunds with their claim link, and the checkout page
// offers an overpaid payment's excess back. Its payout policy is wired where the policy is built
// (nil: none).
func (a *App) wireRefunds() error {
	key, err := a.secretsKey()
	if err != nil {
		return err
	}
	if key == nil {
		a.Log.Warn("no PAYMENTS_SECRETS_KEY: refund claim links are signed with a key of this process's own and stop working when it restarts")
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
	}
	a.Refunds = &refunds.Service{Store: a.Store, Core: a.Core, Catalog: a.Catalog, Prices: a.Payments.Prices,
		Recipients: recipients.Checker{Catalog: a.Catalog, Controlled: a.Withdrawals.Controlled},
		Claims:     refunds.NewClaims(key, a.Cfg.PublicBaseURL), Now: Now}
	if a.Policy != nil { // the payout policy applies to refunds as to withdrawals (never a typed nil)
		a.Refunds.Policy = a.Policy
	}
	a.Checkout.Overpayments = a.Refunds
	a.Core.Render = a.eventObjects(a.Cfg.ResponseShape)
	return nil
}

// eventObjects renders events' objects in shape. A refund's claim link is never in an event: it
// lets its holder direct the refund, and a webhook endpoint is set up by anyone with
// developers:write (who may not move money), so claimUrl is null in webhook bodies; the merchant's
// backend has it from the create answer, or reads it with its secret key.
func (a *App) eventObjects(shape settlement.Shape) eventObjects {
	return eventObjects{settlement.Objects{Shape: shape}}
}

// RefundLoops is the loop that cancels unclaimed refunds at their claim's expiry.
func (a *App) RefundLoops() []worker.Loop {
	interval := a.Cfg.ExpiryInterval
	if interval <= 0 {
		interval = time.Minute
	}
	return []worker.Loop{a.Refunds.ExpiryLoop(interval, a.Log.With("component", "refunds"))}
}
