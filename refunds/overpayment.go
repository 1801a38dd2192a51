package refunds

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/store"
)

// The checkout page offers a customer who paid more than was due the excess back, when the
// merchant's payout settings say so: a refund of exactly the excess units, waiting for the
// customer's claim like any refund without an address.

// Offer is what the checkout view shows of a payment's excess (nil: nothing to offer — not
// overpaid, worth less than a cent, or not offered by the merchant).
func (s *Service) Offer(ctx context.Context, p domain.Payment) (*domain.OverpaymentOffer, error) {
	units := excess(p)
	if !units.IsPositive() {
		return nil, nil
	}
	rd := s.Store.Read(ctx)
	on, err := s.offered(rd, p.Merchant.ID, p.Mode)
	if err != nil || !on {
		return nil, err
	}
	if cents, err := money.ValueCents(units, p.Receipt.Token.Decimals, settledRate(p)); err != nil || cents < 1 {
		return nil, nil // an excess worth less than a cent (or that cannot be valued) is not offered
	}
	offer := &domain.OverpaymentOffer{ExcessAsset: units, Token: p.Receipt.Token}
	id, err := rd.LiveOverpaymentRefund(p.ID, units)
	switch {
	case err == nil:
		offer.RefundID = &id
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return offer, nil
}

// offered reads whether the merchant offers overpaid amounts back in the payment's mode.
func (s *Service) offered(tx *store.Tx, merchantID uuid.UUID, mode domain.Mode) (bool, error) {
	if s.Policy == nil {
		return domain.DefaultPayoutSettings(merchantID, mode).OfferOverpaymentRefund, nil
	}
	settings, err := s.Policy.Settings(tx, merchantID, mode)
	return settings.OfferOverpaymentRefund, err
}

// ClaimOverpayment creates, once per payment, the refund of its excess for the customer to
// claim, and answers it; asking again answers the same refund while it lives (a cancelled or
// failed one gave the money back, and the customer may ask again), as it answers the merchant's
// live refund of exactly the excess (store.LiveOverpaymentRefund): never the excess twice.
func (s *Service) ClaimOverpayment(ctx context.Context, p domain.Payment) (domain.Refund, error) {
	notOffered := domain.Refuse(domain.CodePaymentNotRefundable, "paymentId", "this payment has no overpaid amount the merchant offers back")
	units := excess(p)
	if !units.IsPositive() {
		return domain.Refund{}, notOffered
	}
	m := p.Merchant
	m.Mode = p.Mode.Norm()
	amountAsset := units.String()
	amt, err := s.amount(ctx, p, CreateInput{AmountAsset: &amountAsset})
	var invalid *domain.InvalidInputError
	if errors.As(err, &invalid) {
		return domain.Refund{}, notOffered // worth less than a cent
	}
	if err != nil {
		return domain.Refund{}, err
	}
	reason := "overpaid"
	var out domain.Refund
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		on, err := s.offered(tx, m.ID, m.Mode)
		if err != nil {
			return err
		}
		if !on {
			return notOffered
		}
		// Under the payment's lock (taken as create takes it: the balance's first) two claims at
		// once make one refund: the second finds the first here. The unique index is the last line.
		if err := tx.LockBalance(m.ID, m.Mode); err != nil {
			return err
		}
		if _, err := tx.LockPayment(p.ID, s.Catalog); err != nil {
			return err
		}
		if id, err := tx.LiveOverpaymentRefund(p.ID, units); err == nil {
			out, err = tx.RefundByID(id, s.Catalog)
			return err
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		out, err = s.create(ctx, tx, m, p.ID, amt, draft{reason: &reason, overpayment: true})
		return err
	})
	return out, err
}
