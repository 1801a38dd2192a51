package lifecycle

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// CreditTransferTx credits, on its own, a confirmed transfer that its payment's settlement did
// not count — it arrived after the payment was final, after its expiry, or in a token the
// payment was not settled in — and announces it as payment.late_transfer. The payment keeps
// its state; its version is bumped so the event has its place in the payment's sequence. The
// ledger's unique (kind, transfer) index makes a second credit of one transfer impossible.
func (c *Core) CreditTransferTx(tx *store.Tx, paymentID, transferID uuid.UUID, cents int64, note TransferNote) (domain.Payment, error) {
	if cents < 0 {
		return domain.Payment{}, fmt.Errorf("lifecycle: transfer %s: a credit is never negative (%d)", transferID, cents)
	}
	p, err := tx.LockPayment(paymentID, c.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Payment{}, domain.ErrPaymentNotFound
	}
	if err != nil {
		return domain.Payment{}, err
	}
	if !p.Status.Terminal() {
		// An open payment may still count the transfer in its settlement.
		return domain.Payment{}, fmt.Errorf("lifecycle: payment %s is %s: its transfers are settled with it", p.ID, p.Status)
	}
	now := c.Now()
	// Booked in the mode of the chain the money moved on, whatever the payment's: real money
	// sent to a test payment's address is live money, devnet money sent to a live payment's
	// address is test money.
	mode := domain.ModeTest
	if tok, ok := c.Catalog.Tokens[note.TokenID]; ok {
		mode = domain.ChainMode(tok.Chain)
	}
	if err := tx.AppendTransferCredit(p.Merchant.ID, mode, transferID, cents, now); err != nil {
		return domain.Payment{}, err
	}
	if err := tx.MarkCredited([]uuid.UUID{transferID}, now); err != nil {
		return domain.Payment{}, err
	}
	if err := tx.TouchPayment(p.ID, p.Version, now); err != nil {
		return domain.Payment{}, err
	}
	p.Version, p.UpdatedAt = p.Version+1, now
	note.CreditCents = cents
	note.Livemode = mode.Live()
	e := c.paymentEvent(domain.EventPaymentLateTransfer, "", p)
	// Announced to the endpoints of the money's mode, not the payment's: faucet tokens sent to a
	// live payment's address (one address is valid on every EVM chain) are test money, and the
	// endpoint that ships live orders never hears of them as a credit.
	e.Mode = mode
	if e.Payload, err = withTransfer(e.Payload, note); err != nil {
		return domain.Payment{}, err
	}
	return p, c.emit(tx, e)
}
