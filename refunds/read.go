package refunds

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

// ListInput filters a page of the merchant's refunds.
type ListInput struct {
	PaymentID        *uuid.UUID
	Status           domain.RefundStatus
	AwaitingApproval *bool
	Limit, Offset    int32
}

// List returns a page of the merchant's refunds of its mode, newest first.
func (s *Service) List(ctx context.Context, m domain.Merchant, in ListInput) ([]domain.Refund, domain.Page, error) {
	rs, total, err := s.Store.Read(ctx).ListRefunds(store.RefundFilter{MerchantID: m.ID, Mode: m.Mode.Norm(), PaymentID: in.PaymentID,
		Status: in.Status, AwaitingApproval: in.AwaitingApproval, Limit: in.Limit, Offset: in.Offset}, s.Catalog)
	return rs, domain.Page{Limit: in.Limit, Offset: in.Offset, Total: total}, err
}

// Get reads one of the merchant's refunds; unknown, malformed and foreign ids are ErrRefundNotFound.
func (s *Service) Get(ctx context.Context, m domain.Merchant, id string) (domain.Refund, error) {
	rid, err := uuid.Parse(id)
	if err != nil {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	r, err := s.Store.Read(ctx).GetRefund(m.ID, m.Mode.Norm(), rid, s.Catalog)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	return r, err
}

// ClaimURL is a refund's claim link while it awaits its address (nil otherwise, and without a
// claim key).
func (s *Service) ClaimURL(r domain.Refund) *string { return s.Claims.URL(r) }

// ClaimLink is a refund's claim link whatever its state (the checkout page hands it to the
// customer who asked for the excess back: the claim page shows a claimed refund's state).
func (s *Service) ClaimLink(id uuid.UUID) string { return s.Claims.link(id) }
